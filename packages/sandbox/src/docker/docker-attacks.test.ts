// The OS sandbox's attack suites through the Docker backend, over the same fixture bound from the
// host: the policy code in the container must protect the host's workspace as the local sandbox
// does. First the local suites' own cases (os/test-support/*-attacks.ts) over a Docker-backed
// fixture, one container per suite and mode, with the cases that cannot apply in a container
// skipped, saying why; then the Docker-only cases over the same fixture: renames by mv where the
// local cases use python3 (not in the image), setuid bits by chmod, kernel settings, and the file
// route. For a provider as root and with a non-root provider user. Skips, saying why, where no
// engine answers.
import { execFileSync } from "node:child_process";
import path from "node:path";
import { expect } from "vitest";
import { filesystemAttacks } from "../os/test-support/filesystem-attacks.js";
import { attempt, verdicts } from "../os/test-support/fixture.js";
import { gitAttacks } from "../os/test-support/git-attacks.js";
import { networkAttacks } from "../os/test-support/network-attacks.js";
import { processAttacks } from "../os/test-support/process-attacks.js";
import type { AttackTest } from "../os/test-support/suite.js";
import { type DockerAttackFixture, describeDockerAttacks } from "./test-support/attack-fixture.js";
import { dockerSkipReason, placeholdersGone } from "./test-support/docker-engine.js";

const skipReason = dockerSkipReason();
const asRoot = process.getuid?.() === 0;
const variants: { label: string; user?: string }[] = asRoot
  ? [
      { label: "provider as root" },
      { label: "non-root provider user 1000:1000", user: "1000:1000" },
    ]
  : [{ label: `provider as uid ${process.getuid?.()}` }];

const NO_PYTHON = "python3 is not in the image";
const HOST_ENVIRONMENT = "it runs with a host environment, which the container's server never sees";

/** The local cases that cannot apply over Docker, and why. */
const SKIPS = {
  filesystem: {
    "cannot make a setuid or setgid file or folder, which outside the sandbox would run as the caller (or root)":
      "python3 and install are not in the image; the Docker-only case below sets the bits by chmod and mkdir",
    "refuses each system call that sets a setuid or setgid bit, and openat2 and io_uring":
      NO_PYTHON,
    "still changes ordinary modes: 755, 644, +x, a folder's, install -m 755, sticky":
      "install is not in the image; the Docker-only case below changes the other modes",
    "cannot remount the host read-write, unmount a protection or mount over it":
      "mount and umount are not in the image",
    "cannot write kernel settings, /sys or device nodes":
      "mknod is not in the image; the Docker-only case below writes kernel settings",
    "does not run a fake bwrap from PATH or from the workspace": HOST_ENVIRONMENT,
  },
  git: {
    "cannot rename .git away and plant a new one": `${NO_PYTHON}; the Docker-only case below renames by mv`,
    "cannot write a nested repository's .git, rename it, or rename its parent folders": `${NO_PYTHON}; the Docker-only case below renames by mv`,
    "protects on the next call a nested .git made between calls (changes made just now)":
      "it passes a wrapper with a host-facts cache of its own (and python3 is not in the image); the Docker-only case below makes one between calls",
    "protects on the next call a nested .git made between calls (changes made long enough ago that only the stamps tell)":
      "it passes a wrapper with a host-facts cache of its own (and python3 is not in the image); the Docker-only case below makes one between calls",
    "protects the hooks folder named where git finds it: an included file, the user's git config": `${HOST_ENVIRONMENT} (HOME), and it writes through a local sandbox client`,
    "refuses a workspace past the folder limit rather than protecting it in part":
      "it passes a wrapper limited to 300 folders; the container's server scans up to 200,000",
  },
  network: {
    "reaches that same server when the policy allows the network (control)":
      "a container's loopback is its own: the host's 127.0.0.1 is out of its reach even with the network, by design",
    "has no network interface but loopback and cannot resolve names": "getent is not in the image",
    "cannot connect to an abstract Unix socket of the host": `${NO_PYTHON} (and the container has a network namespace of its own, so the host's abstract sockets are out of reach by design)`,
    "reaches that abstract socket when the policy allows the network (control, and a known limit)": `${NO_PYTHON}, and the host's abstract sockets are out of a container's reach even with the network, by design`,
    "cannot reach a Unix socket in the host's /tmp, nor anything under /run": NO_PYTHON,
    "cannot reach the agent socket named by SSH_AUTH_SOCK, and does not inherit the variable": `${HOST_ENVIRONMENT} (SSH_AUTH_SOCK), and ${NO_PYTHON}`,
    "cannot reach a host process's Unix socket inside the workspace": NO_PYTHON,
  },
  process: {
    "inherits only allow-listed host variables, and a caller's LD_PRELOAD never reaches the launcher": `${HOST_ENVIRONMENT}, and it asks a local wrapper for its invocation`,
    "cannot see or signal host processes":
      "ps is not in the image (and host processes are outside a container's pid namespace, by design)",
    "leaves no process behind, not even one started with setsid, nohup or a double fork":
      "ps and nohup are not in the image",
    "cannot create nested user namespaces": "unshare and python3 are not in the image",
    "cannot push characters into the caller's terminal with TIOCSTI":
      "it runs a local wrapper's invocation on a host pseudo-terminal, not through a container",
  },
} as const;

for (const variant of variants) {
  for (const [title, cases, skip] of [
    ["file system attacks", filesystemAttacks, SKIPS.filesystem],
    ["git attacks", gitAttacks, SKIPS.git],
    ["network and socket attacks", networkAttacks, SKIPS.network],
    ["process and environment attacks", processAttacks, SKIPS.process],
  ] as const) {
    describeDockerAttacks(`${title} through the Docker backend, ${variant.label}`, cases, {
      skipReason,
      skip,
      ...(variant.user === undefined ? {} : { user: variant.user }),
    });
  }
}

const GIT = ["-c", "safe.directory=*", "-c", "user.name=x", "-c", "user.email=x@x"];

/** Files and folders with a setuid or setgid bit under `root`, as the host sees them. */
function setuidFiles(root: string): string {
  return execFileSync("find", [root, "-perm", "/6000"], { encoding: "utf8" });
}

/**
 * What only Docker runs: the local cases' renames by mv (they rename with python3, not in the
 * image), setuid bits and modes by chmod and mkdir alone (no python3 or install), kernel settings
 * (no mknod), and the file route of the container's server.
 */
const dockerOnlyAttacks = (fixture: DockerAttackFixture, it: AttackTest) => {
  it("cannot rename .git away and plant a new one (by mv)", async () => {
    const before = await fixture.state();
    const { stdout } = await fixture.run(
      [
        attempt("mv .git .git-old"),
        attempt("rm -rf .git"),
        attempt("mkdir -p .git/hooks && echo evil > .git/hooks/pre-commit"),
        attempt("git init -q ."),
      ].join("\n"),
    );
    expect(verdicts(stdout)).toEqual(Array(4).fill("BLOCKED"));
    expect(await fixture.state()).toEqual(before);
  });

  it("cannot write a nested repository's .git, rename it, or rename its parent folders (by mv)", async () => {
    const before = await fixture.state();
    const { stdout } = await fixture.run(
      [
        attempt("echo evil > vendor/lib/.git/hooks/post-checkout"),
        attempt("git -C vendor/lib config core.fsmonitor 'touch /tmp/pwned; false'"),
        attempt("mv vendor/lib/.git vendor/lib/git-old"),
        attempt("mv vendor/lib vendor/lib-old"),
        attempt("mv vendor vendor-old"),
        attempt("rm -rf vendor/lib/.git"),
      ].join("\n"),
    );
    expect(verdicts(stdout)).toEqual(Array(6).fill("BLOCKED"));
    expect(await fixture.state()).toEqual(before);
  });

  it("protects on the next call a nested .git made between calls (by mv)", async () => {
    const first = await fixture.run(
      "git init -q made/by/command && echo ok > made/by/command/.git/info/note && echo made",
    );
    expect(first.stdout).toBe("made\n");
    execFileSync("git", [...GIT, "init", "-q", path.join(fixture.root, "src", "by-host")]);
    const before = await fixture.state();
    const { stdout } = await fixture.run(
      [
        attempt("echo evil > made/by/command/.git/hooks/post-checkout"),
        attempt("git -C made/by/command config core.fsmonitor 'touch /tmp/pwned; false'"),
        attempt("mv made/by made/by-old"),
        attempt("echo evil > src/by-host/.git/hooks/pre-commit"),
        attempt("rm -rf src/by-host/.git"),
        attempt("mv src src-old"),
      ].join("\n"),
    );
    expect(verdicts(stdout)).toEqual(Array(6).fill("BLOCKED"));
    expect(await fixture.state()).toEqual(before);
  });

  it("cannot make a setuid or setgid file or folder by chmod or mkdir", async () => {
    const { stdout } = await fixture.run(
      [
        attempt("cp /bin/bash rootsh && chmod 4755 rootsh"),
        attempt("cp /bin/bash groupsh && chmod g+s groupsh"),
        attempt("cp /bin/bash usersh && chmod u+s,g+s usersh"),
        attempt("mkdir folder && chmod u+s folder"),
        attempt("mkdir group-folder && chmod g+s group-folder"),
        attempt("mkdir -m 2755 made-folder"),
      ].join("\n"),
    );
    expect(verdicts(stdout)).toEqual(Array(6).fill("BLOCKED"));
    expect(setuidFiles(fixture.root)).toBe("");
  });

  it("still changes ordinary modes: 755, 644, +x, a folder's, sticky", async () => {
    const { stdout, exitCode } = await fixture.run(
      [
        "umask 022",
        "touch plain && chmod 755 plain && stat -c %a plain",
        "chmod 644 plain && stat -c %a plain",
        "chmod +x plain && stat -c %a plain",
        "chmod u-s,g-s plain && stat -c %a plain",
        "mkdir folder && chmod 700 folder && stat -c %a folder",
        "chmod +t folder && stat -c %a folder",
      ].join(" && "),
    );
    expect(stdout).toBe("755\n644\n755\n755\n700\n1700\n");
    expect(exitCode).toBe(0);
  });

  it("cannot escape through a link to /etc, nor write kernel settings", async () => {
    const before = await fixture.state();
    const { stdout } = await fixture.run(
      [
        attempt("ln -s /etc made-etc && echo x > made-etc/pleach-attack"),
        "rm -f made-etc",
        // Rewrites the current value, so even a failed defence changes nothing.
        attempt("cat /proc/sys/vm/swappiness > /proc/sys/vm/swappiness"),
        attempt("cat /proc/sys/kernel/core_pattern > /proc/sys/kernel/core_pattern"),
        attempt("cat /proc/sys/kernel/hostname > /proc/sys/kernel/hostname"),
      ].join("\n"),
    );
    expect(verdicts(stdout)).toEqual(Array(4).fill("BLOCKED"));
    expect(await fixture.state()).toEqual(before);
  });

  it("the file route refuses the same paths", async () => {
    const before = await fixture.state();
    const { client } = await fixture.session();
    for (const [file, code] of [
      [".git/hooks/pre-commit", "PROTECTED_PATH"],
      ["vendor/lib/.git/config", "PROTECTED_PATH"],
      [".vscode/tasks.json", "PROTECTED_PATH"],
      [".envrc", "PROTECTED_PATH"],
      ["escape/new.txt", "PATH_ESCAPE"],
    ] as const) {
      await expect(client.writeFile(file, "evil")).rejects.toMatchObject({ code });
    }
    await placeholdersGone(fixture.root);
    expect(await fixture.state()).toEqual(before);
  });
};

for (const variant of variants) {
  describeDockerAttacks(
    `Docker-only attacks through the Docker backend, ${variant.label}`,
    dockerOnlyAttacks,
    { skipReason, ...(variant.user === undefined ? {} : { user: variant.user }) },
  );
}
