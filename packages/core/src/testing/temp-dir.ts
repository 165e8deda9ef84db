import { spawnSync } from "node:child_process";
import { mkdtemp, realpath, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { onTestFinished } from "vitest";

/** A fresh temporary folder (real path) and a function that removes it. */
export async function makeTempDir(
  prefix = "pleach-test-",
): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await realpath(await mkdtemp(path.join(os.tmpdir(), prefix)));
  return { dir, cleanup: () => forceRemove(dir) };
}

/**
 * Remove `target` and all in it, also folders a test made read-only (Go's module cache, a mode 555
 * fixture), as a user who removes one by hand would: make it writable, remove it.
 */
export async function forceRemove(target: string): Promise<void> {
  try {
    await rm(target, { recursive: true, force: true });
  } catch {
    spawnSync("/bin/chmod", ["-R", "u+w", target], { stdio: "ignore" });
    await rm(target, { recursive: true, force: true });
  }
}

/** Options of {@link useTempDir}. */
export interface TempDirOptions {
  /**
   * The start of the folder's name.
   * @default "pleach-test-"
   */
  prefix?: string;
  /**
   * Where the folder is made.
   * @default os.tmpdir()
   */
  parent?: string;
}

/**
 * A fresh temporary folder (its real path), removed when the current test finishes, passed or
 * failed. Call it inside a test or a `beforeEach`, where vitest knows which test it belongs to.
 * A string is the prefix.
 */
export async function useTempDir(options: string | TempDirOptions = {}): Promise<string> {
  const { prefix = "pleach-test-", parent = os.tmpdir() } =
    typeof options === "string" ? { prefix: options } : options;
  const dir = await realpath(await mkdtemp(path.join(parent, prefix)));
  onTestFinished(() => forceRemove(dir));
  return dir;
}

/**
 * Run `cleanup` when the current test finishes, passed or failed; returns `value`, as in
 * `const server = cleanUpAfter(await start(), (s) => s.close())`.
 */
export function cleanUpAfter<T>(value: T, cleanup: (value: T) => unknown): T {
  onTestFinished(async () => {
    await cleanup(value);
  });
  return value;
}
