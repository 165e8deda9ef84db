import { lstatSync, mkdirSync, rmdirSync } from "node:fs";
import type { ProtectedPath } from "./host-facts.js";

interface Identity {
  device: number;
  inode: number;
  changedMs: number;
}

interface Placeholder {
  path: string;
  identity: Identity;
  /** Running commands that hold it. */
  users: number;
  /** When an unused placeholder may be removed (epoch ms). */
  idleUntil: number;
}

const MAX_TIMER_MS = 2_147_483_647;

/** Placeholders this process created, shared by every command and wrapper of the process. */
const placeholders = new Map<string, Placeholder>();
let exitHookInstalled = false;

/** Options of {@link acquirePlaceholders}. */
export interface AcquirePlaceholdersOptions {
  /**
   * How long a placeholder stays once no running command holds it, so that the next command
   * reuses it instead of making it again. `0` removes it as the last holder releases it.
   * @default 0
   */
  idleMs?: number;
}

/** The placeholders one command holds. */
export interface PlaceholderLease {
  /**
   * The protected paths as the command must see them: `missing` where a placeholder of ours now
   * stands (also one left from an earlier command), and the current state where the host made
   * something meanwhile.
   */
  protectedPaths: ProtectedPath[];
  /** Let go of them; safe to call twice. */
  release(): Promise<void>;
}

/**
 * Make sure an empty folder of ours (mode 555) stands at each missing protected path, so that the
 * sandbox can mount over it and the command cannot create the path. A folder rather than a file:
 * git does not list empty folders, so `git status` stays clean while it is there.
 *
 * Placeholders are counted per process: removing a mount point on the host detaches the mount
 * inside every sandbox that has it, so a placeholder stays until the last command holding it is
 * gone, and `idleMs` longer. A placeholder is only ever removed while it is still the empty folder
 * this process made (same device, inode and change time); one the host replaced or touched is
 * left alone. Whatever is left at exit is removed then.
 */
export function acquirePlaceholders(
  protectedPaths: readonly ProtectedPath[],
  { idleMs = 0 }: AcquirePlaceholdersOptions = {},
): PlaceholderLease {
  const held: Placeholder[] = [];
  const seen: ProtectedPath[] = [];
  try {
    for (const protectedPath of protectedPaths) {
      const { path: target, state } = protectedPath;
      const known = placeholders.get(target);
      if (known !== undefined) {
        if (sameIdentity(identityOf(target), known.identity)) {
          known.users += 1;
          held.push(known);
          seen.push({ path: target, state: "missing" });
          continue;
        }
        // Not ours any more: whoever holds it keeps its entry, but nobody will remove the path.
        placeholders.delete(target);
      }
      if (state !== "missing") {
        seen.push(protectedPath);
        continue;
      }
      const identity = createPlaceholder(target);
      if (identity === undefined) {
        // Something appeared meanwhile: the host made it, so it is protected as what it is.
        seen.push({ path: target, state: currentState(target) ?? "other" });
        continue;
      }
      const created: Placeholder = { path: target, identity, users: 1, idleUntil: 0 };
      placeholders.set(target, created);
      held.push(created);
      seen.push(protectedPath);
    }
  } catch (error) {
    releaseAll(held, 0);
    throw error;
  }
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.once("exit", () => removeIdle({ all: true }));
  }
  let released = false;
  return {
    protectedPaths: seen,
    async release() {
      if (released) return;
      released = true;
      releaseAll(held, idleMs);
    },
  };
}

/** Remove now every placeholder no running command holds (for closing a wrapper, and tests). */
export function removeIdlePlaceholders(): void {
  removeIdle({ all: false, now: Number.POSITIVE_INFINITY });
}

/** The paths of placeholders alive in this process (for tests and diagnostics). */
export function livePlaceholders(): string[] {
  return [...placeholders.keys()].sort();
}

function releaseAll(held: readonly Placeholder[], idleMs: number): void {
  const linger = idleMs > 0; // also false for NaN
  const idleUntil = Date.now() + idleMs;
  for (const placeholder of held) {
    placeholder.users -= 1;
    if (placeholder.users > 0) continue;
    if (!linger) {
      if (placeholders.get(placeholder.path) === placeholder) remove(placeholder);
    } else {
      placeholder.idleUntil = Math.max(placeholder.idleUntil, idleUntil);
    }
  }
  // One timer per release rather than per placeholder, unref'd so that it never keeps the process
  // up; with an infinite idle time they stay until removeIdlePlaceholders() or exit.
  if (linger && Number.isFinite(idleMs) && held.length > 0) {
    const delay = Math.min(idleMs + 1, MAX_TIMER_MS);
    setTimeout(() => removeIdle({ all: false, now: Date.now() }), delay).unref();
  }
}

function removeIdle({ all, now = 0 }: { all: boolean; now?: number }): void {
  for (const placeholder of [...placeholders.values()]) {
    if (all || (placeholder.users <= 0 && placeholder.idleUntil <= now)) remove(placeholder);
  }
}

function remove(placeholder: Placeholder): void {
  placeholders.delete(placeholder.path);
  try {
    if (sameIdentity(identityOf(placeholder.path), placeholder.identity)) {
      rmdirSync(placeholder.path);
    }
  } catch {
    // Gone already, or not empty: then it is no longer ours to remove.
  }
}

// Synchronous file system calls: a dozen mkdir and rmdir calls cost less than the thread-pool
// round trips of their asynchronous forms.
function createPlaceholder(target: string): Identity | undefined {
  try {
    mkdirSync(target, { mode: 0o555 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return undefined;
    throw error;
  }
  return identityOf(target);
}

function identityOf(target: string): Identity | undefined {
  const info = lstatSync(target, { throwIfNoEntry: false });
  return info === undefined || !info.isDirectory()
    ? undefined
    : { device: info.dev, inode: info.ino, changedMs: info.ctimeMs };
}

function sameIdentity(left: Identity | undefined, right: Identity): boolean {
  return (
    left !== undefined &&
    left.device === right.device &&
    left.inode === right.inode &&
    left.changedMs === right.changedMs
  );
}

/** What is at `target` now; `undefined` when it vanished again (the mount then fails, closed). */
function currentState(target: string): ProtectedPath["state"] | undefined {
  const info = lstatSync(target, { throwIfNoEntry: false });
  if (info === undefined) return undefined;
  if (info.isSymbolicLink()) return "symbolic-link";
  if (info.isDirectory()) return "directory";
  if (info.isFile()) return "file";
  return "other";
}
