import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { gatherHostFacts } from "./host-facts.js";
import { acquirePlaceholders, livePlaceholders } from "./placeholders.js";
import { hostState } from "./test-support/host-state.js";

let root: string;
beforeEach(async () => {
  root = await realpath(await mkdtemp(path.join(os.tmpdir(), "pleach-facts-")));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

/** Protected paths relative to the root, with their state, for readable assertions. */
async function protectedRelative(options: { maxDirectories?: number } = {}) {
  const facts = await gatherHostFacts({
    root,
    hostEnvironment: {},
    protectedEntries: [".git", ".envrc"],
    ...options,
  });
  return facts.protectedPaths.map(
    ({ path: target, state }) => `${path.relative(root, target)} ${state}`,
  );
}

describe("gatherHostFacts", () => {
  it("finds the gitdir, nested repositories anywhere (node_modules too) and missing entries", async () => {
    execFileSync("git", ["init", "-q", root]);
    for (const nested of ["packages/a", "node_modules/dep", "deep/1/2/3/4"]) {
      execFileSync("git", ["init", "-q", path.join(root, nested)]);
    }
    expect(await protectedRelative()).toEqual([
      ".envrc missing",
      ".git directory",
      "node_modules/dep/.git directory",
      "packages/a/.git directory",
      "deep/1/2/3/4/.git directory",
    ]);
  });

  it("follows a .git file to its gitdir and common dir inside the workspace, and reads core.hooksPath and includes", async () => {
    execFileSync("git", [
      "init",
      "-q",
      "--separate-git-dir",
      path.join(root, "store"),
      path.join(root, "checkout"),
    ]);
    execFileSync("git", [
      "-C",
      path.join(root, "checkout"),
      "config",
      "core.hooksPath",
      "../hooks",
    ]);
    execFileSync("git", [
      "-C",
      path.join(root, "checkout"),
      "config",
      "include.path",
      "../shared.gitconfig",
    ]);
    expect(await protectedRelative()).toEqual([
      ".envrc missing",
      ".git missing",
      "hooks missing",
      "shared.gitconfig missing",
      "store directory",
      "checkout/.git file",
    ]);
  });

  it("reports a symbolic link at a protected path, and the shallowest missing folder of a missing one", async () => {
    await symlink("/etc/hostname", path.join(root, ".envrc"));
    execFileSync("git", ["init", "-q", root]);
    execFileSync("git", ["-C", root, "config", "core.hooksPath", "tools/git/hooks"]);
    expect(await protectedRelative()).toEqual([
      ".envrc symbolic-link",
      ".git directory",
      "tools missing",
    ]);
  });

  it("bounds the walk and says so", async () => {
    for (let index = 0; index < 30; index += 1)
      await mkdir(path.join(root, `d${index}`, "x"), { recursive: true });
    const facts = await gatherHostFacts({ root, hostEnvironment: {}, maxDirectories: 10 });
    expect(facts.walk).toEqual({ directories: 10, truncated: true });
    const full = await gatherHostFacts({ root, hostEnvironment: {} });
    expect(full.walk).toEqual({ directories: 61, truncated: false });
  });

  it("finds sockets in the workspace and the agent socket outside it, but not those in hidden trees", async () => {
    const outside = await realpath(await mkdtemp("/var/tmp/pleach-facts-"));
    const servers = [
      path.join(root, "in.sock"),
      path.join(outside, "agent.sock"),
      path.join(root, "tmp-agent.sock"),
    ].map((socketPath) => net.createServer().listen(socketPath));
    try {
      await Promise.all(
        servers.map((server) => new Promise((resolve) => server.once("listening", resolve))),
      );
      const facts = await gatherHostFacts({
        root,
        hostEnvironment: {
          SSH_AUTH_SOCK: path.join(outside, "agent.sock"),
          DOCKER_HOST: "unix:///run/docker.sock",
        },
      });
      expect(facts.hostSockets).toEqual(
        [
          path.join(outside, "agent.sock"),
          path.join(root, "in.sock"),
          path.join(root, "tmp-agent.sock"),
        ].sort(),
      );
    } finally {
      for (const server of servers) server.close();
      await rm(outside, { recursive: true, force: true });
    }
  });

  it("keeps only allow-listed, non-secret host variables", async () => {
    const facts = await gatherHostFacts({
      root,
      protect: false,
      hostEnvironment: {
        PATH: "/bin",
        LC_ALL: "C",
        GITHUB_TOKEN: "x",
        LD_PRELOAD: "/x.so",
        SSH_AUTH_SOCK: "/x",
      },
    });
    expect(facts.inheritedEnvironment).toEqual({ PATH: "/bin", LC_ALL: "C", TMPDIR: "/tmp" });
    expect(facts.protectedPaths).toEqual([]);
  });
});

describe("acquirePlaceholders", () => {
  it("creates missing paths as empty folders, shares them between holders and removes them after the last", async () => {
    const before = await hostState([root]);
    const target = path.join(root, ".envrc");
    const first = await acquirePlaceholders([{ path: target, state: "missing" }]);
    const second = await acquirePlaceholders([{ path: target, state: "directory" }]);
    expect(livePlaceholders()).toContain(target);
    await first();
    expect((await hostState([target]))[target]).toMatch(/^dir 555/);
    await second();
    expect(livePlaceholders()).not.toContain(target);
    expect(await hostState([root])).toEqual(before);
  });

  it("leaves alone a path the host created itself", async () => {
    const target = path.join(root, ".envrc");
    await writeFile(target, "export A=1\n");
    const release = await acquirePlaceholders([{ path: target, state: "missing" }]);
    await release();
    expect((await hostState([target]))[target]).toMatch(/^file/);
  });
});
