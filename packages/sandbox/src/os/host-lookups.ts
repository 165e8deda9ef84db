import {
  type BigIntStats,
  closeSync,
  constants,
  type Dirent,
  fstatSync,
  lstatSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  type Stats,
  statSync,
} from "node:fs";
import path from "node:path";

/**
 * The lookups of the host's file system that a sandbox policy is computed from: `lstat`, `stat`,
 * `realpath`, folder listings and small reads. Each walks its path component by component, as
 * the kernel does, and answers as the plain call would (an error the walk cannot tell apart is
 * left to the plain call). Inside a recording ({@link recordLookups}) each also notes what its
 * answer depends on, so that the policy can be kept while none of it changes (`lookup-memo.ts`):
 *
 * - every folder in which a name was looked up, as the kernel walks a path (each component in
 *   the real folder it lies in, symbolic links followed to their targets), and every folder
 *   listed: an entry created, removed, renamed or changed in one is an inotify event there;
 * - every file whose content was read, with what the read returned: a write through a hard link
 *   elsewhere or through a shared memory map makes no event in its folder, and a write through a
 *   map that was written to before moves no stamp either (the kernel dates only the first write to
 *   a page until it writes the page back), so only reading it again tells.
 */

/** A file read for the policy: the most bytes read, and the text the read returned. */
export interface FileRead {
  maxBytes: number;
  text: string;
}

/** What a recording found the computation to depend on. */
export interface Lookups {
  /** Real paths of the folders whose entries were looked up or listed. */
  folders: Set<string>;
  /** Files whose content was read, with what each read returned. */
  files: Map<string, FileRead>;
  /** What each path looked up was, by its path. */
  steps: ReadonlyMap<string, Step>;
}

interface Recording extends Lookups {
  steps: Map<string, Step>;
}

/** What one path is: a folder, a link (and where to), something else, missing, or not to be had. */
export type Step =
  | { kind: "folder" | "other"; info: Stats }
  | { kind: "link"; info: Stats; to: string }
  | { kind: "missing" | "error" };

let recording: Recording | undefined;

/** Run `compute` (synchronous), noting every lookup it makes through this module. */
export function recordLookups<T>(compute: () => T): { value: T; lookups: Lookups } {
  const outer = recording;
  const own: Recording = { folders: new Set(), files: new Map(), steps: outer?.steps ?? new Map() };
  recording = own;
  try {
    return {
      value: compute(),
      lookups: { folders: own.folders, files: own.files, steps: own.steps },
    };
  } finally {
    recording = outer;
    if (outer !== undefined) {
      for (const folder of own.folders) outer.folders.add(folder);
      for (const [file, read] of own.files) outer.files.set(file, read);
    }
  }
}

/** Symbolic links followed on one path before giving up, as Linux does (ELOOP). */
const MAX_LINKS = 40;

/** One step of a walk: what `next` is, looked at once per recording. */
function step(steps: Map<string, Step>, next: string): Step {
  let known = steps.get(next);
  if (known !== undefined) return known;
  known = currentStep(next);
  steps.set(next, known);
  return known;
}

/** What `target` is now (its final symbolic link not followed). */
export function currentStep(target: string): Step {
  try {
    const info = lstatSync(target, { throwIfNoEntry: false });
    if (info === undefined) return { kind: "missing" };
    if (info.isSymbolicLink()) return { kind: "link", info, to: readlinkSync(target) };
    return { kind: info.isDirectory() ? "folder" : "other", info };
  } catch {
    return { kind: "error" };
  }
}

/** Whether two looks at a path found the same: the same inode, unchanged since (its change time). */
export function sameStep(before: Step, now: Step): boolean {
  if (before.kind !== now.kind) return false;
  if (!("info" in before) || !("info" in now)) return true;
  if (before.kind === "link" && now.kind === "link" && before.to !== now.to) return false;
  const [was, is] = [before.info, now.info];
  return (
    was.dev === is.dev &&
    was.ino === is.ino &&
    was.mode === is.mode &&
    was.uid === is.uid &&
    was.ctimeMs === is.ctimeMs &&
    was.mtimeMs === is.mtimeMs &&
    was.size === is.size
  );
}

/**
 * Where a walk ended: the real path reached and what is there, or why it stopped (at a missing
 * component: where the path leads, the missing rest appended).
 */
type Walked =
  | { reached: string; info: Stats }
  | { stopped: "missing"; leadsTo: string }
  | { stopped: "error" };

/**
 * Walk to `target` (absolute) as the kernel does: each component looked up in the real folder it
 * lies in, symbolic links followed (a final one only when `followLast`). In a recording, each
 * folder looked in is noted. A component that is no folder, a loop or an error stops it as
 * `error` (the plain call then says what the kernel says).
 */
function walk(target: string, followLast: boolean): Walked {
  const noted = recording;
  const steps = noted?.steps ?? new Map<string, Step>();
  const pending = target.split("/").filter((name) => name !== "" && name !== ".");
  pending.reverse();
  let resolved = "/";
  let info: Stats | undefined;
  let links = 0;
  while (pending.length > 0) {
    const name = pending.pop() as string;
    if (name === "..") {
      resolved = path.dirname(resolved);
      info = undefined;
      continue;
    }
    noted?.folders.add(resolved);
    const next = path.join(resolved, name);
    const found = step(steps, next);
    if (found.kind === "missing") {
      return { stopped: "missing", leadsTo: path.join(next, ...[...pending].reverse()) };
    }
    if (!("info" in found)) return { stopped: "error" };
    const last = pending.length === 0;
    if (found.kind === "link" && (!last || followLast)) {
      links += 1;
      if (links > MAX_LINKS) return { stopped: "error" };
      if (found.to.startsWith("/")) resolved = "/";
      const parts = found.to.split("/").filter((part) => part !== "" && part !== ".");
      for (let index = parts.length - 1; index >= 0; index -= 1) {
        pending.push(parts[index] as string);
      }
      info = undefined;
      continue;
    }
    if (!last && found.kind !== "folder") return { stopped: "error" };
    resolved = next;
    info = found.info;
  }
  // A walk ending on ".." (or at "/") has the folder's own information still to look up.
  info ??= lstatSync(resolved);
  return { reached: resolved, info };
}

/**
 * `lstat` of `target`, `undefined` when missing or past a link loop (a command can make one on
 * the way to a path the policy looks at; nothing can be reached there). Other errors throw, as
 * `lstatSync` does.
 */
export function lookupLstat(target: string): Stats | undefined {
  const walked = walk(target, false);
  if ("reached" in walked) return walked.info;
  if (walked.stopped === "missing") return undefined;
  try {
    return lstatSync(target, { throwIfNoEntry: false });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ELOOP") return undefined;
    throw error;
  }
}

/** The same with nanosecond times, throwing when missing. */
export function lookupLstatExact(target: string): BigIntStats {
  walk(target, false);
  return lstatSync(target, { bigint: true });
}

/**
 * What is at `target`, following links, or `undefined` when nothing the caller can reach is there
 * (missing, a file where a folder was expected, a folder it may not search): the sandbox keeps the
 * caller's uid, so a command cannot reach it either.
 */
export function lookupStat(target: string): Stats | undefined {
  const walked = walk(target, true);
  return "reached" in walked ? walked.info : undefined;
}

/** The real path of `target` (throws as `realpathSync.native` does when it has none). */
export function lookupRealpath(target: string): string {
  const walked = walk(target, true);
  return "reached" in walked ? walked.reached : realpathSync.native(target);
}

/**
 * Where `target` leads, every symbolic link on the way (the final one too) followed as the kernel
 * would, and what does not exist yet appended as spelled: for a dangling link, the path a command
 * would create to make it lead somewhere. `target` itself when the walk fails otherwise.
 */
export function lookupLeadsTo(target: string): string {
  const walked = walk(target, true);
  if ("reached" in walked) return walked.reached;
  return walked.stopped === "missing" ? walked.leadsTo : target;
}

/** The entries of `folder` (throws as `readdirSync` does). */
export function lookupFolder(folder: string): Dirent[] {
  const walked = walk(folder, true);
  if ("reached" in walked) recording?.folders.add(walked.reached);
  return readdirSync(folder, { withFileTypes: true });
}

/**
 * What each entry of `folder` is (its `lstat`, `undefined` for one gone meanwhile), next to its
 * listing; throws as `readdirSync` does. The folder is recorded as listed, which covers its
 * entries: a change to one's mode or owner, or one replaced, is an event in the folder. So each
 * entry takes one plain `lstat` rather than a walk of its whole path.
 */
export function lookupFolderEntries(folder: string): { entry: Dirent; info: Stats | undefined }[] {
  return lookupFolder(folder).map((entry) => {
    let info: Stats | undefined;
    try {
      info = lstatSync(path.join(folder, entry.name));
    } catch {
      info = undefined;
    }
    return { entry, info };
  });
}

/**
 * A small file's text (symbolic links followed), or "" when it is missing, unreadable, not a
 * regular file or over `maxBytes`. Opened only when it is a regular file, once, non-blocking, and
 * judged on what was opened: a command can swap a file of a repository it made for a FIFO, which
 * a read by name would wait on forever.
 */
export function lookupSmallFile(file: string, maxBytes: number): string {
  walk(file, true);
  const text = smallFileText(file, maxBytes);
  recording?.files.set(file, { maxBytes, text });
  return text;
}

/** What {@link lookupSmallFile} returns for `file` now, noting nothing. */
export function smallFileText(file: string, maxBytes: number): string {
  // Only a regular file is opened: a config a command wrote can name a device, whose open can act
  // (a watchdog arms, a tape rewinds). One swapped in after this look is judged on what was opened.
  try {
    if (statSync(file, { throwIfNoEntry: false })?.isFile() !== true) return "";
  } catch {
    return "";
  }
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch {
    return "";
  }
  try {
    const info = fstatSync(fd);
    if (!info.isFile() || info.size > maxBytes) return "";
    return readFileSync(fd, "utf8");
  } catch {
    return "";
  } finally {
    closeSync(fd);
  }
}
