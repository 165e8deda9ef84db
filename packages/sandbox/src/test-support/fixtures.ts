import { mkdtemp, realpath, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { onTestFinished } from "vitest";

/** Options of {@link tempDir}. */
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
 * failed. Call it inside a test (or a `beforeEach`), where vitest knows which test it belongs to.
 */
export async function tempDir({
  prefix = "pleach-test-",
  parent = os.tmpdir(),
}: TempDirOptions = {}): Promise<string> {
  const dir = await realpath(await mkdtemp(path.join(parent, prefix)));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** Run `cleanup` when the current test finishes; returns `value`, as in `const server = cleanUpAfter(start(), (s) => s.close())`. */
export function cleanUpAfter<T>(value: T, cleanup: (value: T) => unknown): T {
  onTestFinished(async () => {
    await cleanup(value);
  });
  return value;
}
