import { execFileSync } from "node:child_process";
import { mkdir, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { useTempDir } from "@pleach/core/testing";
import { describe, expect, it } from "vitest";
import { createWorkspaceWalker } from "../os/folder-walk.js";
import { searchTree } from "./past-the-limit.js";

describe("searchTree", () => {
  it("finds what the walk finds: nested .git entries, git layouts, not the top's own .git, through no link", async () => {
    const top = await useTempDir();
    execFileSync("git", ["init", "-q", top]);
    execFileSync("git", ["init", "-q", path.join(top, "a", "b", "nested")]);
    execFileSync("git", ["init", "-q", "--bare", path.join(top, "bare.git")]);
    await mkdir(path.join(top, "c"));
    await writeFile(path.join(top, "c", ".git"), "gitdir: ../a/b/nested/.git\n");
    const outside = await useTempDir();
    execFileSync("git", ["init", "-q", path.join(outside, "far")]);
    await symlink(outside, path.join(top, "link"));
    const walker = createWorkspaceWalker({ root: top, maxDirectories: 1_000 });
    const walked = (await walker.scan()).gitEntries;
    walker.close();
    expect(searchTree(top)).toEqual({ gitEntries: walked, unreadable: [] });
    expect(walked).toEqual(
      [
        path.join(top, "a", "b", "nested", ".git"),
        path.join(top, "bare.git"),
        path.join(top, "c", ".git"),
      ].sort(),
    );
  });

  it("gives up past its time", async () => {
    const top = await useTempDir();
    await mkdir(path.join(top, "a"));
    expect(searchTree(top, -1)).toBeUndefined();
  });
});
