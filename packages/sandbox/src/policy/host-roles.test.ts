import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { useTempDir } from "@pleach/core/testing";
import { describe, expect, it } from "vitest";
import { workspaceProtection } from "./protection.js";

/** The protection of `root` over a host with these variables and home folders, and no repository. */
function protectionOver(
  root: string,
  hostEnvironment: Record<string, string>,
  homeFolders: readonly string[] = [],
) {
  return workspaceProtection({ root, nestedGitEntries: [], hostEnvironment, homeFolders });
}

describe("host-run folders by their role", () => {
  it("protects the dot-entries at the top of a home folder inside the workspace, and leaves the rest of it writable", async () => {
    const root = await useTempDir();
    const home = path.join(root, "home", "alice");
    await mkdir(path.join(home, ".unlisted"), { recursive: true });
    await writeFile(path.join(home, "notes.txt"), "mine\n");
    const protection = protectionOver(root, {}, [home]);
    for (const target of [".unlisted/x", ".local/bin/git", ".config/nvim/init.lua", ".hgrc"]) {
      expect(protection.ruleFor(path.join("home", "alice", target)), target).toMatch(
        /is at the top of home\/alice, a home folder, where every dot-entry/,
      );
    }
    expect(protection.ruleFor("home/alice/notes.txt")).toBeUndefined();
    expect(protection.ruleFor("home/alice/src/.local")).toBeUndefined();
  });

  it("protects whole the folders a host variable names inside the workspace, and only those", async () => {
    const root = await useTempDir();
    const protection = protectionOver(root, {
      PATH: `/usr/bin:${root}/tools/bin:relative/bin`,
      XDG_CONFIG_HOME: `${root}/config`,
      CARGO_HOME: `${root}/./cargo`,
      PYTHONUSERBASE: "/elsewhere",
      UNRELATED: `${root}/src`,
    });
    expect(protection.ruleFor("tools/bin/anything")).toMatch(
      /^tools\/bin is protected: it is what the host's PATH names, and the host runs the programs there by name$/,
    );
    expect(protection.ruleFor("config/git/config")).toMatch(
      /what the host's XDG_CONFIG_HOME names/,
    );
    expect(protection.ruleFor("cargo/bin/cargo")).toMatch(/what the host's CARGO_HOME names/);
    for (const free of ["tools/other", "relative/bin/x", "src/main.rs", "configs/x"]) {
      expect(protection.ruleFor(free), free).toBeUndefined();
    }
    // Missing, each is watched for by its own path: what a command makes there is moved aside.
    expect(protection.paths.map(({ path: target }) => path.relative(root, target))).toEqual(
      expect.arrayContaining(["tools/bin", "config", "cargo"]),
    );
  });

  it("protects every entry at the top when the workspace itself is the folder a variable names", async () => {
    const root = await useTempDir();
    await mkdir(path.join(root, "git"));
    await writeFile(path.join(root, "tool"), "#!/bin/sh\n");
    const protection = protectionOver(root, { XDG_CONFIG_HOME: root, PATH: `/usr/bin:${root}` });
    expect(protection.ruleFor("git/config")).toMatch(
      /^git is protected: the workspace is what the host's (PATH|XDG_CONFIG_HOME) names/,
    );
    expect(protection.ruleFor("tool")).toMatch(/the workspace is what the host's/);
  });
});
