import { type Dirent, readdirSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { isInside } from "../paths.js";
import { lstatOr, realpathOr, statOr } from "./path-state.js";

// What of the host commands in `read-only` and `workspace-write` see: an allow-list, not the host
// minus a list. The system's folders are shown (less their secret files, see `hidden-reads.ts`);
// every other entry at the top of the host is emptied, and so is every home; then the toolchains
// on `PATH`, what `allowReads` names and the workspace are shown again, read-only. A store no list
// names, or one moved by a variable, is out of reach whatever its name.

/**
 * The folders at the top of the host that are the system's: its programs, libraries and
 * configuration, which every command needs. `/proc`, `/sys`, `/dev`, `/tmp` and `/run` are the
 * sandbox's own (bubblewrap mounts fresh ones or hides them). Everything else at the top (`/home`,
 * `/root`, `/mnt`, `/media`, `/srv`, a data folder, ...) is emptied.
 */
const SYSTEM_FOLDERS: readonly string[] = [
  "/usr",
  "/bin",
  "/sbin",
  "/lib",
  "/lib32",
  "/lib64",
  "/libx32",
  "/etc",
  "/opt",
  "/var",
  "/nix",
];
const SANDBOX_OWN = ["/proc", "/sys", "/dev", "/tmp", "/run"];
/** The system's folders and the sandbox's own: no folder commands may write overlaps one (`writableFolders`). */
export const HOST_FOLDERS: readonly string[] = [...SYSTEM_FOLDERS, ...SANDBOX_OWN];
/** The sandbox's own folders that are memory file systems, empty at its start. */
const MEMORY_FOLDERS = ["/tmp", "/run"];
/** The names of a `PATH` entry whose parent is the toolchain's root (`~/.cargo/bin`, `~/.pyenv/shims`, `node_modules/.bin`). */
const PROGRAM_FOLDERS = new Set(["bin", "sbin", "shims", ".bin"]);

/** Something commands do not see: an empty folder (a tmpfs) or a file nobody may open. */
export interface EmptiedPath {
  path: string;
  state: "folder" | "file";
}

/** A path inside an emptied one that commands see again, read-only. */
export interface ShownPath {
  path: string;
  /** Why it is shown: a toolchain on `PATH`, or `allowReads`. */
  why: string;
}

/** What commands see of the host besides the system's folders and the workspace. */
export interface ReadView {
  /** Emptied folders and masked files, shallowest first: the top of the host's non-system entries, and the homes. */
  emptied: EmptiedPath[];
  /** Folders and files inside `emptied` shown again, read-only (toolchains, `allowReads`). */
  shown: ShownPath[];
}

/** Options of {@link readView}. */
export interface ReadViewOptions {
  /** Real path of the workspace root: never emptied, shown by its own bind. */
  root: string;
  /** The homes to empty (real or not): the caller's, as `defaultCredentialHomes` finds them. */
  homes: readonly string[];
  /** The host's `PATH`, whose toolchains are shown. */
  searchPath: string | undefined;
  /** Paths the user gives back (`allowReads`, `--allow-read`), absolute. */
  allowReads: readonly string[];
}

/**
 * The {@link ReadView} of the host for a workspace: what bubblewrap mounts over its read-only
 * host and what a failure note names when a command reads outside it.
 */
export function readView({ root, homes, searchPath, allowReads }: ReadViewOptions): ReadView {
  const emptied: EmptiedPath[] = [];
  let entries: Dirent[] = [];
  try {
    entries = readdirSync("/", { withFileTypes: true });
  } catch {
    // A root nobody may list: nothing to empty but the homes.
  }
  for (const entry of entries) {
    const top = `/${entry.name}`;
    if (SYSTEM_FOLDERS.includes(top) || SANDBOX_OWN.includes(top)) continue;
    // A link at the top leads into a folder judged on its own (`/bin -> usr/bin`).
    if (entry.isDirectory()) emptied.push({ path: top, state: "folder" });
    else if (entry.isFile()) emptied.push({ path: top, state: "file" });
  }
  for (const home of homes) {
    const real = realpathOr(home);
    // A home that is the workspace or holds it is shown by the workspace's bind (its stores by
    // the credential list); one in a system folder (`/var/lib/jenkins`) is emptied on its own.
    if (isInside(real, root) || real === "/" || emptied.some((each) => each.path === real))
      continue;
    if (statOr(real)?.isDirectory() !== true) continue;
    emptied.push({ path: real, state: "folder" });
  }
  const isEmptied = (target: string) =>
    emptied.some((each) => each.state === "folder" && isInside(each.path, target));
  const shown = new Map<string, string>();
  for (const entry of (searchPath ?? "").split(":")) {
    if (!entry.startsWith("/")) continue;
    const real = realpathOr(entry);
    if (!isEmptied(real) || statOr(real)?.isDirectory() !== true) continue;
    for (const folder of toolchainRoots(real, emptied)) {
      shown.set(folder, `the toolchain of ${entry} on PATH`);
    }
  }
  // The sandbox's own /tmp and /run start empty: what allowReads names there is shown again too
  // (a toolchain or a checkout under /tmp), read-only, over the memory file system.
  const inMemoryFolder = (target: string) =>
    MEMORY_FOLDERS.some((folder) => target !== folder && isInside(folder, target));
  for (const allowed of allowReads) {
    const real = realpathOr(path.resolve(allowed));
    if ((isEmptied(real) || inMemoryFolder(real)) && lstatOr(real) !== undefined) {
      shown.set(real, "it is given back by allowReads (--allow-read)");
    }
  }
  return {
    // An emptied folder that holds the workspace is fine: the workspace is bound over it.
    emptied: emptied.filter((each) => !isInside(root, each.path)),
    shown: outermost([...shown].map(([folder, why]) => ({ path: folder, why }))).filter(
      (each) => !isInside(root, each.path),
    ),
  };
}

/**
 * The folders a `PATH` entry's programs need: the folder that holds a program folder (`~/.cargo`
 * for `~/.cargo/bin`, `~/.pyenv` for `~/.pyenv/shims`), or the entry itself (`~/bin`), never an
 * emptied folder as a whole. `~/.local` is a prefix that mixes programs with the data of every
 * application (`share/`, `state/`), so only its `bin` and `lib` are shown. A rustup proxy
 * (`~/.cargo/bin/cargo`) needs rustup's home too.
 */
function toolchainRoots(entry: string, emptied: readonly EmptiedPath[]): string[] {
  const area = emptied
    .filter((each) => each.state === "folder" && isInside(each.path, entry))
    .map((each) => each.path)
    .sort((left, right) => right.length - left.length)[0];
  if (area === undefined || entry === area) return [];
  const parent = path.dirname(entry);
  const owner = PROGRAM_FOLDERS.has(path.basename(entry)) && parent !== area ? parent : entry;
  const roots =
    path.basename(owner) === ".local" && path.dirname(owner) === area
      ? [path.join(owner, "bin"), path.join(owner, "lib")]
      : [owner];
  if (lstatOr(path.join(entry, "rustup")) !== undefined) {
    roots.push(path.join(area, ".rustup"));
  }
  return roots.filter((each) => statOr(each)?.isDirectory() === true);
}

/**
 * Whether commands see `target` (an absolute real path) through the view: outside every emptied
 * path, or inside one shown again or inside the workspace `root`.
 */
export function visibleInView(view: ReadView, root: string, target: string): boolean {
  if (isInside(root, target)) return true;
  if (!view.emptied.some((each) => isInside(each.path, target))) return true;
  return view.shown.some((each) => isInside(each.path, target));
}

function outermost(paths: ShownPath[]): ShownPath[] {
  return paths.filter(
    (each) => !paths.some((other) => other !== each && isInside(other.path, each.path)),
  );
}

let passwdHomes: string[] | undefined;

/** The home folders of /etc/passwd (resolved once per process), `HOME` and `os.homedir()`, as real paths. */
export function defaultHomeFolders(
  hostEnvironment: Readonly<Record<string, string | undefined>>,
): string[] {
  passwdHomes ??= databaseUsers().map(({ home }) => realpathOr(home));
  const homes = new Set(passwdHomes);
  for (const home of [hostEnvironment.HOME, os.homedir()]) {
    if (home?.startsWith("/") && home !== "/") homes.add(realpathOr(home));
  }
  return [...homes];
}

/** A user of the user database: its uid and its home folder, as written there. */
export interface DatabaseUser {
  uid: number;
  home: string;
}

const usersRead = new Map<string, readonly DatabaseUser[]>();

/**
 * The users of `file` (`/etc/passwd` form: `name:password:uid:gid:comment:home:shell`) whose home
 * is an absolute path other than `/`, read once per process. Empty when there is no such file
 * (macOS keeps its users elsewhere).
 */
export function databaseUsers(file = "/etc/passwd"): readonly DatabaseUser[] {
  let users = usersRead.get(file);
  if (users === undefined) {
    let text = "";
    try {
      text = readFileSync(file, "utf8");
    } catch {
      // No user database: the callers' other sources (HOME, os.homedir()) still count.
    }
    users = text.split("\n").flatMap((line) => {
      const [, , uid, , , home] = line.split(":");
      return home?.startsWith("/") === true && home !== "/" && /^[0-9]+$/.test(uid ?? "")
        ? [{ uid: Number(uid), home }]
        : [];
    });
    usersRead.set(file, users);
  }
  return users;
}
