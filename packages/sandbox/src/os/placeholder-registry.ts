import {
  lstatSync,
  readdirSync,
  readFileSync,
  renameSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import {
  formatProcessKey,
  ownProcessKey,
  type ProcessKey,
  parseProcessKey,
  processState,
} from "../process-key.js";
import {
  type Identity,
  identityKey,
  identityOf,
  markOf,
  mayBePlaceholder,
  removeIfSame,
} from "./placeholder-folder.js";
import { userStateFolder } from "./user-state-folder.js";

/**
 * The registry of placeholders, across the pleach processes of one user.
 *
 * Each process records the placeholders it holds in a file of its own, in a folder private to the
 * user: `${XDG_RUNTIME_DIR:-/tmp}/pleach-<uid>/placeholders/`. The file is named after the process
 * (`<boot id>.<pid namespace>.<pid>.<start time>.jsonl`, the start time in clock ticks since boot
 * from /proc/<pid>/stat), so that whether the process still runs is known from the name alone,
 * and it holds one JSON line per placeholder: its path and identity, or its path and when it was
 * about to be made. It is rewritten whole (a temporary file renamed over it) on every change, and
 * removed once the process holds nothing.
 */

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

/**
 * The registry, once set up; `{ problem }` when it cannot be used here: then nothing is recorded,
 * and nothing removed (see {@link usedElsewhere}).
 */
let registry: Registry | { problem: string } | undefined;

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
      inUse ??= usedElsewhere() ?? new Set();
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

/** Whether a placeholder recorded only as about to be made is ours: empty-looking, 555, marked. */
function markedWhenPending({ path: target, pendingSinceMs }: RegistryEntry): boolean {
  if (pendingSinceMs === undefined) return false;
  const info = lstatSync(target, { throwIfNoEntry: false });
  return mayBePlaceholder(info) && Math.abs(info.mtimeMs - markOf(pendingSinceMs)) < 1;
}

/**
 * What other live pleach processes use (and may mount over): `identityKey`s of the placeholders
 * they hold, and the paths they are about to make. A process whose liveness cannot be told (another
 * pid namespace) counts as live. `undefined` when that cannot be known, the registry being
 * unusable ({@link registryProblem}): another process may then mount over any placeholder, so
 * none may be removed.
 */
export function usedElsewhere(): Set<string> | undefined {
  const used = new Set<string>();
  const target = openRegistry();
  if (target === undefined) return undefined;
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
export function otherRegistries(): Array<{
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
export function writeRegistry({
  held,
  handedOver,
  pending,
}: {
  held: Iterable<{ path: string; identity: Identity }>;
  handedOver: ReadonlyMap<string, Identity>;
  pending: ReadonlyMap<string, number>;
}): void {
  const target = openRegistry();
  if (target === undefined) return;
  const lines: string[] = [];
  for (const { path: target, identity } of held) {
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

/**
 * Why the registry cannot be used in this process (its folder is not a private folder of ours:
 * another user made it first, it is open to others, a link; or the platform has no `/proc`), or
 * `undefined` when it can.
 */
export function registryProblem(): string | undefined {
  openRegistry();
  return registry !== undefined && "problem" in registry ? registry.problem : undefined;
}

/** Our registry, set up on first use (the folder made and checked); `undefined` when unusable. */
function openRegistry(): Registry | undefined {
  if (registry !== undefined) return "problem" in registry ? undefined : registry;
  const own = ownProcessKey();
  const state = userStateFolder("placeholders");
  if (own === undefined) {
    registry = { problem: "this process cannot tell its own start time (no /proc)" };
    return undefined;
  }
  if (!("folder" in state)) {
    registry = state;
    return undefined;
  }
  const { folder } = state;
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
