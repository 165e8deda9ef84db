import {
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmdirSync,
  type Stats,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { privateFolderProblem } from "../private-folder.js";
import {
  formatProcessKey,
  ownProcessKey,
  type ProcessKey,
  parseProcessKey,
  processState,
} from "../process-key.js";
import type { ProtectedPath } from "./host-facts.js";

interface Identity {
  device: number;
  inode: number;
  changedMs: number;
}

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
 * Make sure an empty folder of ours (mode 555) stands at each missing protected path, so that the
 * sandbox can mount over it and the command cannot create the path. A folder rather than a file:
 * git does not list empty folders, so `git status` stays clean while it is there.
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
 * user's, and a placeholder is removed only by the last live process that uses it.
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
      writeRegistry();
      try {
        for (const index of toMake) {
          const protectedPath = seen[index] as ProtectedPath;
          const identity = createPlaceholder(protectedPath.path, since);
          if (identity === undefined) {
            // Something appeared meanwhile: the host made it, so it is protected as what it is.
            seen[index] = { ...protectedPath, state: currentState(protectedPath.path) ?? "other" };
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
    writeRegistry();
    throw error;
  }
  if (changed) writeRegistry();
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
export function removeIdlePlaceholders(): void {
  removeIdle({ now: Number.POSITIVE_INFINITY });
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

function removeIdle({ now }: { now: number }): void {
  const idle = [...placeholders.values()].filter(
    (placeholder) => placeholder.users <= 0 && placeholder.idleUntil <= now,
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
    for (const { path: target, identity } of current) {
      if (inUse.has(identityKey(target, identity)) || inUse.has(target)) {
        // Another live process mounts over it: it removes the folder once done with it.
        handedOver.set(target, identity);
        continue;
      }
      if (handedOver.delete(target)) changed = true;
      removeIfSame(target, identity);
    }
  }
  if (changed) writeRegistry();
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

// Synchronous file system calls: a dozen mkdir and rmdir calls cost less than the thread-pool
// round trips of their asynchronous forms.
function createPlaceholder(target: string, pendingSinceMs: number): Identity | undefined {
  try {
    mkdirSync(target, { mode: 0o555 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return undefined;
    throw error;
  }
  // Marked at once with a modification time no folder made now has, derived from the record, so
  // that a run killed before it records the identity leaves a folder the next start can tell
  // from one the user made since; killed between the mkdir and this, it is left alone.
  const mark = markOf(pendingSinceMs) / 1000;
  utimesSync(target, mark, mark);
  return identityOf(target);
}

/** Twenty years, in milliseconds: how far a placeholder's mark lies before its record. */
const MARK_OFFSET_MS = 20 * 365 * 24 * 3_600_000;

/** The modification time (ms) a placeholder recorded as about to be made at `since` is marked with. */
function markOf(since: number): number {
  return Math.floor(since) - MARK_OFFSET_MS;
}

/** Remove `target` if it is still the empty folder with `identity`; whether it was removed. */
function removeIfSame(target: string, identity: Identity): boolean {
  try {
    if (sameIdentity(identityOf(target), identity)) {
      rmdirSync(target);
      return true;
    }
  } catch {
    // Gone already, or not empty: then it is no longer ours to remove.
  }
  return false;
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

function identityKey(target: string, { device, inode, changedMs }: Identity): string {
  return `${device}:${inode}:${changedMs}:${target}`;
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

/** Whether a folder looks like a placeholder: ours, mode 555 (then the registries say). */
function mayBePlaceholder(info: Stats | undefined): info is Stats {
  return (
    info?.isDirectory() === true &&
    info.uid === process.getuid?.() &&
    (info.mode & 0o7777) === 0o555
  );
}

// --- The registry -------------------------------------------------------------------------------
//
// Each process records the placeholders it holds in a file of its own, in a folder private to the
// user: `${XDG_RUNTIME_DIR:-/tmp}/pleach-<uid>/placeholders/`. The file is named after the process
// (`<boot id>.<pid namespace>.<pid>.<start time>.jsonl`, the start time in clock ticks since boot
// from /proc/<pid>/stat), so that whether the process still runs is known from the name alone,
// and it holds one JSON line per placeholder: its path and identity, or its path and when it was
// about to be made. It is rewritten whole (a temporary file renamed over it) on every change, and
// removed once the process holds nothing.

const REGISTRY_HEADER = "pleach-placeholders 1";
const REGISTRY_NAME = /^([0-9a-f-]{36}\.\d+\.\d+\.\d+)\.(jsonl|claim\.jsonl|tmp)$/;

interface RegistryEntry {
  path: string;
  identity?: Identity;
  pendingSinceMs?: number;
}

interface Registry {
  folder: string;
  own: ProcessKey;
  ownName: string;
  file: string;
  temporary: string;
  claim: string;
  /** Whether our file exists now. */
  written: boolean;
}

/** The registry, once set up; `null` when it cannot be used here (the cleanup after a kill is off). */
let registry: Registry | null | undefined;

/**
 * Remove the placeholders that pleach processes no longer running left behind (killed by a signal
 * or SIGKILL, or ended while a command still held them), and only those: each one recorded in such
 * a process's registry that is still the empty folder it made, with the same device, inode and
 * change time, and that no live pleach process uses. A folder the user made, even an empty
 * read-only one at the same path, has another identity and stays. A registry cut short (a power
 * loss) is read as far as it goes. Returns the paths removed.
 *
 * The first {@link acquirePlaceholders} of a process calls it; a few system calls when nothing was
 * left behind. Needs Linux's `/proc`; elsewhere, or when the registry folder cannot be trusted (a
 * symbolic link, another owner, or open to group or others), it does nothing.
 */
export function removeLeftoverPlaceholders(): string[] {
  const listed = registryNames();
  if (listed === undefined) return [];
  const { target, names } = listed;
  const removed: string[] = [];
  // What live processes use, read once for all the dead registries.
  let inUse: Set<string> | undefined;
  for (const name of names) {
    const owner = parseRegistryName(name);
    if (owner === undefined || owner.name === target.ownName) continue;
    if (processState(owner.key, target.own) !== "dead") continue;
    const file = path.join(target.folder, name);
    if (owner.suffix === "tmp") {
      unlinkQuietly(file);
      continue;
    }
    // Claimed first (renamed to a name of ours), so that two processes starting at once do not
    // both work through it; one killed meanwhile leaves a claim that the next start takes over.
    try {
      renameSync(file, target.claim);
    } catch {
      continue;
    }
    try {
      const entries = readRegistry(target.claim);
      if (entries.length === 0) continue;
      inUse ??= usedElsewhere();
      for (const entry of entries) {
        // Recorded only as about to be made (killed before the folder's identity was written):
        // taken for the folder made then only if it carries that record's mark (see markOf).
        const identity =
          entry.identity ?? (markedWhenPending(entry) ? identityOf(entry.path) : undefined);
        if (identity === undefined || inUse.has(entry.path)) continue;
        if (inUse.has(identityKey(entry.path, identity))) continue;
        if (removeIfSame(entry.path, identity)) removed.push(entry.path);
      }
    } finally {
      unlinkQuietly(target.claim);
    }
  }
  return removed;
}

/** The first call of the process removes what killed processes left; the paths it removed. */
function sweepLeftoversOnce(): ReadonlySet<string> {
  if (leftoversSwept) return new Set();
  leftoversSwept = true;
  return new Set(removeLeftoverPlaceholders());
}

/** Whether a placeholder recorded only as about to be made is ours: empty-looking, 555, marked. */
function markedWhenPending({ path: target, pendingSinceMs }: RegistryEntry): boolean {
  if (pendingSinceMs === undefined) return false;
  const info = lstatSync(target, { throwIfNoEntry: false });
  return mayBePlaceholder(info) && Math.abs(info.mtimeMs - markOf(pendingSinceMs)) < 1;
}

/**
 * What other live pleach processes use (and may mount over): `identityKey`s of the placeholders
 * they hold, and the paths they are about to make. A process whose liveness cannot be told (another
 * pid namespace) counts as live.
 */
function usedElsewhere(): Set<string> {
  const used = new Set<string>();
  const target = openRegistry();
  if (target === undefined) return used;
  for (const other of otherRegistries()) {
    if (other.state === "dead") continue;
    for (const entry of other.entries) {
      if (entry.identity !== undefined && !entry.handedOver) {
        used.add(identityKey(entry.path, entry.identity));
      } else if (entry.pendingSinceMs !== undefined) {
        used.add(entry.path);
      }
    }
  }
  return used;
}

/** Every registry but ours (claims included), read now, with whether its process still runs. */
function otherRegistries(): Array<{
  state: "alive" | "dead" | "unknown";
  entries: Array<RegistryEntry & { handedOver?: boolean }>;
}> {
  const listed = registryNames();
  if (listed === undefined) return [];
  const { target, names } = listed;
  const registries = [];
  for (const name of names) {
    const owner = parseRegistryName(name);
    if (owner === undefined || owner.suffix === "tmp" || owner.name === target.ownName) continue;
    registries.push({
      state: processState(owner.key, target.own),
      entries: readRegistry(path.join(target.folder, name)),
    });
  }
  return registries;
}

/** Write our registry as it stands: what we hold, hand over or are about to make. */
function writeRegistry(): void {
  const target = openRegistry();
  if (target === undefined) return;
  const lines: string[] = [];
  for (const { path: target, identity } of placeholders.values()) {
    lines.push(JSON.stringify({ path: target, ...identity }));
  }
  for (const [target, identity] of handedOver) {
    lines.push(JSON.stringify({ path: target, ...identity, handedOver: true }));
  }
  for (const [target, since] of pending) {
    lines.push(JSON.stringify({ path: target, pendingSinceMs: since }));
  }
  try {
    if (lines.length === 0) {
      if (target.written) unlinkQuietly(target.file);
      target.written = false;
      return;
    }
    writeFileSync(target.temporary, `${REGISTRY_HEADER}\n${lines.join("\n")}\n`, { mode: 0o600 });
    renameSync(target.temporary, target.file);
    target.written = true;
  } catch {
    // A registry that cannot be written only costs the cleanup after a kill; placeholders still
    // protect, and exit removes them.
  }
}

/** The entries of a registry file, as far as it could be read (a line cut short is skipped). */
function readRegistry(file: string): Array<RegistryEntry & { handedOver?: boolean }> {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return [];
  }
  const lines = text.split("\n");
  if (lines[0] !== REGISTRY_HEADER) return [];
  const entries: Array<RegistryEntry & { handedOver?: boolean }> = [];
  for (const line of lines.slice(1)) {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      continue;
    }
    const entry = registryEntry(value);
    if (entry !== undefined) entries.push(entry);
  }
  return entries;
}

function registryEntry(value: unknown): (RegistryEntry & { handedOver?: boolean }) | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const record = value as Record<string, unknown>;
  const { path: target, device, inode, changedMs, pendingSinceMs, handedOver } = record;
  if (typeof target !== "string" || !path.isAbsolute(target) || target.includes("\0")) {
    return undefined;
  }
  if (isNumber(device) && isNumber(inode) && isNumber(changedMs)) {
    return {
      path: path.normalize(target),
      identity: { device, inode, changedMs },
      ...(handedOver === true ? { handedOver: true } : {}),
    };
  }
  if (isNumber(pendingSinceMs)) return { path: path.normalize(target), pendingSinceMs };
  return undefined;
}

function isNumber(value: unknown): value is number {
  return typeof value === "number" && Number.isFinite(value);
}

/** Our registry and the names in its folder now; `undefined` when either cannot be had. */
function registryNames(): { target: Registry; names: string[] } | undefined {
  const target = openRegistry();
  if (target === undefined) return undefined;
  try {
    return { target, names: readdirSync(target.folder) };
  } catch {
    return undefined;
  }
}

/** Our registry, set up on first use (the folder made and checked); `undefined` when unusable. */
function openRegistry(): Registry | undefined {
  if (registry !== undefined) return registry ?? undefined;
  registry = null;
  const own = ownProcessKey();
  const folder = registryFolder();
  if (own === undefined || folder === undefined) return undefined;
  const ownName = formatProcessKey(own);
  registry = {
    folder,
    own,
    ownName,
    file: path.join(folder, `${ownName}.jsonl`),
    temporary: path.join(folder, `${ownName}.tmp`),
    claim: path.join(folder, `${ownName}.claim.jsonl`),
    written: false,
  };
  return registry;
}

/**
 * `${XDG_RUNTIME_DIR:-/tmp}/pleach-<uid>/placeholders`, made (mode 700) when missing; `undefined`
 * unless both folders are real folders of our uid that group and others cannot enter.
 */
function registryFolder(): string | undefined {
  const uid = process.getuid?.();
  if (uid === undefined) return undefined;
  const runtime = process.env.XDG_RUNTIME_DIR;
  const base = runtime !== undefined && path.isAbsolute(runtime) ? runtime : "/tmp";
  const top = path.join(base, `pleach-${uid}`);
  const folder = path.join(top, "placeholders");
  return privateFolder(top, uid) && privateFolder(folder, uid) ? folder : undefined;
}

function privateFolder(folder: string, uid: number): boolean {
  try {
    mkdirSync(folder, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") return false;
  }
  return privateFolderProblem(lstatSync(folder, { throwIfNoEntry: false }), uid) === undefined;
}

function parseRegistryName(
  name: string,
): { key: ProcessKey; name: string; suffix: string } | undefined {
  const match = REGISTRY_NAME.exec(name);
  if (match === null) return undefined;
  const [, keyText = "", suffix = ""] = match;
  const key = parseProcessKey(keyText);
  return key === undefined ? undefined : { key, name: formatProcessKey(key), suffix };
}

function unlinkQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // Gone already.
  }
}

/** The variable that tells a confined command which folders it sees are placeholders. */
export const PLACEHOLDERS_VARIABLE = "PLEACH_PLACEHOLDERS";

/**
 * `env` with {@link PLACEHOLDERS_VARIABLE} set to the absolute paths of the placeholders among
 * `protectedPaths` (those a lease gives as `missing`), one a line, so that a tool listing folders
 * from inside the sandbox (`list_files`) can leave them out. A path holding a newline cannot be
 * told apart in that list and is left out of it (only a workspace or nested repository whose own
 * path holds a newline gives one). Any value the caller gave is replaced.
 */
export function withPlaceholdersVariable(
  env: Readonly<Record<string, string>>,
  protectedPaths: readonly ProtectedPath[],
): Record<string, string> {
  const paths = protectedPaths
    .filter(({ path: target, state }) => state === "missing" && !target.includes("\n"))
    .map(({ path: target }) => target);
  return { ...env, [PLACEHOLDERS_VARIABLE]: paths.join("\n") };
}
