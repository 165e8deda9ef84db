import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { mkdir, rename, rm, writeFile } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { cleanUpAfter, useTempDir } from "@pleach/core/testing";
import { beforeEach, describe, expect, it } from "vitest";
import { createCommandWrapper } from "./create-command-wrapper.js";
import { createWorkspaceWalker, type WorkspaceWalker } from "./folder-walk.js";
import { createHostFactsCache } from "./host-facts.js";
import { type FolderWatcher, type WatchFolder, watchFolder } from "./inotify-queue.js";
import { runInvocation } from "./test-support/run-invocation.js";
import { attackSuiteSkipReason } from "./test-support/suite.js";

const noSandbox = await attackSuiteSkipReason();

const linux = process.platform === "linux";

let root: string;
beforeEach(async () => {
  root = await useTempDir({ prefix: "pleach-walk-" });
  // 1,111 folders, four levels deep.
  for (let a = 0; a < 10; a += 1) {
    for (let b = 0; b < 10; b += 1) {
      for (let c = 0; c < 10; c += 1)
        await mkdir(path.join(root, `a${a}`, `b${b}`, `c${c}`), { recursive: true });
    }
  }
});

function walker(options: { watchFolder?: WatchFolder } = {}): WorkspaceWalker {
  return cleanUpAfter(
    createWorkspaceWalker({ root, maxDirectories: 100_000, recentChangeMs: 0, ...options }),
    (made) => made.close(),
  );
}

/** Scan, with paths relative to the root. */
async function scan(walk: WorkspaceWalker) {
  const found = await walk.scan();
  return {
    ...found,
    gitEntries: found.gitEntries.map((entry) => path.relative(root, entry)),
    sockets: found.sockets.map((socket) => path.relative(root, socket)),
  };
}

/** A walker past its first scan and its watchers' setup. */
async function watchingWalker(options: { watchFolder?: WatchFolder } = {}) {
  const walk = walker(options);
  expect(await scan(walk)).toMatchObject({ tracking: "walk", directories: 1_111 });
  await scan(walk);
  return walk;
}

async function listen(socket: string): Promise<void> {
  const server = cleanUpAfter(net.createServer(), (made) => made.close());
  server.listen(socket);
  await new Promise((resolve) => server.once("listening", resolve));
}

describe.skipIf(!linux)("createWorkspaceWalker, watching the tree (inotify)", () => {
  it("finds a .git folder, a .git file and a socket made deep in the tree, reading only their folders", async () => {
    const walk = await watchingWalker();
    expect(await scan(walk)).toMatchObject({ tracking: "events", listed: 0, gitEntries: [] });
    await mkdir(path.join(root, "a3", "b4", "c5", ".git"));
    await writeFile(path.join(root, "a9", "b9", ".git"), "gitdir: ../elsewhere\n");
    await listen(path.join(root, "a1", "b2", "c3", "dev.sock"));
    expect(await scan(walk)).toMatchObject({
      tracking: "events",
      listed: 3,
      directories: 1_111,
      gitEntries: ["a3/b4/c5/.git", "a9/b9/.git"],
      sockets: ["a1/b2/c3/dev.sock"],
    });
  });

  it.skipIf(noSandbox !== undefined)(
    "finds a .git and a socket that a sandboxed command made deep in the tree",
    async () => {
      const cache = cleanUpAfter(createHostFactsCache({ recentChangeMs: 0 }), (made) =>
        made.close(),
      );
      const wrapper = createCommandWrapper({ hostFactsCache: cache, warmSandbox: false });
      const run = async (command: string) => {
        const invocation = await wrapper.invocation({
          command,
          root,
          cwd: root,
          mode: "workspace-write",
          env: {},
          network: false,
        });
        return runInvocation(invocation);
      };
      await run("true");
      await run("true");
      const made = await run(
        "mkdir -p a4/b5/c6/.git && /usr/bin/python3 -c 'import socket; socket.socket(socket.AF_UNIX).bind(\"a6/b5/c4/cmd.sock\")' && echo made",
      );
      expect(made.stdout).toBe("made\n");
      const found = await cache.walker(root, 200_000).scan();
      expect(found).toMatchObject({ tracking: "events" });
      expect(found.gitEntries.map((entry) => path.relative(root, entry))).toEqual([
        "a4/b5/c6/.git",
      ]);
      expect(found.sockets.map((socket) => path.relative(root, socket))).toEqual([
        "a6/b5/c4/cmd.sock",
      ]);
    },
  );

  it("searches a tree made after the first scan, one renamed into it, and follows a renamed folder", async () => {
    const walk = await watchingWalker();
    await mkdir(path.join(root, "new", "x", "y", ".git"), { recursive: true });
    const outside = await useTempDir({ prefix: "pleach-walk-outside-" });
    await mkdir(path.join(outside, "tree", "p", "q", ".git"), { recursive: true });
    await rename(path.join(outside, "tree"), path.join(root, "a0", "moved-in"));
    await rename(path.join(root, "a5"), path.join(root, "renamed"));
    expect(await scan(walk)).toMatchObject({
      tracking: "events",
      directories: 1_111 + 6,
      gitEntries: ["a0/moved-in/p/q/.git", "new/x/y/.git"],
    });
    // Each folder keeps its watcher across the rename; events in it name its new path.
    await mkdir(path.join(root, "renamed", "b1", "c1", ".git"));
    await mkdir(path.join(root, "a0", "moved-in", "p", ".git"));
    expect((await scan(walk)).gitEntries).toEqual([
      "a0/moved-in/p/.git",
      "a0/moved-in/p/q/.git",
      "new/x/y/.git",
      "renamed/b1/c1/.git",
    ]);
  });

  it("watches a folder that replaced another at the same path", async () => {
    const walk = await watchingWalker();
    await rm(path.join(root, "a2"), { recursive: true });
    await mkdir(path.join(root, "a2", "b0", "c0"), { recursive: true });
    // A known name swapped for another folder of the same shape (the old one moved away).
    await rename(path.join(root, "a4", "b4"), path.join(root, "a4", "old"));
    await mkdir(path.join(root, "a4", "b4", "c4"), { recursive: true });
    expect(await scan(walk)).toMatchObject({
      tracking: "events",
      directories: 1_111 - 111 + 3 + 2,
    });
    await mkdir(path.join(root, "a2", "b0", "c0", ".git"));
    await mkdir(path.join(root, "a4", "b4", "c4", ".git"));
    expect((await scan(walk)).gitEntries).toEqual(["a2/b0/c0/.git", "a4/b4/c4/.git"]);
  });

  it("watches a folder again when its name changed in its parent (a watch may have followed a link)", async () => {
    // As if the folder had been a symbolic link to a decoy when its watcher was set, then swapped
    // back: fs.watch follows links, so the watcher sees the decoy, and only the renames in the
    // parent tell.
    const swapped = path.join(root, "a6", "b6");
    const decoy = await useTempDir({ prefix: "pleach-walk-decoy-" });
    let fooled = false;
    const racy: WatchFolder = (folder, listener) => {
      if (folder !== swapped || fooled) return watchFolder(folder, listener);
      fooled = true;
      return watchFolder(decoy, listener);
    };
    const walk = await watchingWalker({ watchFolder: racy });
    expect(fooled).toBe(true);
    await rename(swapped, `${swapped}.away`);
    await rename(`${swapped}.away`, swapped);
    await scan(walk);
    await mkdir(path.join(swapped, ".git"));
    expect((await scan(walk)).gitEntries).toEqual(["a6/b6/.git"]);
  });

  /** Make `count` files in each of `folders`, then the folder `repository`, from another process. */
  function flood(folders: string[], count: number, repository: string): void {
    // The child runs while this process's loop is blocked, so the queue fills, then overflows:
    // the events after that, the new repository's among them, are dropped. Distinct names, so
    // that no event is merged with the one before.
    const script = `const fs = require("node:fs"), path = require("node:path");
      const [count, repository, ...folders] = process.argv.slice(1);
      for (let index = 0; index < Number(count); index += 1)
        for (const folder of folders) fs.writeFileSync(path.join(folder, "f" + index), "");
      fs.mkdirSync(repository);`;
    execFileSync(process.execPath, ["-e", script, String(count), repository, ...folders]);
  }

  const queueLimit = () => Number(readFileSync("/proc/sys/fs/inotify/max_queued_events", "utf8"));

  it("finds a .git made after the event queue overflowed, which libuv reports to nobody", async () => {
    // Two workspaces share this thread's queue: each gets fewer events than it holds.
    const walk = await watchingWalker();
    const other = await useTempDir({ prefix: "pleach-walk-other-" });
    const otherWalk = cleanUpAfter(
      createWorkspaceWalker({ root: other, maxDirectories: 100, recentChangeMs: 0 }),
      (made) => made.close(),
    );
    await otherWalk.scan();
    expect(await otherWalk.scan()).toMatchObject({ tracking: "events" });
    flood(
      [path.join(root, "a1"), other],
      queueLimit() / 2 + 500,
      path.join(root, "a7", "b7", ".git"),
    );
    // Every folder was checked by its stamp this time; events are trusted again after.
    expect(await scan(walk)).toMatchObject({ tracking: "stamps", gitEntries: ["a7/b7/.git"] });
    await mkdir(path.join(root, "a8", ".git"));
    expect(await scan(walk)).toMatchObject({ gitEntries: ["a7/b7/.git", "a8/.git"] });
    expect(await scan(walk)).toMatchObject({ tracking: "events", listed: 0 });
  });

  it("closes its watchers on a flood of events in its tree, then watches it again", async () => {
    const walk = await watchingWalker();
    flood([path.join(root, "a1")], queueLimit() + 1_000, path.join(root, "a7", "b7", ".git"));
    expect(await scan(walk)).toMatchObject({
      tracking: "stamps",
      trackingNote: "paused after a flood of events",
      gitEntries: ["a7/b7/.git"],
    });
    await mkdir(path.join(root, "a8", ".git"));
    expect(await scan(walk)).toMatchObject({
      tracking: "stamps",
      gitEntries: ["a7/b7/.git", "a8/.git"],
    });
    // Two scans paused after a first flood; then watchers are set again.
    await scan(walk);
    await scan(walk);
    expect(await scan(walk)).toMatchObject({ tracking: "events" });
  });

  it("sets its watchers when a folder's parent became a file meanwhile", async () => {
    const walk = walker();
    await scan(walk);
    await rm(path.join(root, "a3"), { recursive: true });
    await writeFile(path.join(root, "a3"), "now a file\n");
    expect(await scan(walk)).toMatchObject({ directories: 1_111 - 111 });
    await mkdir(path.join(root, "a5", ".git"));
    expect(await scan(walk)).toMatchObject({ tracking: "events", gitEntries: ["a5/.git"] });
  });

  it("makes another barrier folder when its own was removed (a cleaner of the temporary folder)", async () => {
    const walk = await watchingWalker();
    const own = readdirSync(os.tmpdir()).filter((name) =>
      name.startsWith(`pleach-barrier-${process.pid}-`),
    );
    expect(own).toHaveLength(1);
    for (const name of own) await rm(path.join(os.tmpdir(), name), { recursive: true });
    await mkdir(path.join(root, "a2", "b2", ".git"));
    expect((await scan(walk)).gitEntries).toEqual(["a2/b2/.git"]);
    await scan(walk);
    expect(await scan(walk)).toMatchObject({ tracking: "events" });
  });

  it("falls back to stamps when the watch limit is reached (ENOSPC), closing its watchers", async () => {
    const open = new Set<FolderWatcher>();
    let allowed = 500;
    const limited: WatchFolder = (folder, listener) => {
      if (allowed-- <= 0) {
        throw Object.assign(
          new Error(`ENOSPC: System limit for number of file watchers reached, watch '${folder}'`),
          { code: "ENOSPC" },
        );
      }
      const watcher = watchFolder(folder, listener);
      open.add(watcher);
      return {
        close: () => {
          open.delete(watcher);
          watcher.close();
        },
      };
    };
    const walk = walker({ watchFolder: limited });
    await scan(walk);
    expect(await scan(walk)).toMatchObject({
      tracking: "stamps",
      trackingNote: "the inotify watch limit is reached (ENOSPC)",
    });
    expect(open.size).toBe(0);
    await mkdir(path.join(root, "a6", "b6", ".git"));
    expect(await scan(walk)).toMatchObject({ tracking: "stamps", gitEntries: ["a6/b6/.git"] });
  });

  it("reads a folder it cannot watch on every scan", async () => {
    const denied = path.join(root, "a3", "b3");
    const picky: WatchFolder = (folder, listener) => {
      if (folder === denied) throw Object.assign(new Error("EACCES"), { code: "EACCES" });
      return watchFolder(folder, listener);
    };
    const walk = await watchingWalker({ watchFolder: picky });
    expect(await scan(walk)).toMatchObject({ tracking: "events", listed: 1 });
    await mkdir(path.join(denied, ".git"));
    expect((await scan(walk)).gitEntries).toEqual(["a3/b3/.git"]);
  });

  it("closes a workspace's watchers when the cache drops it, and all of them on close", async () => {
    const other = await useTempDir({ prefix: "pleach-walk-other-" });
    await mkdir(path.join(other, "x"));
    const open: Record<string, number> = { [root]: 0, [other]: 0 };
    const counted: WatchFolder = (folder, listener) => {
      const workspace = folder.startsWith(root) ? root : other;
      const watcher = watchFolder(folder, listener);
      open[workspace] = (open[workspace] ?? 0) + 1;
      return {
        close: () => {
          open[workspace] = (open[workspace] ?? 0) - 1;
          watcher.close();
        },
      };
    };
    const cache = cleanUpAfter(
      createHostFactsCache({ maxWorkspaces: 1, recentChangeMs: 0, watchFolder: counted }),
      (made) => made.close(),
    );
    for (let scans = 0; scans < 2; scans += 1) await cache.walker(root, 100_000).scan();
    expect(open).toEqual({ [root]: 1_111, [other]: 0 });
    for (let scans = 0; scans < 2; scans += 1) await cache.walker(other, 100_000).scan();
    expect(open).toEqual({ [root]: 0, [other]: 2 });
    cache.close();
    expect(open).toEqual({ [root]: 0, [other]: 0 });
  });
});
