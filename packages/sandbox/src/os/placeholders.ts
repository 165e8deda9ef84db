import { lstatSync, mkdirSync, rmdirSync } from "node:fs";
import type { ProtectedPath } from "./host-facts.js";

interface Identity {
  device: number;
  inode: number;
}

interface Placeholder {
  users: number;
  /** Settles once the folder exists; `undefined` when someone else made the path first. */
  created: Promise<Identity | undefined>;
  identity?: Identity;
}

/** Placeholders this process created, shared by concurrent commands in the same workspace. */
const placeholders = new Map<string, Placeholder>();
let exitHookInstalled = false;

/**
 * Create an empty, read-only folder at each missing protected path (and hold the ones another
 * running command of this process created, which look present), so that a read-only mount can
 * sit there and the command cannot create the path. A folder rather than a file: git does not list
 * empty folders, so `git status` stays clean while the command runs. Returns the release that
 * removes what this call created once no other running command uses it.
 *
 * Placeholders are counted per process, and registered before the folder is made: removing a
 * mount point on the host detaches the mount inside every sandbox that has it, so a placeholder
 * stays until the last command using it is gone.
 */
export async function acquirePlaceholders(
  protectedPaths: readonly ProtectedPath[],
): Promise<() => Promise<void>> {
  const held: string[] = [];
  const pending: Promise<Identity | undefined>[] = [];
  for (const { path: target, state } of protectedPaths) {
    let placeholder = placeholders.get(target);
    if (placeholder === undefined) {
      // A present path that is not one of ours belongs to the host; nothing to create or remove.
      if (state !== "missing") continue;
      const created = createPlaceholder(target);
      const entry: Placeholder = { users: 0, created };
      placeholders.set(target, entry);
      created.then(
        (identity) => {
          if (identity !== undefined) entry.identity = identity;
        },
        () => {},
      );
      placeholder = entry;
    }
    placeholder.users += 1;
    held.push(target);
    pending.push(placeholder.created);
  }
  const outcomes = await Promise.allSettled(pending);
  const failed = outcomes.find((outcome) => outcome.status === "rejected");
  const failure = failed === undefined ? undefined : (failed as PromiseRejectedResult).reason;
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.once("exit", removeAllPlaceholdersNow);
  }
  let released = false;
  const release = async () => {
    if (released) return;
    released = true;
    await Promise.all(held.map((target) => releaseOne(target)));
  };
  if (failure !== undefined) {
    await release();
    throw failure;
  }
  return release;
}

async function releaseOne(target: string): Promise<void> {
  const placeholder = placeholders.get(target);
  if (placeholder === undefined) return;
  placeholder.users -= 1;
  if (placeholder.users > 0) return;
  placeholders.delete(target);
  const identity = await placeholder.created.catch(() => undefined);
  if (identity === undefined) return;
  try {
    const info = lstatSync(target);
    if (info.dev === identity.device && info.ino === identity.inode) rmdirSync(target);
  } catch {
    // Gone already, or not empty: then it is no longer ours to remove.
  }
}

// Synchronous file system calls here and in releaseOne: a dozen mkdir and rmdir calls cost less
// than the thread-pool round trips of their asynchronous forms.
async function createPlaceholder(target: string): Promise<Identity | undefined> {
  try {
    mkdirSync(target, { mode: 0o555 });
  } catch (error) {
    // Something appeared meanwhile (the host made it); it is bound read-only like any present path.
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return undefined;
    throw error;
  }
  const info = lstatSync(target);
  return { device: info.dev, inode: info.ino };
}

/** The paths of placeholders alive in this process (for tests and diagnostics). */
export function livePlaceholders(): string[] {
  return [...placeholders.keys()].sort();
}

function removeAllPlaceholdersNow(): void {
  for (const [target, placeholder] of placeholders) {
    const identity = placeholder.identity;
    if (identity === undefined) continue;
    try {
      const info = lstatSync(target);
      if (info.dev === identity.device && info.ino === identity.inode) rmdirSync(target);
    } catch {
      // Best effort at exit.
    }
  }
  placeholders.clear();
}
