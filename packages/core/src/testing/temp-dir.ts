import { mkdtemp, realpath, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { onTestFinished } from "vitest";

/** A fresh temporary folder (real path) and a function that removes it. */
export async function makeTempDir(
  prefix = "pleach-test-",
): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await realpath(await mkdtemp(path.join(os.tmpdir(), prefix)));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/**
 * A fresh temporary folder (real path) removed when the current test finishes, passed or failed.
 * Call it inside a test (or a `beforeEach`'s test), not at a suite's top level.
 */
export async function useTempDir(prefix = "pleach-test-"): Promise<string> {
  const { dir, cleanup } = await makeTempDir(prefix);
  onTestFinished(cleanup);
  return dir;
}
