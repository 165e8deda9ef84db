import { lstatSync, readdirSync, readFileSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { ToolError } from "@pleach/core";
import { isInside, isInsideAny } from "../paths.js";
import { gitMachinery } from "./git-machinery.js";
/**
 * What is found today at a path that must stay read-only. `missing` means nothing of the host's is
 * there: bubblewrap needs a placeholder folder of ours at the path while a command runs.
 */
import type { ProtectedPathState } from "./path-state.js";
import { realpathOr, stateOf } from "./path-state.js";
import {
  CREDENTIAL_STORES,
  HOME_FOLDER_ENTRIES,
  PROTECTED_ENTRIES,
  type ProtectedEntry,
  SYSTEM_SECRET_FILES,
} from "./protected-entries.js";

export type { ProtectedPathState } from "./path-state.js";

/** A path a confined command may not change, with what is there now. */
export interface ProtectedPath {
  /** Absolute path inside the workspace. */
  path: string;
  state: ProtectedPathState;
  /** Why it is protected: the rule a refusal names. */
  rule?: string;
}

/**
 * What is protected in one workspace at one moment: the one policy that the OS sandbox's mounts
 * and every host-side writer (the file tools, the sandbox server's file route) enforce.
 */
export interface WorkspaceProtection {
  /** Real path of the workspace root. */
  root: string;
  /**
   * The paths to keep read-only for commands, shallowest first, each once: a missing path is
   * replaced by its shallowest missing folder, where a placeholder stands while a command runs.
   */
  paths: ProtectedPath[];
  /**
   * The rule that protects the workspace-relative path `relative` (already resolved, no symlinks),
   * or `undefined` when it may be written.
   */
  ruleFor(relative: string): string | undefined;
  /**
   * The rule that protects the file or folder with this device and inode number (one that exists
   * at a protected path now), or `undefined`: a second check on what was opened, not its name.
   */
  ruleForIdentity(device: number, inode: number): string | undefined;
}

/** Options of {@link workspaceProtection}. */
export interface WorkspaceProtectionOptions {
  /** Real path of the workspace root. */
  root: string;
  /** Every `.git` entry found below the root (nested repositories, submodules, worktrees). */
  nestedGitEntries: readonly string[];
  /**
   * Folders of the workspace that could not be listed: what they hold is unknown, so they are
   * protected whole (a command cannot restore their mode to plant a repository there).
   * @default none
   */
  unreadableFolders?: readonly string[];
  /**
   * Entries protected at the top of the workspace and of every home folder in it.
   * @default PROTECTED_ENTRIES
   */
  protectedEntries?: readonly ProtectedEntry[];
  /**
   * The host's environment: `HOME`, for `~/` in git config values and as a home folder.
   * @default process.env
   */
  hostEnvironment?: Readonly<Record<string, string | undefined>>;
  /**
   * The home folders of the host's users (those inside the workspace get {@link HOME_FOLDER_ENTRIES}).
   * @default the homes of /etc/passwd, `HOME` and `os.homedir()`
   */
  homeFolders?: readonly string[];
}

const GIT_METADATA_RULE = "it is part of a git repository's metadata (.git)";

/**
 * Compute what is protected in the workspace `root`: the protected entries at its top; the home
 * folder entries at every home folder inside it; its `.git` and every nested one; for each, the
 * gitdir a `.git` file points to, the common dir, the folder `core.hooksPath` names and the files
 * `include.path` pulls in, when they lie inside the workspace; and anything inside a `.git` at any
 * depth, also one made later. Git's files are read afresh on every call.
 */
export function workspaceProtection({
  root,
  nestedGitEntries,
  unreadableFolders = [],
  protectedEntries = PROTECTED_ENTRIES,
  hostEnvironment = process.env,
  homeFolders = defaultHomeFolders(hostEnvironment),
}: WorkspaceProtectionOptions): WorkspaceProtection {
  const rules = new Map<string, string>();
  // Looked up by the folded path: where names are case-insensitive, `.GIT` is `.git`.
  const folded = new Map<string, string>();
  const add = (candidate: string, rule: string) => {
    if (candidate !== root && isInside(root, candidate) && !folded.has(fold(candidate))) {
      rules.set(candidate, rule);
      folded.set(fold(candidate), rule);
    }
  };
  const entryRule = (entry: ProtectedEntry, base: string, where: string) =>
    `${path.relative(root, path.join(base, entry.name))} ${where} is protected: ${entry.why}`;
  for (const entry of protectedEntries) {
    add(path.join(root, entry.name), entryRule(entry, root, "at the top of the workspace"));
  }
  for (const home of homeFolders) {
    if (!isInside(root, home)) continue;
    for (const entry of [...protectedEntries, ...HOME_FOLDER_ENTRIES]) {
      add(path.join(home, entry.name), entryRule(entry, home, "of a home folder"));
    }
  }
  for (const nested of nestedGitEntries) {
    add(nested, `${path.relative(root, nested)} is a nested repository's metadata`);
  }
  for (const folder of unreadableFolders) {
    add(
      folder,
      `${path.relative(root, folder)} cannot be read (no permission), so the repositories it may hold cannot be found; it stays read-only until its permissions are restored by hand`,
    );
  }
  for (const gitEntry of [path.join(root, ".git"), ...nestedGitEntries]) {
    for (const { path: extra, rule } of gitMachinery({ gitEntry, root, hostEnvironment })) {
      add(extra, rule);
    }
  }

  const paths: ProtectedPath[] = [];
  const identities = new Map<string, string>();
  for (const [candidate, rule] of rules) {
    const info = lstatSync(candidate, { throwIfNoEntry: false });
    const state = stateOf(info);
    if (info !== undefined) identities.set(`${info.dev}:${info.ino}`, rule);
    // Creating a missing path's parents would leave them behind on the host; protecting the
    // shallowest missing folder blocks the same writes.
    const target =
      state === "missing" && path.dirname(candidate) !== root
        ? shallowestMissing(root, candidate)
        : candidate;
    paths.push({ path: target, state, rule });
  }
  return {
    root,
    paths: outermostOnly(paths),
    ruleFor(relative) {
      const segments = fold(relative).split(path.sep);
      if (segments.includes(".git")) return GIT_METADATA_RULE;
      const absolute = path.join(root, relative);
      for (let current = absolute; current !== root; current = path.dirname(current)) {
        const rule = folded.get(fold(current));
        if (rule !== undefined) return rule;
        if (path.dirname(current) === current) break;
      }
      return undefined;
    },
    ruleForIdentity: (device, inode) => identities.get(`${device}:${inode}`),
  };
}

/** `text` as names compare on this platform's usual file systems (case-insensitive on macOS). */
function fold(text: string): string {
  return process.platform === "darwin" || process.platform === "win32" ? text.toLowerCase() : text;
}

let passwdHomes: string[] | undefined;

/** The home folders of /etc/passwd (read once per process), `HOME` and `os.homedir()`, as real paths. */
function defaultHomeFolders(
  hostEnvironment: Readonly<Record<string, string | undefined>>,
): string[] {
  if (passwdHomes === undefined) {
    let text = "";
    try {
      text = readFileSync("/etc/passwd", "utf8");
    } catch {
      // No passwd file (macOS keeps users elsewhere): HOME and os.homedir() still count.
    }
    passwdHomes = text
      .split("\n")
      .map((line) => line.split(":")[5])
      .filter((home): home is string => home?.startsWith("/") === true && home !== "/")
      .map(realpathOr);
  }
  const homes = new Set(passwdHomes);
  for (const home of [hostEnvironment.HOME, os.homedir()]) {
    if (home?.startsWith("/") && home !== "/") homes.add(realpathOr(home));
  }
  return [...homes];
}

function shallowestMissing(root: string, target: string): string {
  const segments = path.relative(root, target).split(path.sep);
  let current = root;
  for (const segment of segments) {
    current = path.join(current, segment);
    if (stateOf(lstatSync(current, { throwIfNoEntry: false })) === "missing") return current;
  }
  return target;
}

/** Drop paths inside another protected folder (a read-only bind covers them) and sort shallow first. */
function outermostOnly(paths: ProtectedPath[]): ProtectedPath[] {
  const sorted = paths
    .map((entry) => ({ entry, depth: entry.path.split(path.sep).length }))
    .sort(
      (left, right) =>
        left.depth - right.depth ||
        (left.entry.path < right.entry.path ? -1 : left.entry.path > right.entry.path ? 1 : 0),
    );
  const kept = new Set<string>();
  const outermost: ProtectedPath[] = [];
  for (const { entry } of sorted) {
    if (isInsideAny(kept, entry.path)) continue;
    kept.add(entry.path);
    outermost.push(entry);
  }
  return outermost;
}

/** A path that commands in `read-only` and `workspace-write` cannot read. */
export interface HiddenPath {
  /** Absolute path; a real path unless `state` is `link` or `missing`. */
  path: string;
  /**
   * `folder` and `file` exist there (bubblewrap covers them with an empty folder or `/dev/null`);
   * `link` is a path through a symbolic link whose target is listed too, and `missing` is nothing
   * yet (Seatbelt matches paths, so it denies both; bubblewrap needs nothing there).
   */
  state: "folder" | "file" | "link" | "missing";
  /** Why it is hidden: the rule a failure names. */
  rule: string;
}

/** What a command may not read, besides the defaults, and what it may read back. */
export interface ReadPolicy {
  /**
   * More paths to hide (absolute, or relative to the current folder).
   * @default []
   */
  hideReads?: readonly string[];
  /**
   * Hidden paths to give back: every hidden path at or inside one of these is readable again.
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
 * each credential home, the {@link SYSTEM_SECRET_FILES}, the host's SSH private keys and
 * `hideReads`, less what `allowReads` gives back. A path reached through a symbolic link is hidden
 * at its target. Outermost paths only, shallowest first.
 *
 * A hidden path inside the workspace `root` (a real path) is hidden there too; a workspace that
 * lies inside an existing hidden path is refused (`UNSUPPORTED`): commands could not run in it.
 */
export function hiddenReads({
  root,
  hideReads = [],
  allowReads = [],
  credentialHomes,
  hostEnvironment = process.env,
}: ReadPolicy & {
  root: string;
  /** For `HOME`, a default credential home. @default process.env */
  hostEnvironment?: Readonly<Record<string, string | undefined>>;
}): HiddenPath[] {
  const homes = credentialHomes ?? defaultCredentialHomes(hostEnvironment);
  const candidates = new Map<string, string>();
  for (const home of homes) {
    for (const { name, why } of CREDENTIAL_STORES) {
      candidates.set(path.resolve(home, name), `it holds ${why}`);
    }
  }
  for (const { name, why } of [...SYSTEM_SECRET_FILES, ...hostKeyFiles()]) {
    candidates.set(name, `it holds ${why}`);
  }
  for (const hidden of hideReads) {
    candidates.set(path.resolve(hidden), "it is hidden by hideReads (--hide-read)");
  }
  const allowed = allowReads.flatMap((each) => {
    const resolved = path.resolve(each);
    return [resolved, realpathOr(resolved)];
  });
  for (const candidate of candidates.keys()) {
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
  for (const [candidate, why] of candidates) {
    const rule = `${candidate} is hidden from commands: ${why}`;
    const real = realpathOr(candidate);
    const info = statOrUndefined(real);
    if (info === undefined) {
      hidden.push({ path: candidate, state: "missing", rule });
      // A missing path under a linked folder (~/.config -> elsewhere) is matched at its target too.
      const parent = realpathOr(path.dirname(candidate));
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
  return outermostHidden(hidden);
}

/**
 * What is at `target`, following links, or `undefined` when nothing the caller can reach is there
 * (missing, a file where a folder was expected, a folder it may not search): the sandbox keeps the
 * caller's uid, so a command cannot reach it either.
 */
function statOrUndefined(target: string): ReturnType<typeof statSync> | undefined {
  try {
    return statSync(target, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}

/** The host's SSH private keys: readable by root, and never needed by a command. */
function hostKeyFiles(): ProtectedEntry[] {
  let names: string[] = [];
  try {
    names = readdirSync("/etc/ssh");
  } catch {
    return [];
  }
  return names
    .filter((name) => /^ssh_host_.*_key$/.test(name))
    .map((name) => ({
      name: path.join("/etc/ssh", name),
      why: "a private key of this host's SSH server",
    }));
}

/** Drop hidden paths inside another one of the same kind of match, shallowest first. */
function outermostHidden(hidden: HiddenPath[]): HiddenPath[] {
  const sorted = [...hidden].sort(
    (left, right) =>
      left.path.split(path.sep).length - right.path.split(path.sep).length ||
      (left.path < right.path ? -1 : left.path > right.path ? 1 : 0),
  );
  const kept = new Set<string>();
  const outermost: HiddenPath[] = [];
  for (const entry of sorted) {
    if (isInsideAny(kept, entry.path)) continue;
    kept.add(entry.path);
    outermost.push(entry);
  }
  return outermost;
}
