// The OS sandbox's attack suites through the Docker backend, over the same fixture bound from the
// host: the policy code in the container must protect the host's workspace as the local sandbox
// does. First the local suites' own cases (os/test-support/*-attacks.ts) over a Docker-backed
// fixture, one container per suite and mode, with the cases that cannot apply in a container
// skipped, saying why; then the Docker-only cases over the same fixture: a nested repository
// made between calls, and the file route. For a provider as root and with a non-root provider user. Skips, saying why, where no
// engine answers.
import { execFileSync } from "node:child_process";
import path from "node:path";
import { expect } from "vitest";
import { filesystemAttacks } from "../os/test-support/filesystem-attacks.js";
import { attempt, verdicts } from "../os/test-support/fixture.js";
import { gitAttacks } from "../os/test-support/git-attacks.js";
import { gitRuleAttacks } from "../os/test-support/git-rule-attacks.js";
import { networkAttacks } from "../os/test-support/network-attacks.js";
import { processAttacks } from "../os/test-support/process-attacks.js";
import type { AttackTest } from "../os/test-support/suite.js";
import { type DockerAttackFixture, describeDockerAttacks } from "./test-support/attack-fixture.js";
import { dockerSkipReason } from "./test-support/docker-engine.js";

const skipReason = dockerSkipReason();
const asRoot = process.getuid?.() === 0;
const variants: { label: string; user?: string }[] = asRoot
  ? [
      { label: "provider as root" },
      { label: "non-root provider user 1000:1000", user: "1000:1000" },
    ]
  : [{ label: `provider as uid ${process.getuid?.()}` }];

const HOST_ENVIRONMENT = "it runs with a host environment, which the container's server never sees";

/** The local cases that cannot apply over Docker, and why. */
const SKIPS = {
  filesystem: {
    "does not run a fake bwrap from PATH or from the workspace": HOST_ENVIRONMENT,
    "cannot read the credential stores of the user's home, also through a link, in either confined mode": `${HOST_ENVIRONMENT} (HOME); the container's own home gets the same default policy`,
  },
  git: {
    "protects on the next call a nested .git made between calls (changes made just now)":
      "it passes a wrapper with a host-facts cache of its own; the Docker-only case below makes one between calls",
    "protects on the next call a nested .git made between calls (changes made long enough ago that only the stamps tell)":
      "it passes a wrapper with a host-facts cache of its own; the Docker-only case below makes one between calls",
    "protects the hooks folder named where git finds it: an included file, the user's git config": `${HOST_ENVIRONMENT} (HOME), and it writes through a local sandbox client`,
    "refuses a workspace past the folder limit rather than protecting it in part":
      "it passes a wrapper limited to 300 folders; the container's server scans up to 200,000",
  },
  network: {
    "cannot reach the agent socket named by SSH_AUTH_SOCK, and does not inherit the variable": `${HOST_ENVIRONMENT} (SSH_AUTH_SOCK)`,
  },
  process: {
    "inherits only allow-listed host variables, and a caller's LD_PRELOAD never reaches the launcher": `${HOST_ENVIRONMENT}, and it asks a local wrapper for its invocation`,
    "cannot see or signal host processes":
      "host processes are outside a container's pid namespace, by design, so the case's host process cannot be started where the command could see it",
    "cannot push characters into the caller's terminal with TIOCSTI":
      "it runs a local wrapper's invocation on a host pseudo-terminal, not through a container",
  },
} as const;

for (const variant of variants) {
  for (const [title, cases, skip] of [
    ["file system attacks", filesystemAttacks, SKIPS.filesystem],
    ["git attacks", gitAttacks, SKIPS.git],
    ["git repositories by git's own rules", gitRuleAttacks, {}],
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

/**
 * What only Docker runs: a nested repository made between calls (the local cases pass a wrapper of
 * their own, which the container's server does not take), and the file route of its server.
 */
const dockerOnlyAttacks = (fixture: DockerAttackFixture, it: AttackTest) => {
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
