import { execFile } from "node:child_process";
import { rmSync } from "node:fs";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";

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
let staleSwept = false;

/** Remove the FIFO folders that processes no longer running left behind (killed, say). */
async function sweepStaleControlFolders(): Promise<void> {
  if (staleSwept) return;
  staleSwept = true;
  const entries = await readdir(os.tmpdir()).catch(() => [] as string[]);
  for (const entry of entries) {
    const owner = new RegExp(`^${CONTROL_PREFIX}(\\d+)-`).exec(entry)?.[1];
    if (owner === undefined || Number(owner) === process.pid) continue;
    try {
      process.kill(Number(owner), 0);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ESRCH") {
        await rm(path.join(os.tmpdir(), entry), { recursive: true, force: true }).catch(() => {});
      }
    }
  }
}

/** A new control folder (mode 700) with its two FIFOs (mode 600), removed at exit if still there. */
export async function createControlFolder(): Promise<string> {
  void sweepStaleControlFolders();
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
