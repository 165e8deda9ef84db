import { mkdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { useTempDir } from "@pleach/core/testing";
import { describe, expect, it } from "vitest";
import { keptConfig, makeNewRepositoriesInert } from "./inert-repositories.js";

describe("keptConfig", () => {
  it("keeps remotes, branches and core settings, and nothing that runs a program", () => {
    const made = [
      "[core]",
      "\trepositoryformatversion = 0",
      "\tbare = false",
      '\tfsmonitor = "touch /tmp/ran; false"',
      "\thooksPath = hooks",
      "\tworktree = ..",
      '[remote "origin"]',
      "\turl = https://example.invalid/x.git",
      "\tfetch = +refs/heads/*:refs/remotes/origin/*",
      "\tuploadpack = touch /tmp/ran",
      '[branch "main"]',
      "\tremote = origin",
      "\tmerge = refs/heads/main",
      "[alias]",
      "\tst = !touch /tmp/ran",
      '[filter "x"]',
      "\tclean = touch /tmp/ran",
      "[include]",
      "\tpath = ../evil.cfg",
      "[core.x]",
      "\tbare = true",
    ].join("\n");
    expect(keptConfig(made)).toMatchInlineSnapshot(`
      "# Rewritten by pleach: this repository was made by a sandboxed command. Only keys that run
      # nothing were kept; the command's own config is beside this file (config.made-by-command).
      [core]
      	repositoryformatversion = "0"
      	bare = "false"
      [remote "origin"]
      	url = "https://example.invalid/x.git"
      	fetch = "+refs/heads/*:refs/remotes/origin/*"
      [branch "main"]
      	remote = "origin"
      	merge = "refs/heads/main"
      "
    `);
  });

  it("drops a remote URL that has git run a remote helper (transport::address)", () => {
    const made = [
      '[remote "ok"]',
      "\turl = /srv/repos/x.git",
      '[remote "ext"]',
      "\turl = ext::sh -c touch% /tmp/ran",
      '[remote "fd"]',
      "\turl = fd::17",
    ].join("\n");
    const kept = keptConfig(made);
    expect(kept).toContain('url = "/srv/repos/x.git"');
    expect(kept).not.toContain("ext::");
    expect(kept).not.toContain("fd::");
  });

  it("cannot be made to write a key of its own through quotes, escapes or continued lines", () => {
    const made = [
      '[remote "a\\"]\n[core]"]',
      '\turl = "x\\" \\',
      "fsmonitor = touch /tmp/ran",
      '[branch "b"]',
      '\tmerge = "a\\"\\n\\tfsmonitor = touch"',
    ].join("\n");
    const kept = keptConfig(made);
    // Every line is a header, a comment or a key of the kept list: no other key can appear.
    for (const line of kept.trim().split("\n")) {
      expect(line).toMatch(
        /^(#|\[(core|remote|branch|extensions)( ".*")?\]$|\t(url|fetch|remote|merge) = ")/,
      );
    }
    expect(kept).not.toMatch(/^\s*fsmonitor/m);
  });
});

describe("makeNewRepositoriesInert", () => {
  /** A workspace with the user's repository (a hook, a key of the user's) and one a command made. */
  async function workspace(): Promise<{ root: string; userConfig: string; made: string }> {
    const root = realpathSync(await useTempDir());
    const userConfig = "[core]\n\tbare = false\n[user]\n\tname = The User\n";
    for (const repository of [root, path.join(root, "vendor", "lib")]) {
      mkdirSync(path.join(repository, ".git", "hooks"), { recursive: true });
      mkdirSync(path.join(repository, ".git", "objects"));
      mkdirSync(path.join(repository, ".git", "refs"));
      writeFileSync(path.join(repository, ".git", "HEAD"), "ref: refs/heads/main\n");
      writeFileSync(path.join(repository, ".git", "hooks", "pre-commit"), "#!/bin/sh\n");
    }
    writeFileSync(path.join(root, ".git", "config"), userConfig);
    const made = path.join(root, "vendor", "lib", ".git");
    writeFileSync(path.join(made, "config"), "[core]\n\tfsmonitor = touch /tmp/ran\n");
    return { root, userConfig, made };
  }

  it("makes a repository a command made inert, and leaves the user's alone", async () => {
    const { root, userConfig, made } = await workspace();
    const notes = makeNewRepositoriesInert({
      root,
      before: [path.join(root, ".git")],
      after: [path.join(root, ".git"), made],
    });
    expect(notes).toHaveLength(1);
    expect(readFileSync(path.join(made, "config"), "utf8")).not.toContain("fsmonitor");
    expect(readFileSync(path.join(root, ".git", "config"), "utf8")).toBe(userConfig);
  });

  it("never rewrites the user's repository when a folder of the made one's path became a link (a job's swap)", async () => {
    const { root, userConfig, made } = await workspace();
    // Between the look that found vendor/lib/.git and the rewrite, a background job makes
    // vendor/lib a link to the workspace root: vendor/lib/.git is then the user's .git.
    rmSync(path.join(root, "vendor", "lib"), { recursive: true });
    symlinkSync("..", path.join(root, "vendor", "lib"));
    makeNewRepositoriesInert({
      root,
      before: [path.join(root, ".git")],
      after: [path.join(root, ".git"), made],
    });
    expect(readFileSync(path.join(root, ".git", "config"), "utf8")).toBe(userConfig);
    expect(readFileSync(path.join(root, ".git", "hooks", "pre-commit"), "utf8")).toBe(
      "#!/bin/sh\n",
    );
  });

  it("never rewrites the user's repository that a made one's commondir names through a link", async () => {
    const { root, userConfig, made } = await workspace();
    symlinkSync(".", path.join(root, "here"));
    writeFileSync(path.join(made, "commondir"), "../../../here/.git\n");
    makeNewRepositoriesInert({
      root,
      before: [path.join(root, ".git")],
      after: [path.join(root, ".git"), made],
    });
    expect(readFileSync(path.join(made, "config"), "utf8")).not.toContain("fsmonitor");
    expect(readFileSync(path.join(root, ".git", "config"), "utf8")).toBe(userConfig);
    expect(readFileSync(path.join(root, ".git", "hooks", "pre-commit"), "utf8")).toBe(
      "#!/bin/sh\n",
    );
  });
});
