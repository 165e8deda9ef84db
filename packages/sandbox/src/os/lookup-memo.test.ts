import { execFileSync } from "node:child_process";
import { linkSync, mkdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { mkdir, realpath, rename, rm, symlink, unlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { useTempDir } from "@pleach/core/testing";
import { beforeEach, describe, expect, it } from "vitest";
import { createHostFactsCache, gatherHostFacts, type HostFactsCache } from "./host-facts.js";
import { lookupLstat, lookupSmallFile, lookupStat } from "./host-lookups.js";
import { inotifyQueue, watchFolder } from "./inotify-queue.js";
import { LookupMemo, type LookupMemoOptions } from "./lookup-memo.js";

const linux = process.platform === "linux";

let dir: string;
beforeEach(async () => {
  dir = await realpath(await useTempDir({ prefix: "pleach-memo-" }));
});

/** A memo over `compute`, asked after a barrier as a scan would, counting the computations. */
function memoOf<T>(compute: () => T, options: LookupMemoOptions = {}) {
  const memo = new LookupMemo(options);
  let computed = 0;
  const get = async ({ barrier = true }: { barrier?: boolean } = {}) => {
    if (barrier) await inotifyQueue().barrier();
    return memo.get("key", barrier, () => {
      computed += 1;
      return compute();
    });
  };
  return { memo, get, computed: () => computed };
}

/** Asked three times, `compute` runs three times. */
async function expectNeverKept(compute: () => unknown): Promise<void> {
  const { memo, get, computed } = memoOf(compute);
  try {
    await get();
    await get();
    await get();
    expect(computed()).toBe(3);
  } finally {
    memo.close();
  }
}

/** Ask until the value is kept (the first computation sets the watchers; the second is kept). */
async function settle(get: () => Promise<unknown>, computed: () => number): Promise<void> {
  await get();
  await get();
  const before = computed();
  await get();
  expect(computed()).toBe(before);
}

describe.skipIf(!linux)("LookupMemo (inotify is Linux's)", () => {
  it("keeps a value once the folders it looked in are watched, until one of them changes", async () => {
    const target = path.join(dir, "a", "b");
    await mkdir(path.join(dir, "a"));
    const { memo, get, computed } = memoOf(() => lookupLstat(target) !== undefined);
    try {
      expect(await get()).toBe(false);
      // Its folders were watched after its lookups: not kept yet.
      expect(await get()).toBe(false);
      expect(computed()).toBe(2);
      expect(await get()).toBe(false);
      expect(computed()).toBe(2);
      await writeFile(target, "");
      expect(await get()).toBe(true);
      expect(computed()).toBe(3);
    } finally {
      memo.close();
    }
  });

  it("computes afresh when the call has passed no barrier", async () => {
    const { memo, get, computed } = memoOf(() => lookupLstat(dir) !== undefined);
    try {
      await settle(get, computed);
      const before = computed();
      await get({ barrier: false });
      expect(computed()).toBe(before + 1);
    } finally {
      memo.close();
    }
  });

  it("sees a change where links lead, two links away, and a link re-pointed", async () => {
    for (const folder of ["one", "two", "three", "four"]) await mkdir(path.join(dir, folder));
    // one/link -> two/link -> three
    await symlink(path.join(dir, "two", "link"), path.join(dir, "one", "link"));
    await symlink(path.join(dir, "three"), path.join(dir, "two", "link"));
    const target = path.join(dir, "one", "link", "secret");
    const { memo, get, computed } = memoOf(() => lookupStat(target)?.size ?? -1);
    try {
      await settle(get, computed);
      await writeFile(path.join(dir, "three", "secret"), "12345");
      expect(await get()).toBe(5);
      await settle(get, computed);
      // The middle link now leads to another folder, holding another file.
      await writeFile(path.join(dir, "four", "secret"), "12");
      await unlink(path.join(dir, "two", "link"));
      await symlink(path.join(dir, "four"), path.join(dir, "two", "link"));
      expect(await get()).toBe(2);
    } finally {
      memo.close();
    }
  });

  it("watches the folder that now stands at a path after one was swapped in", async () => {
    await mkdir(path.join(dir, "sub"));
    const target = path.join(dir, "sub", "file");
    const { memo, get, computed } = memoOf(() => lookupLstat(target) !== undefined);
    try {
      await settle(get, computed);
      await rename(path.join(dir, "sub"), path.join(dir, "old"));
      await mkdir(path.join(dir, "sub"));
      expect(await get()).toBe(false);
      await settle(get, computed);
      await writeFile(target, "");
      expect(await get()).toBe(true);
      // And the old folder, now elsewhere, is not what is watched for the path.
      await writeFile(path.join(dir, "old", "file"), "");
      await settle(get, computed);
    } finally {
      memo.close();
    }
  });

  it("watches afresh the folders below one swapped in", async () => {
    await mkdir(path.join(dir, "a", "b"), { recursive: true });
    const target = path.join(dir, "a", "b", "file");
    const { memo, get, computed } = memoOf(() => lookupLstat(target) !== undefined);
    try {
      await settle(get, computed);
      await rename(path.join(dir, "a"), path.join(dir, "old"));
      await mkdir(path.join(dir, "a", "b"), { recursive: true });
      expect(await get()).toBe(false);
      await settle(get, computed);
      await writeFile(target, "");
      expect(await get()).toBe(true);
    } finally {
      memo.close();
    }
  });

  it("sees a file read for the policy written through a hard link in another folder", async () => {
    await mkdir(path.join(dir, "repo"));
    await mkdir(path.join(dir, "elsewhere"));
    const config = path.join(dir, "repo", "config");
    writeFileSync(config, "[core]\n");
    // Old enough to be trusted by its stamp.
    utimesSync(config, new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
    linkSync(config, path.join(dir, "elsewhere", "alias"));
    const { memo, get, computed } = memoOf(() => lookupSmallFile(config, 1024));
    try {
      await settle(get, computed);
      writeFileSync(path.join(dir, "elsewhere", "alias"), "[core]\nhooksPath = x\n");
      expect(await get()).toContain("hooksPath");
    } finally {
      memo.close();
    }
  });

  it("keeps nothing that looked in a folder whose changes may not show as events (procfs)", async () => {
    await expectNeverKept(() => lookupLstat("/proc/self/status") !== undefined);
  });

  it("looks again, on every use, at what it looked up in a folder it may search but not read", async () => {
    await mkdir(path.join(dir, "sub"));
    const target = path.join(dir, "sub", "x");
    const { memo, get, computed } = memoOf(() => lookupLstat(target) !== undefined, {
      // inotify needs read permission: EACCES, as for a daemon's socket folder of mode 0711.
      watchFolder: (folder, listener) => {
        if (folder === path.join(dir, "sub")) {
          throw Object.assign(new Error("EACCES"), { code: "EACCES" });
        }
        return watchFolder(folder, listener);
      },
    });
    try {
      await settle(get, computed);
      await writeFile(target, "");
      expect(await get()).toBe(true);
      await settle(get, computed);
      await unlink(target);
      await mkdir(target);
      expect(await get()).toBe(true);
      await rm(target, { recursive: true });
      expect(await get()).toBe(false);
    } finally {
      memo.close();
    }
  });

  it("keeps nothing where a folder cannot be watched, and turns off at the watch limit", async () => {
    const failing = (code: string) => () => {
      throw Object.assign(new Error(code), { code });
    };
    const denied = memoOf(() => lookupLstat(path.join(dir, "x")), {
      watchFolder: failing("EINVAL"),
    });
    await denied.get();
    await denied.get();
    await denied.get();
    expect(denied.computed()).toBe(3);
    expect(denied.memo.disabled).toBeUndefined();
    const full = memoOf(() => lookupLstat(path.join(dir, "x")), {
      watchFolder: failing("ENOSPC"),
    });
    await full.get();
    expect(full.memo.disabled).toContain("ENOSPC");
  });

  it("drops what it keeps when a watcher of the thread was closed (its queued events are lost)", async () => {
    const { memo, get, computed } = memoOf(() => lookupLstat(dir) !== undefined);
    try {
      await settle(get, computed);
      inotifyQueue().closures += 1;
      const before = computed();
      await get();
      expect(computed()).toBe(before + 1);
    } finally {
      memo.close();
    }
  });

  it("drops what it keeps when a watcher fails, and watches that folder again", async () => {
    const failures: (() => void)[] = [];
    const { memo, get, computed } = memoOf(() => lookupLstat(path.join(dir, "x")), {
      watchFolder: (folder, listener) => {
        failures.push(() => listener.error());
        return watchFolder(folder, listener);
      },
    });
    try {
      await settle(get, computed);
      for (const fail of failures) fail();
      const before = computed();
      await get();
      expect(computed()).toBe(before + 1);
      await settle(get, computed);
    } finally {
      memo.close();
    }
  });

  it("closes its watchers and keeps nothing for a while after a flood of events", async () => {
    const busy = path.join(dir, "busy");
    mkdirSync(busy);
    const { memo, get, computed } = memoOf(() => lookupLstat(path.join(busy, "x")));
    try {
      await settle(get, computed);
      expect(memo.watched).toBeGreaterThan(0);
      // Each file made and removed is two events in a watched folder.
      const events = inotifyQueue().limit;
      for (let made = 0; made < events; made += 2) {
        const file = path.join(busy, `f${made}`);
        writeFileSync(file, "");
        rmSync(file);
        if (made % 2048 === 0) await new Promise((resolve) => setImmediate(resolve));
      }
      await inotifyQueue().barrier();
      expect(memo.watched).toBe(0);
      const before = computed();
      await get();
      await get();
      expect(computed()).toBe(before + 2);
      expect(memo.watched).toBe(0);
    } finally {
      memo.close();
    }
  }, 60_000);
});

describe.skipIf(!linux)("gatherHostFacts keeps what it looked up (inotify is Linux's)", () => {
  let cache: HostFactsCache;
  let root: string;
  let home: string;
  beforeEach(async () => {
    cache = createHostFactsCache();
    root = await realpath(await useTempDir({ prefix: "pleach-memo-root-" }));
    home = await realpath(await useTempDir({ prefix: "pleach-memo-home-" }));
    return () => cache.close();
  });
  const gather = () =>
    gatherHostFacts({
      root,
      cache,
      hostEnvironment: { HOME: home },
      readPolicy: { credentialHomes: [home] },
    });
  /** Gather until the scan tracks events and the facts are kept (the same arrays come back). */
  async function kept() {
    for (let attempt = 0; attempt < 20; attempt += 1) {
      const first = await gather();
      const second = await gather();
      if (first.hiddenPaths === second.hiddenPaths && second.walk.tracking === "events") {
        return second;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error("the facts were never kept");
  }

  it("keeps the facts while nothing changes, and hides a credential store made meanwhile", async () => {
    const before = await kept();
    expect(before.hiddenPaths).toContainEqual(
      expect.objectContaining({ path: path.join(home, ".ssh"), state: "missing" }),
    );
    await mkdir(path.join(home, ".ssh"));
    const after = await gather();
    expect(after.hiddenPaths).toContainEqual(
      expect.objectContaining({ path: path.join(home, ".ssh"), state: "folder" }),
    );
  });

  it("protects a hooks folder set in the repository's config meanwhile", async () => {
    execFileSync("git", ["init", "-q", root]);
    // Old enough that the config's stamp is trusted, so the facts can be kept.
    const config = path.join(root, ".git", "config");
    utimesSync(config, new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    const before = await kept();
    expect(before.protectedPaths.map((each) => each.path)).not.toContain(path.join(root, "hooks"));
    execFileSync("git", ["-C", root, "config", "core.hooksPath", "hooks"]);
    const after = await gather();
    expect(after.protectedPaths.map((each) => each.path)).toContain(path.join(root, "hooks"));
  });

  it("gives values no caller can change", async () => {
    const facts = await kept();
    expect(() => (facts.hiddenPaths as unknown[]).push("x")).toThrow(TypeError);
  });
});

describe("what the policy is computed from", () => {
  // A lookup made around host-lookups.ts would not be watched: a kept policy would miss its
  // changes. The user database is read once per process, and the bound sockets on every call.
  it.each([
    "host-facts.ts",
    "hidden-reads.ts",
    "protection.ts",
    "git-machinery.ts",
    "path-state.ts",
    "protected-entries.ts",
    "warm-slots.ts",
  ])("%s looks up the host's files only through host-lookups.ts", (file) => {
    const source = readFileSync(path.join(import.meta.dirname, file), "utf8");
    const fsImports = source.match(/^import (?!type ).*from "node:fs(\/promises)?";$/gm) ?? [];
    expect(fsImports).toEqual([]);
    expect(source).not.toMatch(
      /\b(lstatSync|statSync|realpathSync|readdirSync|readFileSync|openSync)\(/,
    );
  });
});
