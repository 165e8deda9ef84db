import { execFileSync } from "node:child_process";
import { statSync, utimesSync } from "node:fs";
import { mkdir, realpath, rename, rm, symlink } from "node:fs/promises";
import net from "node:net";
import path from "node:path";
import { useTempDir } from "@pleach/core/testing";
import { beforeEach, describe, expect, it } from "vitest";
import { createHostFactsCache, gatherHostFacts, type HostFactsCache } from "./host-facts.js";

let root: string;
beforeEach(async () => {
  root = await useTempDir({ prefix: "pleach-facts-" });
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

  it("reports a symbolic link at a protected path, and a missing one by its own path", async () => {
    await symlink("/etc/hostname", path.join(root, ".envrc"));
    execFileSync("git", ["init", "-q", root]);
    execFileSync("git", ["-C", root, "config", "core.hooksPath", "tools/git/hooks"]);
    expect(await protectedRelative()).toEqual([
      ".envrc symbolic-link",
      ".git directory",
      "tools/git/hooks missing",
    ]);
  });

  it("bounds the walk and says so", async () => {
    for (let index = 0; index < 30; index += 1)
      await mkdir(path.join(root, `d${index}`, "x"), { recursive: true });
    const facts = await gatherHostFacts({
      root,
      hostEnvironment: {},
      maxDirectories: 10,
      protect: false,
    });
    expect(facts.walk).toEqual({
      directories: 10,
      truncated: true,
      listed: 10,
      tracking: "walk",
    });
    // Protection needs the whole tree: a repository past the cut could not be protected.
    await expect(
      gatherHostFacts({ root, hostEnvironment: {}, maxDirectories: 10 }),
    ).rejects.toMatchObject({
      code: "TOO_LARGE",
      message: expect.stringContaining("more than 10 folders"),
    });
    const full = await gatherHostFacts({ root, hostEnvironment: {} });
    expect(full.walk).toMatchObject({ directories: 61, truncated: false, listed: 61 });
  });

  it("finds sockets in the workspace and the agent socket outside it, but not those in hidden trees", async () => {
    const outside = await useTempDir({ prefix: "pleach-facts-", parent: "/var/tmp" });
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

/** Let the clock move past the change times just written, so stamps (not recency) decide. */
const tick = () => new Promise((resolve) => setTimeout(resolve, 25));

describe("gatherHostFacts with a cache", () => {
  async function gather(cache: HostFactsCache, options: { maxDirectories?: number } = {}) {
    const facts = await gatherHostFacts({
      root,
      hostEnvironment: {},
      protectedEntries: [".git"],
      cache,
      ...options,
    });
    return {
      listed: facts.walk.listed,
      directories: facts.walk.directories,
      protectedPaths: facts.protectedPaths.map(({ path: target }) => path.relative(root, target)),
      sockets: facts.hostSockets.map((socket) => path.relative(root, socket)),
    };
  }

  beforeEach(async () => {
    execFileSync("git", ["init", "-q", root]);
    for (let index = 0; index < 20; index += 1) {
      await mkdir(path.join(root, `d${index}`, "x", "y"), { recursive: true });
    }
  });

  it("reads only the folders whose stamps changed, and finds a .git made anywhere meanwhile", async () => {
    const cache = createHostFactsCache({ recentChangeMs: 0 });
    expect(await gather(cache)).toMatchObject({ listed: 61, directories: 61 });
    await tick();
    expect(await gather(cache)).toMatchObject({ listed: 0, protectedPaths: [".git"] });
    execFileSync("git", ["init", "-q", path.join(root, "d7", "x", "y")]);
    await tick();
    expect(await gather(cache)).toEqual({
      listed: 1,
      directories: 61,
      protectedPaths: [".git", "d7/x/y/.git"],
      sockets: [],
    });
  });

  it("is not fooled by a folder's modification time set back: the change time moves anyway", async () => {
    const cache = createHostFactsCache({ recentChangeMs: 0 });
    const folder = path.join(root, "d3", "x");
    // A whole second, so that setting it back is exact (utimes takes floating-point seconds).
    const longAgo = new Date("2020-01-01T00:00:00Z");
    utimesSync(folder, longAgo, longAgo);
    await tick();
    await gather(cache);
    await tick();
    await mkdir(path.join(folder, ".git"));
    utimesSync(folder, longAgo, longAgo);
    expect(statSync(folder).mtimeMs).toBe(longAgo.getTime());
    expect((await gather(cache)).protectedPaths).toEqual([".git", "d3/x/.git"]);
  });

  it("forgets removed folders, searches renamed and new ones, and finds new sockets", async () => {
    const cache = createHostFactsCache({ recentChangeMs: 0 });
    execFileSync("git", ["init", "-q", path.join(root, "d1", "x")]);
    expect((await gather(cache)).protectedPaths).toEqual([".git", "d1/x/.git"]);
    await tick();
    await rename(path.join(root, "d1"), path.join(root, "renamed"));
    await rm(path.join(root, "d2"), { recursive: true });
    await mkdir(path.join(root, "new", "deep", "er"), { recursive: true });
    execFileSync("git", ["init", "-q", path.join(root, "new", "deep", "er")]);
    const server = net.createServer().listen(path.join(root, "d4", "x", "dev.sock"));
    await new Promise((resolve) => server.once("listening", resolve));
    try {
      await tick();
      const facts = await gather(cache);
      expect(facts).toMatchObject({
        directories: 61,
        protectedPaths: [".git", "renamed/x/.git", "new/deep/er/.git"],
        sockets: ["d4/x/dev.sock"],
      });
      const fresh = await gather(createHostFactsCache());
      expect(facts).toEqual({ ...fresh, listed: facts.listed });
    } finally {
      server.close();
    }
  });

  it("adds new empty folders to a truncated search, and searches it afresh when a deeper one appears", async () => {
    // Protection refuses a cut walk; the walk itself (read-only mode's socket search) goes on.
    const cache = createHostFactsCache({ recentChangeMs: 0 });
    const walker = cache.walker(await realpath(root), 30);
    const gather = async (_cache: HostFactsCache, _options: { maxDirectories: number }) => {
      const scan = await walker.scan();
      return {
        listed: scan.listed,
        directories: scan.directories,
        protectedPaths: [".git", ...scan.gitEntries.map((entry) => path.relative(root, entry))],
      };
    };
    expect(await gather(cache, { maxDirectories: 30 })).toMatchObject({ directories: 30 });
    await tick();
    // An empty folder (a repository's work tree) joins the search as it is.
    execFileSync("git", ["init", "-q", path.join(root, "shallow")]);
    await tick();
    expect(await gather(cache, { maxDirectories: 30 })).toMatchObject({
      listed: 2,
      directories: 31,
      protectedPaths: [".git", "shallow/.git"],
    });
    await tick();
    // A folder with subfolders could hide a repository the limit should cover: search again.
    await mkdir(path.join(root, "wide", "a"), { recursive: true });
    execFileSync("git", ["init", "-q", path.join(root, "wide")]);
    await tick();
    expect(await gather(cache, { maxDirectories: 30 })).toMatchObject({
      listed: 30,
      directories: 30,
      protectedPaths: [".git", "shallow/.git", "wide/.git"],
    });
  });

  it("reads recently changed folders again whatever their stamps say", async () => {
    const cache = createHostFactsCache();
    await gather(cache);
    // Everything was just made, so all of it is read again until it has aged.
    expect((await gather(cache)).listed).toBe(61);
    expect((await gather(createHostFactsCache({ recentChangeMs: 0 }))).listed).toBe(61);
  });

  it("shares one scan between concurrent callers that arrive before it starts", async () => {
    const cache = createHostFactsCache({ recentChangeMs: 0 });
    await gather(cache);
    await tick();
    execFileSync("git", ["init", "-q", path.join(root, "d9")]);
    await tick();
    const [first, second] = await Promise.all([gather(cache), gather(cache)]);
    expect(first.protectedPaths).toEqual([".git", "d9/.git"]);
    expect(second).toEqual(first);
  });
});
