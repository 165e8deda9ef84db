import { describe, expect, it } from "vitest";
import { keptConfig } from "./inert-repositories.js";

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
