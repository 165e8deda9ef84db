// Git repositories by git's own rules: a bare layout under any name, the links inside a gitdir,
// a repository one command plants, and the file route's write that would make one. Shared by the
// local suites (attacks-git-rules.test.ts) and the Docker backend's (docker-attacks.test.ts).
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readFile, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { expect } from "vitest";
import { MADE_BY_COMMAND } from "../../made-by-commands/moved-aside.js";
import { attempt, takeMovedAside, verdicts } from "./fixture.js";
import type { AttackCases } from "./suite.js";

/** Run host git as a user would, quietly; whether it succeeds does not matter here. */
export function hostGit(cwd: string, ...args: string[]): void {
  try {
    execFileSync(
      "git",
      ["-c", "user.name=host", "-c", "user.email=host@example.invalid", ...args],
      { cwd, stdio: "ignore", env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1" } },
    );
  } catch {
    // A failing git is fine: what matters is whether it ran the payload.
  }
}

/** A payload that leaves `marker` behind when something on the host runs it. */
export const payload = (marker: string) => `touch ${marker}; false`;

export const gitRuleAttacks: AttackCases = (fixture, it) => {
  it("protects a folder git takes for a git directory by its layout (HEAD, objects/, refs/), whatever its name", async () => {
    // A bare repository named like any folder: git in it, or in a work tree it names, reads its
    // config and runs its hooks.
    execFileSync("git", ["init", "-q", "--bare", path.join(fixture.root, "src", "store")]);
    const before = await fixture.state();
    const marker = path.join(fixture.outside, "ran");
    const { stdout } = await fixture.run(
      [
        attempt(`printf '[core]\\n\\tfsmonitor = "${payload(marker)}"\\n' >> src/store/config`),
        attempt("echo evil > src/store/hooks/pre-commit"),
        attempt("mv src/store src/store-old"),
        attempt("rm src/store/HEAD"),
      ].join("\n"),
    );
    expect(verdicts(stdout)).toEqual(Array(4).fill("BLOCKED"));
    expect(await fixture.state()).toEqual(before);
    const client = await fixture.client();
    await expect(client.writeFile("src/store/config", "[core]\n")).rejects.toMatchObject({
      code: "PROTECTED_PATH",
      message: expect.stringContaining("git directory"),
    });
  });

  it("makes inert a folder one command turned into a git directory (core.worktree = .., core.fsmonitor)", async () => {
    const marker = path.join(fixture.outside, "ran");
    const client = await fixture.client();
    const result = await client.exec(
      [
        "git init -q --bare /tmp/template",
        "cp -r /tmp/template/HEAD /tmp/template/objects /tmp/template/refs src/",
        `printf '[core]\\n\\tbare = false\\n\\tworktree = ..\\n\\tfsmonitor = "${payload(marker)}"\\n' > src/config`,
        "echo planted",
      ].join(" && "),
    );
    expect(result.stdout).toBe("planted\n");
    expect(result.sandboxNotes?.join("\n")).toContain(
      "src is a git repository a sandboxed command made",
    );
    // The user's `git status` in src/ (or a prompt that runs it) runs nothing of the command's.
    hostGit(path.join(fixture.root, "src"), "status");
    expect(existsSync(marker)).toBe(false);
    // Only its HEAD moved: git no longer takes src/ for a git directory, and the user's files stay.
    expect(await readFile(path.join(fixture.root, "src", "HEAD.made-by-command"), "utf8")).toMatch(
      /^ref: refs\/heads\//,
    );
    expect(await readFile(path.join(fixture.root, "src", "app.txt"), "utf8")).toBe("hello\n");
    // The file tools cannot put a HEAD back either.
    await expect(client.writeFile("src/HEAD", "ref: refs/heads/main\n")).rejects.toMatchObject({
      code: "PROTECTED_PATH",
    });
  });

  it("makes inert a repository planted in one command (git init, core.fsmonitor, a hook) and keeps it usable", async () => {
    const marker = path.join(fixture.outside, "ran");
    const lib = path.join(fixture.root, "vendor", "lib");
    const before = await fixture.state([]);
    const client = await fixture.client();
    const result = await client.exec(
      [
        "git init -q vendor/new",
        "git -C vendor/new remote add origin https://example.invalid/new.git",
        `printf '[core]\\n\\tfsmonitor = "${payload(marker)}"\\n[alias]\\n\\tst = "!${payload(marker)}"\\n' >> vendor/new/.git/config`,
        `printf '#!/bin/sh\\n${payload(marker)}\\n' > vendor/new/.git/hooks/pre-commit`,
        "chmod +x vendor/new/.git/hooks/pre-commit",
        "echo x > vendor/new/file.txt",
        "git -C vendor/new add file.txt",
        "echo planted",
      ].join(" && "),
    );
    expect(result.stdout).toBe("planted\n");
    expect(result.sandboxNotes?.join("\n")).toContain(
      "vendor/new/.git is a git repository a sandboxed command made",
    );
    const repository = path.join(fixture.root, "vendor", "new");
    for (const args of [["status"], ["st"], ["commit", "-q", "-m", "host commit"]]) {
      hostGit(repository, ...args);
    }
    expect(existsSync(marker)).toBe(false);
    // What runs nothing is kept: the remote, and the repository works for host and model alike.
    const url = execFileSync("git", ["-C", repository, "remote", "get-url", "origin"], {
      encoding: "utf8",
    });
    expect(url.trim()).toBe("https://example.invalid/new.git");
    const status = await client.exec("git -C vendor/new status --short");
    expect(status.exitCode).toBe(0);
    // The repositories that were there before the call are untouched.
    const after = await fixture.state([]);
    for (const [key, value] of Object.entries(before)) {
      if (key.includes(path.join(lib, ".git")) || key.includes(path.join(fixture.root, ".git"))) {
        expect(after[key]).toEqual(value);
      }
    }
  });

  it("refuses the file tool's write that would turn a folder into a git directory", async () => {
    const marker = path.join(fixture.outside, "ran");
    const client = await fixture.client();
    // Each write alone is harmless; the one that adds HEAD would make src/ a repository whose
    // config an earlier write planted.
    await client.writeFile(
      "src/config",
      `[core]\n\tbare = false\n\tworktree = ..\n\tfsmonitor = "${payload(marker)}"\n`,
    );
    await client.writeFile("src/objects/info/packs", "");
    await client.writeFile("src/refs/heads/.keep", "");
    await expect(client.writeFile("src/HEAD", "ref: refs/heads/main\n")).rejects.toMatchObject({
      code: "PROTECTED_PATH",
      message: expect.stringContaining("it would make src a git directory"),
    });
    hostGit(path.join(fixture.root, "src"), "status");
    expect(existsSync(marker)).toBe(false);
  });

  it("protects where the links of a gitdir lead (the layout of repo and git-new-workdir)", async () => {
    // proj/.git's config and hooks are links into a shared folder that is no repository itself.
    const shared = path.join(fixture.root, ".repo", "shared");
    await mkdir(path.join(shared, "hooks"), { recursive: true });
    const project = path.join(fixture.root, "proj");
    execFileSync("git", ["init", "-q", project]);
    const gitdir = path.join(project, ".git");
    execFileSync("mv", [path.join(gitdir, "config"), path.join(shared, "config")]);
    execFileSync("rm", ["-rf", path.join(gitdir, "hooks")]);
    await symlink("../../.repo/shared/config", path.join(gitdir, "config"));
    await symlink("../../.repo/shared/hooks", path.join(gitdir, "hooks"));
    const marker = path.join(fixture.outside, "ran");
    const before = await fixture.state();
    const refusesTheFileRoute = async () => {
      const client = await fixture.client();
      await expect(client.writeFile(".repo/shared/config", "[core]\n")).rejects.toMatchObject({
        code: "PROTECTED_PATH",
        message: expect.stringContaining("proj/.git/config"),
      });
    };
    // With git writes too proj/.git stays protected whole: what git runs programs through is a
    // link there, which a command could replace at a protected path.
    const { stdout } = await fixture.run(
      [
        attempt(`printf '[core]\\n\\tfsmonitor = "${payload(marker)}"\\n' >> .repo/shared/config`),
        attempt(`printf '#!/bin/sh\\n${payload(marker)}\\n' > .repo/shared/hooks/pre-commit`),
        attempt("mv .repo/shared .repo/old"),
      ].join("\n"),
    );
    expect(verdicts(stdout)).toEqual(Array(3).fill("BLOCKED"));
    expect(await fixture.state()).toEqual(before);
    await refusesTheFileRoute();
    hostGit(project, "status");
    expect(existsSync(marker)).toBe(false);
  });

  it("protects a tracked script a hook links to, and where a dangling hook link leads", async () => {
    await mkdir(path.join(fixture.root, "scripts"));
    await writeFile(path.join(fixture.root, "scripts", "pre-commit.sh"), "#!/bin/sh\nexit 0\n", {
      mode: 0o755,
    });
    const hooks = path.join(fixture.root, ".git", "hooks");
    await symlink("../../scripts/pre-commit.sh", path.join(hooks, "pre-commit"));
    await symlink("../../scripts/post-commit.sh", path.join(hooks, "post-commit"));
    const marker = path.join(fixture.outside, "ran");
    const before = await fixture.state();
    const { stdout } = await fixture.run(
      [
        attempt(`printf '${payload(marker)}\\n' >> scripts/pre-commit.sh`),
        `printf '#!/bin/sh\\n${payload(marker)}\\n' > scripts/post-commit.sh; chmod +x scripts/post-commit.sh`,
        attempt("mv scripts scripts-old"),
      ].join("\n"),
    );
    expect(verdicts(stdout)).toEqual(Array(2).fill("BLOCKED"));
    // Where the dangling link leads was missing: what the command made there is moved aside.
    expect(await takeMovedAside(fixture.root)).toEqual([
      `scripts/post-commit.sh${MADE_BY_COMMAND}`,
    ]);
    expect(await fixture.state()).toEqual(before);
    const client = await fixture.client();
    await expect(client.writeFile("scripts/pre-commit.sh", "evil\n")).rejects.toMatchObject({
      code: "PROTECTED_PATH",
      message: expect.stringContaining(".git/hooks/pre-commit"),
    });
    hostGit(fixture.root, "commit", "-q", "--allow-empty", "-m", "host");
    expect(existsSync(marker)).toBe(false);
  });
};
