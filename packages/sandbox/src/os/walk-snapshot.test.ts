import { chmodSync, existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { cleanUpAfter, useTempDir } from "@pleach/core/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createWorkspaceWalker } from "./folder-walk.js";

// A process's first scan starts from the walk the previous process kept, checked folder by folder
// by stamp: a changed folder is read again, an unchanged one is not read at all.

const savedRuntime = process.env.XDG_RUNTIME_DIR;
let root: string;
let walks: string;

beforeEach(async () => {
  const runtime = await useTempDir({ prefix: "pleach-runtime-" });
  process.env.XDG_RUNTIME_DIR = runtime;
  walks = path.join(runtime, `pleach-${process.getuid?.()}`, "walks");
  root = await useTempDir({ prefix: "pleach-walked-" });
  // 1,222 folders, and one nested repository.
  for (let a = 0; a < 11; a += 1) {
    for (let b = 0; b < 10; b += 1) {
      for (let c = 0; c < 10; c += 1) {
        await mkdir(path.join(root, `a${a}`, `b${b}`, `c${c}`), { recursive: true });
      }
    }
  }
  await mkdir(path.join(root, "a1", "b1", "c1", ".git"));
});
afterEach(() => {
  if (savedRuntime === undefined) delete process.env.XDG_RUNTIME_DIR;
  else process.env.XDG_RUNTIME_DIR = savedRuntime;
});

/** A walker as a fresh process would have; `recentChangeMs: 0` so that stamps vouch at once. */
function freshWalker(snapshots = true) {
  return cleanUpAfter(
    createWorkspaceWalker({
      root,
      maxDirectories: 100_000,
      recentChangeMs: 0,
      watch: false,
      snapshots,
    }),
    (made) => made.close(),
  );
}

async function keptWalk(): Promise<string> {
  await expect
    .poll(() => readdirSync(walks).filter((name) => name.endsWith(".json")).length, {
      timeout: 10_000,
    })
    .toBe(1);
  return path.join(walks, readdirSync(walks).find((name) => name.endsWith(".json")) ?? "");
}

describe("walk snapshots", () => {
  it("lets the next process read only the folders that changed since, and find what changed", async () => {
    const first = await freshWalker().scan();
    expect(first).toMatchObject({ tracking: "walk", directories: 1_222, listed: 1_222 });
    const file = await keptWalk();
    // Between the processes: a repository cloned deep down, a socket-free folder removed.
    await mkdir(path.join(root, "a7", "b7", "new", ".git"), { recursive: true });
    const next = await freshWalker().scan();
    expect(next.tracking).toBe("stamps");
    expect(next.listed).toBeLessThan(10);
    expect(next.directories).toBe(1_223);
    expect(next.gitEntries.map((entry) => path.relative(root, entry))).toEqual([
      "a1/b1/c1/.git",
      "a7/b7/new/.git",
    ]);
    expect(readFileSync(file, "utf8")).toContain('"format":"pleach-walk 3"');
  });

  it("walks the tree when the snapshot cannot be trusted: another's, open to others, malformed, of another root", async () => {
    await freshWalker().scan();
    const file = await keptWalk();
    const good = readFileSync(file, "utf8");
    const cases: Array<[string, () => void]> = [
      ["open to others", () => chmodSync(file, 0o644)],
      ["malformed", () => writeFileSync(file, good.slice(0, -10), { mode: 0o600 })],
      [
        "of another root",
        () => writeFileSync(file, good.replaceAll(root, `${root}x`), { mode: 0o600 }),
      ],
      [
        "a folder whose parent it lacks",
        () => {
          const saved = JSON.parse(good) as { entries: unknown[][] };
          saved.entries = saved.entries.filter((entry) => entry[0] !== "a3");
          writeFileSync(file, JSON.stringify(saved), { mode: 0o600 });
        },
      ],
    ];
    for (const [name, spoil] of cases) {
      writeFileSync(file, good, { mode: 0o600 });
      chmodSync(file, 0o600);
      spoil();
      const scan = await freshWalker(true).scan();
      expect({ name, tracking: scan.tracking, directories: scan.directories }).toEqual({
        name,
        tracking: "walk",
        directories: 1_222,
      });
    }
  });

  it("keeps none with snapshots off", async () => {
    await freshWalker(false).scan();
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(existsSync(walks) ? readdirSync(walks) : []).toEqual([]);
  });
});
