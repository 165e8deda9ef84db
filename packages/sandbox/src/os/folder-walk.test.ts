import { mkdir, rename, rm, writeFile } from "node:fs/promises";
import net from "node:net";
import path from "node:path";
import { cleanUpAfter, useTempDir } from "@pleach/core/testing";
import { beforeEach, describe, expect, it } from "vitest";
import { createCommandWrapper } from "./create-command-wrapper.js";
import { createWorkspaceWalker, type WorkspaceWalker } from "./folder-walk.js";
import { createHostFactsCache } from "./host-facts.js";
import { runInvocation } from "./test-support/run-invocation.js";
import { attackSuiteSkipReason } from "./test-support/suite.js";

const noSandbox = await attackSuiteSkipReason();

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

function walker(): WorkspaceWalker {
  return cleanUpAfter(
    createWorkspaceWalker({ root, maxDirectories: 100_000, recentChangeMs: 0 }),
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

/** A walker past its first scan (the next ones read by stamps). */
async function walkedWalker() {
  const walk = walker();
  expect(await scan(walk)).toMatchObject({ tracking: "walk", directories: 1_111 });
  // Past the change times just written, so that stamps (not recency) decide.
  await new Promise((resolve) => setTimeout(resolve, 25));
  return walk;
}

async function listen(socket: string): Promise<void> {
  const server = cleanUpAfter(net.createServer(), (made) => made.close());
  server.listen(socket);
  await new Promise((resolve) => server.once("listening", resolve));
}

describe("createWorkspaceWalker, reading again the folders whose stamps moved", () => {
  it("finds a .git folder, a .git file and a socket made deep in the tree, reading only their folders", async () => {
    const walk = await walkedWalker();
    expect(await scan(walk)).toMatchObject({ tracking: "stamps", listed: 0, gitEntries: [] });
    await mkdir(path.join(root, "a3", "b4", "c5", ".git"));
    await writeFile(path.join(root, "a9", "b9", ".git"), "gitdir: ../elsewhere\n");
    await listen(path.join(root, "a1", "b2", "c3", "dev.sock"));
    expect(await scan(walk)).toMatchObject({
      tracking: "stamps",
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
      expect(found).toMatchObject({ tracking: "stamps" });
      expect(found.gitEntries.map((entry) => path.relative(root, entry))).toEqual([
        "a4/b5/c6/.git",
      ]);
      expect(found.sockets.map((socket) => path.relative(root, socket))).toEqual([
        "a6/b5/c4/cmd.sock",
      ]);
    },
  );

  it("searches a tree made after the first scan, one renamed into it, and follows a renamed folder", async () => {
    const walk = await walkedWalker();
    await mkdir(path.join(root, "new", "x", "y", ".git"), { recursive: true });
    const outside = await useTempDir({ prefix: "pleach-walk-outside-" });
    await mkdir(path.join(outside, "tree", "p", "q", ".git"), { recursive: true });
    await rename(path.join(outside, "tree"), path.join(root, "a0", "moved-in"));
    await rename(path.join(root, "a5"), path.join(root, "renamed"));
    expect(await scan(walk)).toMatchObject({
      tracking: "stamps",
      directories: 1_111 + 6,
      gitEntries: ["a0/moved-in/p/q/.git", "new/x/y/.git"],
    });
    await mkdir(path.join(root, "renamed", "b1", "c1", ".git"));
    await mkdir(path.join(root, "a0", "moved-in", "p", ".git"));
    expect((await scan(walk)).gitEntries).toEqual([
      "a0/moved-in/p/.git",
      "a0/moved-in/p/q/.git",
      "new/x/y/.git",
      "renamed/b1/c1/.git",
    ]);
  });

  it("reads a folder that replaced another at the same path, and what is below it", async () => {
    const walk = await walkedWalker();
    await rm(path.join(root, "a2"), { recursive: true });
    await mkdir(path.join(root, "a2", "b0", "c0"), { recursive: true });
    // A known name swapped for another folder of the same shape (the old one moved away).
    await rename(path.join(root, "a4", "b4"), path.join(root, "a4", "old"));
    await mkdir(path.join(root, "a4", "b4", "c4"), { recursive: true });
    expect(await scan(walk)).toMatchObject({
      tracking: "stamps",
      directories: 1_111 - 111 + 3 + 2,
    });
    await mkdir(path.join(root, "a2", "b0", "c0", ".git"));
    await mkdir(path.join(root, "a4", "b4", "c4", ".git"));
    expect((await scan(walk)).gitEntries).toEqual(["a2/b0/c0/.git", "a4/b4/c4/.git"]);
  });

  it("reads on when a folder's parent became a file meanwhile", async () => {
    const walk = walker();
    await scan(walk);
    await rm(path.join(root, "a3"), { recursive: true });
    await writeFile(path.join(root, "a3"), "now a file\n");
    expect(await scan(walk)).toMatchObject({ directories: 1_111 - 111 });
    await mkdir(path.join(root, "a5", ".git"));
    expect(await scan(walk)).toMatchObject({ tracking: "stamps", gitEntries: ["a5/.git"] });
  });
});
