import { execFile } from "node:child_process";
import { rmSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { sweepStaleFolders } from "./stale-folders.js";

/**
 * The control folders of warm sandboxes: one private folder per sandbox in the host's temporary
 * folder, holding the FIFOs its commands write their stdout and stderr to (`out`, `err`). They
 * are removed with their sandbox, at exit, and, when a process was killed, by the next process
 * that starts one.
 */

/** The trusted `mkfifo`. */
export const MKFIFO_PATH = "/usr/bin/mkfifo";
const CONTROL_PREFIX = "pleach-warm-";
/** The FIFO folders of this process's live warm sandboxes, removed at exit if still there. */
const liveControlFolders = new Set<string>();
let exitHookInstalled = false;

/** A new control folder (mode 700) with its two FIFOs (mode 600), removed at exit if still there. */
export async function createControlFolder(): Promise<string> {
  void sweepStaleFolders(CONTROL_PREFIX);
  const control = await mkdtemp(path.join(os.tmpdir(), `${CONTROL_PREFIX}${process.pid}-`));
  liveControlFolders.add(control);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.once("exit", () => {
      for (const folder of liveControlFolders) rmSync(folder, { recursive: true, force: true });
    });
  }
  await new Promise<void>((resolve, reject) => {
    execFile(
      MKFIFO_PATH,
      ["-m", "600", "--", path.join(control, "out"), path.join(control, "err")],
      (error) => (error ? reject(error) : resolve()),
    );
  });
  return control;
}

/** Remove a folder {@link createControlFolder} made. */
export async function removeControlFolder(control: string): Promise<void> {
  await rm(control, { recursive: true, force: true });
  liveControlFolders.delete(control);
}
