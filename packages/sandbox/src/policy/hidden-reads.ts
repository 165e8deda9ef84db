import { type Dirent, readdirSync, type Stats } from "node:fs";
import os from "node:os";
import path from "node:path";
import { ToolError } from "@pleach/core";
import { isInside, outermostOnly } from "../paths.js";
import { hideReadPaths } from "./hide-globs.js";
import { lstatOr, realpathOr, statOr } from "./path-state.js";
import { CREDENTIAL_STORES, type ProtectedEntry } from "./protected-entries.js";
import { databaseUsers } from "./read-view.js";

// What commands may not read: the read side of the one protection policy (`protection.ts` is the
// write side), from the one list of credential stores in `protected-entries.ts`.

/** A path that commands in `read-only` and `workspace-write` cannot read. */
export interface HiddenPath {
  /** Absolute path; a real path unless `state` is `link` or `missing`. */
  path: string;
  /**
   * `folder` and `file` exist there (bubblewrap covers them with an empty folder nobody may list
   * or a `/dev/null` nobody may open);
   * `link` is a path through a symbolic link whose target is listed too, and `missing` is nothing
   * yet (Seatbelt matches paths, so it denies both; bubblewrap needs nothing there).
   */
  state: "folder" | "file" | "link" | "missing";
  /** Why it is hidden: the rule a failure names. */
  rule: string;
}

/**
 * Which hidden paths to find: every one (`"host"`: what commands are confined by), or only those
 * that can apply to a path in the workspace (`"workspace"`: at, inside or holding the root), which
 * is all the host-side file tools need, since they judge real paths of workspace files. The same
 * rules either way; the narrow scope only skips the search of system folders that do not meet the
 * workspace, the most of the broad one's cost.
 */
export type HiddenScope = "host" | "workspace";

/** What a command may not read, besides the defaults, and what it may read back. */
export interface ReadPolicy {
  /**
   * More paths to hide (absolute, or relative to the current folder), globs (`**\/.env`) matched
   * against what exists at each use, and presets (`@secrets`): see `hide-globs.ts`.
   * @default []
   */
  hideReads?: readonly string[];
  /**
   * Hidden paths to give back: every hidden path at or inside one of these is readable again,
   * and one outside the commands' view of the host is shown again (`readView`), read-only.
   * A path inside a hidden one that is not itself listed is refused (`INVALID_INPUT`).
   * @default []
   */
  allowReads?: readonly string[];
  /**
   * The homes whose {@link CREDENTIAL_STORES} are hidden.
   * @default the home of the user running pleach in the user database, and `HOME`
   */
  credentialHomes?: readonly string[];
}

/**
 * The homes whose credential stores are hidden: the running user's home in the user database
 * (`os.userInfo().homedir`: ssh and gpg look there whatever `HOME` says, so a `HOME` pointed
 * elsewhere cannot leave the real keys readable), and `HOME` when it differs (aws, npm and git look
 * there). Both are the host user's own settings; hiding more is never less safe.
 */
export function defaultCredentialHomes(
  hostEnvironment: Readonly<Record<string, string | undefined>> = process.env,
): string[] {
  const homes = [userDatabaseHome(), hostEnvironment.HOME].filter(
    (home): home is string => home?.startsWith("/") === true && path.resolve(home) !== "/",
  );
  return [...new Set(homes.map((home) => path.resolve(home)))];
}

let databaseHome: string | undefined;

/** The running user's home in the user database, looked up once per process. */
function userDatabaseHome(): string {
  if (databaseHome === undefined) {
    try {
      databaseHome = os.userInfo().homedir;
    } catch {
      // A uid without an entry in the user database (some containers): os.homedir() reads HOME.
      databaseHome = os.homedir();
    }
  }
  return databaseHome;
}

/**
 * What commands in `read-only` and `workspace-write` cannot read: the {@link CREDENTIAL_STORES} of
 * each credential home (for a root caller, also those present in every other user's home), the
 * system's secret files (found by their mode, see `systemSecrets`) and `hideReads`, less what
 * `allowReads` gives back. Under bubblewrap the homes are empty anyway (`read-view.ts`): there the
 * stores matter where the view shows a home's folder again (the workspace, a toolchain, an
 * `allowReads` path); Seatbelt reads the host minus this list. A path reached through a symbolic link is hidden
 * at its target. Outermost paths only, shallowest first.
 *
 * A hidden path inside the workspace `root` (a real path) is hidden there too; a workspace that
 * lies inside an existing hidden path is refused (`UNSUPPORTED`): commands could not run in it.
 * With `scope: "workspace"`, only the hidden paths at, inside or holding `root` (see
 * {@link HiddenScope}).
 */
export function hiddenReads({
  root,
  hideReads = [],
  allowReads = [],
  credentialHomes,
  hostEnvironment = process.env,
  userDatabase = "/etc/passwd",
  systemFolders = SECRET_SEARCH,
  scope = "host",
}: ReadPolicy & {
  root: string;
  /** For `HOME`, a default credential home. @default process.env */
  hostEnvironment?: Readonly<Record<string, string | undefined>>;
  /** The user database, in `/etc/passwd` form, whose homes a root caller hides. @default "/etc/passwd" */
  userDatabase?: string;
  /** The system folders searched for secret files, and how deep. @default /etc, /var and /opt */
  systemFolders?: readonly SecretSearch[];
  /** @default "host" */
  scope?: HiddenScope;
}): HiddenPath[] {
  const homes = credentialHomes ?? defaultCredentialHomes(hostEnvironment);
  const candidates = new Map<string, string>();
  // Candidates a listing of their home showed missing: most are, and a listing is one lookup.
  const absent = new Set<string>();
  for (const home of homes) {
    const names = namesIn(home);
    for (const { name, why } of CREDENTIAL_STORES) {
      const candidate = path.resolve(home, name);
      candidates.set(candidate, `it holds ${why}`);
      if (names !== undefined && !names.has(firstSegment(name))) absent.add(candidate);
    }
  }
  for (const { name, why } of otherUsersStores(homes, userDatabase)) {
    candidates.set(name, `it holds ${why} of another user`);
  }
  for (const { name, why } of systemSecrets(root, homes, scope, systemFolders)) {
    candidates.set(name, why);
  }
  for (const { path: hidden, why } of hideReadPaths(hideReads, root)) candidates.set(hidden, why);
  const allowed = allowReads.flatMap((each) => {
    const resolved = path.resolve(each);
    return [resolved, realpathOr(resolved)];
  });
  for (const candidate of allowed.length === 0 ? [] : candidates.keys()) {
    const real = realpathOr(candidate);
    if (allowed.some((each) => isInside(each, candidate) || isInside(each, real))) {
      candidates.delete(candidate);
    }
  }
  for (const each of allowed) {
    for (const candidate of candidates.keys()) {
      if (isInside(candidate, each) || isInside(realpathOr(candidate), each)) {
        throw new ToolError(
          "INVALID_INPUT",
          `allowReads ${each} lies inside ${candidate}, which is hidden from commands as a whole; allow ${candidate} itself to give back all of it`,
          { details: { path: each, hidden: candidate } },
        );
      }
    }
  }

  const hidden: HiddenPath[] = [];
  // Most candidates are missing, many in the same folder: each folder is resolved once per call.
  const realFolders = new Map<string, string>();
  const realFolder = (folder: string) => {
    let real = realFolders.get(folder);
    if (real === undefined) {
      real = realpathOr(folder);
      realFolders.set(folder, real);
    }
    return real;
  };
  for (const [candidate, why] of candidates) {
    const rule = `${candidate} is hidden from commands: ${why}`;
    const present = !absent.has(candidate) && entryExists(candidate);
    const real = present ? realpathOr(candidate) : candidate;
    const info = present ? statOr(real) : undefined;
    if (info === undefined) {
      hidden.push({ path: candidate, state: "missing", rule });
      // A missing path under a linked folder (~/.config -> elsewhere) is matched at its target too.
      const parent = realFolder(path.dirname(candidate));
      const underTarget = path.join(parent, path.basename(candidate));
      if (underTarget !== candidate) hidden.push({ path: underTarget, state: "missing", rule });
      continue;
    }
    for (const reached of new Set([candidate, real])) {
      if (isInside(reached, root)) {
        throw new ToolError(
          "UNSUPPORTED",
          `the workspace ${root} lies inside ${reached}, which is hidden from commands (${why}), so commands cannot run in it in read-only or workspace-write mode. Choose a workspace outside it, give it back with allowReads (--allow-read ${candidate}), or use danger-full-access.`,
          { details: { path: reached, rule } },
        );
      }
    }
    if (real !== candidate) hidden.push({ path: candidate, state: "link", rule });
    hidden.push({ path: real, state: info.isDirectory() ? "folder" : "file", rule });
  }
  const outermost = outermostOnly(hidden);
  // One that held the root was refused above: what is left of the workspace's lies inside it.
  return scope === "host" ? outermost : outermost.filter((each) => isInside(root, each.path));
}

/**
 * The hidden path that `reached` (absolute paths naming one file: as printed, as resolved) lies at
 * or under, or `undefined`: how a refusal or a failure note finds the rule.
 */
export function hiddenPathOf(
  hidden: readonly HiddenPath[],
  reached: readonly string[],
): HiddenPath | undefined {
  return hidden.find((each) => reached.some((candidate) => isInside(each.path, candidate)));
}

/**
 * The refusal of the host-side file tools for `shown` (as the caller wrote it), at or under the
 * hidden path `hidden`: commands cannot read it, so the tools, which run unconfined on the host,
 * neither read nor write it. `HIDDEN_PATH`; but a path the protection policy covers too (`.ssh`
 * in a home folder that is the workspace) is `PROTECTED_PATH` naming both rules, since giving it
 * back with `--allow-read` makes it readable, never writable.
 */
export function hiddenPathError(
  shown: string,
  hidden: HiddenPath,
  access: "read" | "write",
  protectedRule?: string,
): ToolError {
  const wayOut = `If the task needs to read it, ask the user to give it back with --allow-read ${hidden.path} (allowReads).`;
  if (protectedRule !== undefined) {
    return new ToolError(
      "PROTECTED_PATH",
      `refusing to ${access} ${shown}: ${protectedRule}, and ${hidden.rule}, by the sandbox's read policy. ${wayOut}`,
      { details: { rule: protectedRule, path: hidden.path, hidden: hidden.rule } },
    );
  }
  return new ToolError(
    "HIDDEN_PATH",
    `refusing to ${access} ${shown}: ${hidden.rule}, by the sandbox's read policy, for commands and file tools alike. ${wayOut}`,
    { details: { path: hidden.path, rule: hidden.rule } },
  );
}

/**
 * The credential stores present in the other homes of `userDatabase` (`/etc/passwd` form) when
 * pleach runs as root, whose commands read every user's files. A home counts when it is a folder
 * its user owns, as a system account's `/bin` or `/usr/sbin` is not. Only the stores there now are
 * listed: a missing one would cost every command a failed lookup per home. One listing of the home
 * says which are there (a store deeper down, `.config/gh`, is looked up when its first folder is).
 */
function otherUsersStores(ownHomes: readonly string[], userDatabase: string): ProtectedEntry[] {
  if (process.getuid?.() !== 0) return [];
  const stores: ProtectedEntry[] = [];
  for (const { uid, home } of databaseUsers(userDatabase)) {
    const folder = path.resolve(home);
    if (ownHomes.includes(folder)) continue;
    const info = statOr(folder);
    if (info?.isDirectory() !== true || info.uid !== uid) continue;
    const names = namesIn(folder);
    for (const { name, why } of CREDENTIAL_STORES) {
      const listed = names?.has(firstSegment(name));
      if (listed === false) continue;
      const store = path.join(folder, name);
      if ((listed === true && !name.includes("/")) || entryExists(store)) {
        stores.push({ name: store, why });
      }
    }
  }
  return stores;
}

/** The first folder of the relative path `name` (`.config` of `.config/gh`), or `name` itself. */
function firstSegment(name: string): string {
  const slash = name.indexOf("/");
  return slash === -1 ? name : name.slice(0, slash);
}

/** The names in `folder`, or `undefined` when it cannot be listed. */
function namesIn(folder: string): Set<string> | undefined {
  try {
    return new Set(readdirSync(folder));
  } catch {
    return undefined;
  }
}

/** Whether anything, a link included, is at `target`; `false` when a folder above it is not one. */
function entryExists(target: string): boolean {
  try {
    return lstatOr(target) !== undefined;
  } catch {
    return false;
  }
}

/** A system folder searched for secret files, and how many folder levels deep. */
interface SecretSearch {
  folder: string;
  depth: number;
}
const SECRET_SEARCH: readonly SecretSearch[] = [
  { folder: "/etc", depth: 16 },
  { folder: "/var", depth: 2 },
  { folder: "/opt", depth: 2 },
];
/** Everyone's temporary folder, not the system's: what is private there is private to its user. */
const NOT_SEARCHED = new Set(["/var/tmp"]);
/** The most entries looked at for secret files; past it the rest of the search is skipped. */
const MAX_SECRET_ENTRIES = 20_000;

/**
 * The system's secret files and folders, by construction rather than by name: in the searched
 * system folders, whatever its owner keeps from others (no read bit for others: `/etc/shadow`,
 * `/etc/ssl/private`, the SSH host keys, `/etc/sudoers`, `/var/lib/docker`, ...) and the caller
 * could read anyway (root, its owner or a member of its group), since the sandbox keeps the
 * caller's uid; but not a folder that holds the workspace `root` or is one of `homes`. A folder
 * found is hidden whole, not searched. In the `workspace` scope only what meets `root` is looked
 * at (what holds it or lies inside it, judged on its real path: a searched folder may be a link,
 * `/opt -> /var/opt`, `/etc -> /private/etc`; below it links are not followed), so a workspace
 * outside the searched folders costs no search at all.
 */
function systemSecrets(
  root: string,
  homes: readonly string[],
  scope: HiddenScope,
  systemFolders: readonly SecretSearch[],
): ProtectedEntry[] {
  const uid = process.getuid?.();
  const groups = new Set(process.getgroups?.() ?? []);
  const secrets: ProtectedEntry[] = [];
  let budget = MAX_SECRET_ENTRIES;
  // `real` is `folder`'s real path: the search does not follow links, but for the folder it starts in.
  const search = (folder: string, real: string, depth: number) => {
    let entries: Dirent[] = [];
    try {
      entries = readdirSync(folder, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (--budget < 0) return;
      const entryPath = path.join(folder, entry.name);
      const realEntry = path.join(real, entry.name);
      if (NOT_SEARCHED.has(entryPath) || entry.isSymbolicLink()) continue;
      if (scope === "workspace" && !isInside(realEntry, root) && !isInside(root, realEntry)) {
        continue;
      }
      let info: Stats | undefined;
      try {
        info = lstatOr(entryPath);
      } catch {
        continue;
      }
      if (info === undefined) continue;
      // The caller's own private folders that hold its workspace or are its home (a CI user's
      // `/var/lib/jenkins`, mode 750) are no system secret: the view empties a home anyway.
      const own = isInside(entryPath, root) || homes.includes(entryPath);
      const secret =
        !own &&
        (info.mode & 0o004) === 0 &&
        (uid === 0 || info.uid === uid || groups.has(info.gid));
      if (secret) {
        const mode = (info.mode & 0o777).toString(8).padStart(4, "0");
        secrets.push({
          name: entryPath,
          why: `others may not read it on the host (mode ${mode}), which makes it a secret of the system`,
        });
      } else if (info.isDirectory() && depth > 1) {
        search(entryPath, realEntry, depth - 1);
      }
    }
  };
  for (const { folder, depth } of systemFolders) {
    const real = scope === "host" ? folder : realpathOr(folder);
    if (scope === "host" || isInside(real, root) || isInside(root, real))
      search(folder, real, depth);
  }
  return secrets;
}
