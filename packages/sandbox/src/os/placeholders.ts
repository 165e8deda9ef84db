import { lstatSync } from "node:fs";
import path from "node:path";
import { isInside } from "../paths.js";
import { pathState } from "./path-state.js";
import {
  createPlaceholders,
  type Identity,
  identityKey,
  identityOf,
  mayBePlaceholder,
  removePlaceholders,
  sameIdentity,
} from "./placeholder-folder.js";
import {
  otherRegistries,
  registryProblem,
  removeLeftoverPlaceholders,
  usedElsewhere,
  writeRegistry,
} from "./placeholder-registry.js";
import type { ProtectedPath } from "./protection.js";

export { removeLeftoverPlaceholders } from "./placeholder-registry.js";

interface Placeholder {
  path: string;
  identity: Identity;
  /** Leases that hold it: running commands and warm sandboxes. */
  users: number;
  /** The holders among them that run a command over it (see `command`). */
  commands: number;
  /** When an unused placeholder may be removed (epoch ms). */
  idleUntil: number;
}

const MAX_TIMER_MS = 2_147_483_647;

/** Placeholders this process holds, shared by every command and wrapper of the process. */
const placeholders = new Map<string, Placeholder>();
/**
 * Placeholders this process no longer uses but did not remove, because another live process used
 * them at the time: whichever process lets go of one last removes it.
 */
const handedOver = new Map<string, Identity>();
/** Paths about to be made (`mkdir` follows), with when (epoch ms): recorded before the `mkdir`. */
const pending = new Map<string, number>();
let exitHookInstalled = false;
let leftoversSwept = false;

/** Options of {@link acquirePlaceholders}. */
export interface AcquirePlaceholdersOptions {
  /**
   * How long a placeholder stays once no running command holds it, so that the next command
   * reuses it instead of making it again. `0` removes it as the last holder releases it.
   * @default 0
   */
  idleMs?: number;
  /**
   * Whether a command runs over the placeholders while the lease is held (rather than only a warm
   * sandbox of ours waiting for one). Such a placeholder is never removed at process exit: the
   * mount over it would go with it while the command still runs, for the moment until it dies
   * with its parent; the next start removes it instead (see {@link removeLeftoverPlaceholders}).
   * @default false
   */
  command?: boolean;
}

/** The placeholders one command holds. */
export interface PlaceholderLease {
  /**
   * The protected paths as the command must see them: `missing` where a placeholder stands that
   * this process holds (also one left from an earlier command, or one another pleach process made
   * and still uses), and the current state where the host made something meanwhile.
   */
  protectedPaths: ProtectedPath[];
  /** Let go of them; safe to call twice. */
  release(): Promise<void>;
}

/**
 * Make sure a folder of ours (mode 555, holding only an empty folder: see `PLACEHOLDER_KEEPER`)
 * stands at each missing protected path, so that the sandbox can mount over it and the command
 * cannot create the path, and so that the host's `git clean -fd` or `rm -rf` cannot remove it
 * while a command or a job runs over it (for root it is immutable too). A folder rather than a
 * file: git does not list empty folders, so `git status` stays clean while it is there.
 *
 * Placeholders are counted per process: removing a mount point on the host detaches the mount
 * inside every sandbox that has it, so a placeholder stays until the last command holding it is
 * gone, and `idleMs` longer. A placeholder is only ever removed while it is still the empty folder
 * that was made (same device, inode and change time); one the host replaced or touched is left
 * alone. What is left at exit is removed then, but for those a running command still holds.
 *
 * Every placeholder a process holds is recorded in its registry (see
 * {@link removeLeftoverPlaceholders}) before it is made, so that one a killed process leaves
 * behind is removed by the next start. Across processes: a placeholder another live pleach process
 * made is adopted (held and mounted over like one of ours) rather than taken for a folder of the
 * user's, and a placeholder is removed only by the last live process that uses it. Without a
 * registry (its folder is not private to us: another user made it first, it is open to others, a
 * link), no process can know what the others mount over, so none is ever removed (a process
 * warning says so once, and what to fix): failing closed, they stay as empty read-only folders.
 */
export function acquirePlaceholders(
  protectedPaths: readonly ProtectedPath[],
  { idleMs = 0, command = false }: AcquirePlaceholdersOptions = {},
): PlaceholderLease {
  const swept = sweepLeftoversOnce();
  const held: Placeholder[] = [];
  const seen: ProtectedPath[] = [];
  /** Indexes in `seen` of paths to make, and of folders that may be another process's placeholder. */
  const toMake: number[] = [];
  const toAdopt: number[] = [];
  let changed = false;
  const hold = (placeholder: Placeholder) => {
    placeholder.users += 1;
    if (command) placeholder.commands += 1;
    held.push(placeholder);
  };
  try {
    for (const protectedPath of coveredBy(protectedPaths, swept)) {
      const { path: target } = protectedPath;
      let { state } = protectedPath;
      const known = placeholders.get(target);
      if (known !== undefined) {
        if (sameIdentity(identityOf(target), known.identity)) {
          hold(known);
          seen.push({ ...protectedPath, state: "missing" });
          continue;
        }
        // Not ours any more: whoever holds it keeps its entry, but nobody will remove the path.
        placeholders.delete(target);
        changed = true;
      }
      if (state === "directory") {
        const info = lstatSync(target, { throwIfNoEntry: false });
        if (info === undefined || swept.has(target)) {
          // A leftover removed just now, or gone since the host was looked at: make it afresh.
          state = "missing";
        } else if (mayBePlaceholder(info)) {
          toAdopt.push(seen.length);
        }
      }
      if (state === "missing") toMake.push(seen.length);
      seen.push({ ...protectedPath, state });
    }
    if (toAdopt.length > 0 && adopt(toAdopt, seen, hold)) changed = true;
    if (toMake.length > 0) {
      changed = true;
      const since = Date.now();
      for (const index of toMake) pending.set((seen[index] as ProtectedPath).path, since);
      // Recorded before the folders exist: a kill between the two leaves a record, not a stray.
      record();
      try {
        const identities = createPlaceholders(
          toMake.map((index) => (seen[index] as ProtectedPath).path),
          since,
        );
        for (const [position, index] of toMake.entries()) {
          const protectedPath = seen[index] as ProtectedPath;
          const identity = identities[position];
          if (identity === undefined) {
            // Something appeared meanwhile: the host made it, so it is protected as what it is.
            // (Vanished again: "other" makes the mount fail, closed.)
            const now = pathState(protectedPath.path);
            seen[index] = { ...protectedPath, state: now === "missing" ? "other" : now };
            continue;
          }
          hold(takeOver(protectedPath.path, identity));
        }
      } finally {
        for (const index of toMake) pending.delete((seen[index] as ProtectedPath).path);
      }
    }
  } catch (error) {
    releaseAll(held, 0, command);
    record();
    throw error;
  }
  if (changed) record();
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.once("exit", removeAtExit);
  }
  let released = false;
  return {
    protectedPaths: seen,
    async release() {
      if (released) return;
      released = true;
      releaseAll(held, idleMs, command);
    },
  };
}

/**
 * `protectedPaths` with each path inside a placeholder this process holds (or one removed just now
 * as left over) replaced by that placeholder, once: the mount over it covers them, and making a
 * folder inside it would change it (its change time), so that it would no longer be removed.
 * (A protected path below a missing folder becomes that folder; once our placeholder stands
 * there, the paths below it are missing in turn.)
 */
function coveredBy(
  protectedPaths: readonly ProtectedPath[],
  swept: ReadonlySet<string>,
): ProtectedPath[] {
  if (placeholders.size === 0 && swept.size === 0) return [...protectedPaths];
  const covered: ProtectedPath[] = [];
  const added = new Set<string>();
  for (const protectedPath of protectedPaths) {
    let entry = protectedPath;
    for (let parent = path.dirname(entry.path); ; parent = path.dirname(parent)) {
      const known = placeholders.get(parent);
      if (
        swept.has(parent) ||
        (known !== undefined && sameIdentity(identityOf(parent), known.identity))
      ) {
        entry = { ...protectedPath, path: parent, state: "missing" };
        break;
      }
      if (path.dirname(parent) === parent) break;
    }
    if (added.has(entry.path)) continue;
    added.add(entry.path);
    covered.push(entry);
  }
  return covered;
}

/** Remove now every placeholder no running command holds (for closing a wrapper, and tests). */
export function removeIdlePlaceholders({
  under,
}: {
  /** Only those inside this folder (a workspace about to be closed or removed). @default all */
  under?: string;
} = {}): void {
  removeIdle({ now: Number.POSITIVE_INFINITY, ...(under === undefined ? {} : { under }) });
}

/** The paths of placeholders this process holds (for tests and diagnostics). */
export function livePlaceholders(): string[] {
  return [...placeholders.keys()].sort();
}

function releaseAll(held: readonly Placeholder[], idleMs: number, command: boolean): void {
  const linger = idleMs > 0; // also false for NaN
  const idleUntil = Date.now() + idleMs;
  const unused: Placeholder[] = [];
  for (const placeholder of held) {
    placeholder.users -= 1;
    if (command) placeholder.commands -= 1;
    if (placeholder.users > 0) continue;
    if (!linger) {
      if (placeholders.get(placeholder.path) === placeholder) unused.push(placeholder);
    } else {
      placeholder.idleUntil = Math.max(placeholder.idleUntil, idleUntil);
    }
  }
  if (unused.length > 0) removeAll(unused);
  // One timer per release rather than per placeholder, unref'd so that it never keeps the process
  // up; with an infinite idle time they stay until removeIdlePlaceholders() or exit.
  if (linger && Number.isFinite(idleMs) && held.length > 0) {
    const delay = Math.min(idleMs + 1, MAX_TIMER_MS);
    setTimeout(() => removeIdle({ now: Date.now() }), delay).unref();
  }
}

function removeIdle({ now, under }: { now: number; under?: string }): void {
  const idle = [...placeholders.values()].filter(
    (placeholder) =>
      placeholder.users <= 0 &&
      placeholder.idleUntil <= now &&
      (under === undefined || isInside(under, placeholder.path)),
  );
  if (idle.length > 0 || handedOver.size > 0) removeAll(idle);
}

/**
 * At exit: remove every placeholder no running command holds. One a command holds stays recorded,
 * and the next start removes it once the command is gone.
 */
function removeAtExit(): void {
  removeAll([...placeholders.values()].filter((placeholder) => placeholder.commands <= 0));
}

/**
 * Let go of `unused` (and retry the handed-over ones): each is removed if it is still the empty
 * folder that was made and no other live process uses it, else handed over to the process that
 * does; then the registry says so.
 */
function removeAll(unused: readonly Placeholder[]): void {
  let changed = unused.length > 0;
  for (const placeholder of unused) placeholders.delete(placeholder.path);
  const candidates = [
    ...unused.map(({ path: target, identity }) => ({ path: target, identity })),
    ...[...handedOver].map(([target, identity]) => ({ path: target, identity })),
  ];
  const current = candidates.filter(({ path: target, identity }) => {
    if (sameIdentity(identityOf(target), identity)) return true;
    if (handedOver.delete(target)) changed = true;
    return false;
  });
  if (current.length > 0) {
    const inUse = usedElsewhere();
    if (inUse === undefined) {
      // No registry: another pleach process of ours may mount over any of them, unknown to us,
      // and a mount point removed on the host is gone from its sandbox too. Kept, and kept in
      // view (handed over to nobody) so that this process adopts its own again.
      for (const { path: target, identity } of current) handedOver.set(target, identity);
      noteKeptPlaceholders(current.map(({ path: target }) => target));
      return;
    }
    const removable: typeof current = [];
    for (const { path: target, identity } of current) {
      if (inUse.has(identityKey(target, identity)) || inUse.has(target)) {
        // Another live process mounts over it: it removes the folder once done with it.
        handedOver.set(target, identity);
        continue;
      }
      if (handedOver.delete(target)) changed = true;
      removable.push({ path: target, identity });
    }
    removePlaceholders(removable);
  }
  if (changed) record();
}

/**
 * Adopt the folders at `indexes` of `seen` that another pleach process (live or not) recorded as
 * its placeholder, or that this one handed over: hold them like ours. Whether any was adopted.
 */
function adopt(
  indexes: readonly number[],
  seen: ProtectedPath[],
  hold: (placeholder: Placeholder) => void,
): boolean {
  const recorded = new Set<string>();
  for (const [target, identity] of handedOver) recorded.add(identityKey(target, identity));
  for (const registry of otherRegistries()) {
    for (const entry of registry.entries) {
      if (entry.identity !== undefined) recorded.add(identityKey(entry.path, entry.identity));
    }
  }
  let adopted = false;
  for (const index of indexes) {
    const protectedPath = seen[index] as ProtectedPath;
    const identity = identityOf(protectedPath.path);
    if (identity === undefined || !recorded.has(identityKey(protectedPath.path, identity))) {
      continue;
    }
    hold(takeOver(protectedPath.path, identity));
    seen[index] = { ...protectedPath, state: "missing" };
    adopted = true;
  }
  return adopted;
}

/** Count the placeholder at `target` with `identity` as this process's (made or adopted). */
function takeOver(target: string, identity: Identity): Placeholder {
  const placeholder: Placeholder = { path: target, identity, users: 0, commands: 0, idleUntil: 0 };
  placeholders.set(target, placeholder);
  handedOver.delete(target);
  return placeholder;
}

/** The first call of the process removes what killed processes left; the paths it removed. */
function sweepLeftoversOnce(): ReadonlySet<string> {
  if (leftoversSwept) return new Set();
  leftoversSwept = true;
  return new Set(removeLeftoverPlaceholders());
}

let keptNoted = false;

/**
 * Once per process, tell the user (a process warning, on the host's stderr) that placeholders stay
 * because the registry cannot be used, what to fix and what to remove.
 */
function noteKeptPlaceholders(kept: readonly string[]): void {
  if (keptNoted) return;
  keptNoted = true;
  process.emitWarning(
    `pleach cannot record its placeholders (${registryProblem() ?? "the registry is unusable"}), so it never removes one: another pleach process could be mounting over it. They stay, as empty read-only folders (${kept.slice(0, 3).join(", ")}${kept.length > 3 ? ", ..." : ""}). Remove that folder, or set XDG_RUNTIME_DIR to a folder of your own, and remove the empty folders once no pleach process runs.`,
    { code: "PLEACH_PLACEHOLDERS_KEPT" },
  );
}

/** Write this process's registry as it stands (see {@link writeRegistry}). */
function record(): void {
  writeRegistry({ held: placeholders.values(), handedOver, pending });
}
