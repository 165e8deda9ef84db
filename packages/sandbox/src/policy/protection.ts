import { readdirSync } from "node:fs";
import path from "node:path";
import { gitMachinery } from "../git/git-machinery.js";
import { isInside, outermostOnly } from "../paths.js";
import { lstatOr, type ProtectedPathState, pathState, realpathOr, stateOf } from "./path-state.js";
import {
  GIT_DIRECTORY_ENTRIES,
  GIT_RUN_ENTRIES,
  HOME_FOLDER_ENTRIES,
  HOME_ROLE_NAMES,
  PROTECTED_ENTRIES,
  type ProtectedEntry,
  ROLE_VARIABLES,
} from "./protected-entries.js";
import { defaultHomeFolders } from "./read-view.js";

export type { ProtectedPathState } from "./path-state.js";

/** A path a confined command may not change, with what is there now. */
export interface ProtectedPath {
  /** Absolute path inside the workspace. */
  path: string;
  state: ProtectedPathState;
  /** Why it is protected: the rule a refusal names. */
  rule?: string;
  /**
   * For a missing path below a folder of the workspace that exists (`.git/info` of a missing
   * `.git/info/attributes`): that folder, which commands may not rename or remove meanwhile.
   */
  within?: string;
}

/**
 * What is protected in one workspace at one moment: the one policy that the OS sandbox's mounts
 * and every host-side writer (the file tools, the sandbox server's file route) enforce.
 */
export interface WorkspaceProtection {
  /** Real path of the workspace root. */
  root: string;
  /** The git directory entries below the root it was computed from (`nestedGitEntries`). */
  gitEntries: readonly string[];
  /** The folders below the root it was computed from that could not be listed (`unreadableFolders`). */
  unreadableFolders: readonly string[];
  /**
   * The protected paths, shallowest first, each once (none inside another): those that exist are
   * kept read-only for commands, and what a command makes at a `missing` one is moved aside when
   * it ends (`moveAsideAppeared`).
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
  /**
   * Every `.git` entry found below the root (nested repositories, submodules, worktrees), and
   * every folder git takes for a git directory itself (the root too).
   */
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
  /**
   * Commands may write git's objects, refs, index, `HEAD` and logs: in each `.git` folder only
   * {@link GIT_RUN_ENTRIES} stay protected, rather than the whole folder, and so does a `HEAD`
   * beside it (by which git would take the work tree for a git directory once the `.git` is
   * broken). A `.git` file or link,
   * the git directory it leads to and a folder git takes for a git directory by its layout stay
   * protected whole; so does the root when it is a git directory itself, but for its objects,
   * refs, index, `HEAD` and logs. The file tools refuse every path in a `.git` all the same.
   * @default false
   */
  gitWrites?: boolean;
  /**
   * The git directory entries of the other folders commands write besides this one (the
   * workspace and each of `allowWrites`: their `.git`, and each walk's entries): the machinery of
   * their repositories that lies inside `root` (a `core.hooksPath`, an `include.path`, a gitdir
   * here) is protected here too.
   * @default none
   */
  otherGitEntries?: readonly string[];
}

const GIT_METADATA_RULE = "it is part of a git repository's metadata (.git)";

/** The root's git directory entries that stay protected with git writes: all but what git writes. */
const GIT_ROOT_UNWRITTEN = GIT_DIRECTORY_ENTRIES.filter(
  (name) => !["HEAD", "objects", "refs", "index", "logs", "packed-refs", "shallow"].includes(name),
);

/**
 * Compute what is protected in the workspace `root`: the protected entries at its top; the home
 * folder entries at every home folder inside it; every folder with a role for the host inside it
 * (a home's dot-entries, a folder a host variable such as `PATH` or `XDG_CONFIG_HOME` names: see
 * `hostRolePaths`); its `.git`, every nested one and every folder git takes for a git directory by
 * its layout (`HEAD`, `objects/`, `refs/`); for each, the gitdir a `.git` file or link points to,
 * the common dir, the folder `core.hooksPath` names, the files `include.path` pulls in, the
 * alternates' object stores and where the links among a gitdir's and its hooks' entries lead, when
 * they lie inside the workspace; and anything inside a `.git` at any depth. Git's files are read
 * afresh on every call. (A repository a command makes during its call is made inert when it ends:
 * `makeNewRepositoriesInert`.)
 */
export function workspaceProtection({
  root,
  nestedGitEntries,
  unreadableFolders = [],
  protectedEntries = PROTECTED_ENTRIES,
  hostEnvironment = process.env,
  homeFolders = defaultHomeFolders(hostEnvironment),
  gitWrites = false,
  otherGitEntries = [],
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
  // With git writes, a `.git` folder keeps only what git runs programs through protected; one
  // where that is a link (the layouts of repo and git-new-workdir) stays protected whole, since a
  // command could replace a link at a protected path.
  const linkedRunEntry = (entry: string) =>
    GIT_RUN_ENTRIES.find((name) => stateOf(lstatOr(path.join(entry, name))) === "symbolic-link");
  const isGitFolder = (entry: string) =>
    path.basename(entry) === ".git" && stateOf(lstatOr(entry)) === "directory";
  const writableGit = (entry: string) =>
    gitWrites && isGitFolder(entry) && linkedRunEntry(entry) === undefined;
  /** Why a `.git` folder git writes would open stays protected whole, or `undefined`. */
  const wholeWithGitWrites = (entry: string) => {
    const linked = gitWrites && isGitFolder(entry) ? linkedRunEntry(entry) : undefined;
    return linked === undefined
      ? undefined
      : `${path.relative(root, entry)} stays protected whole with git writes: its ${linked} is a link, which a command could replace`;
  };
  const addGitRunEntries = (gitDirectory: string, names: readonly string[]) => {
    for (const name of names) {
      add(
        path.join(gitDirectory, name),
        `${path.relative(root, path.join(gitDirectory, name))} is git's machinery: git runs programs, or finds other git directories, through it (git writes leave it protected)`,
      );
    }
  };
  // With git writes a command can break a `.git` folder (its HEAD, refs or objects), and git then
  // takes the work tree beside it for a git directory itself once it holds a HEAD: the command's
  // own config would be the repository's. So no HEAD may be made beside a writable `.git`.
  const addWorkTreeHead = (gitFolder: string) => {
    const head = path.join(path.dirname(gitFolder), "HEAD");
    add(
      head,
      `${path.relative(root, head)} is protected: beside ${path.relative(root, gitFolder)}, which git writes let commands change, git would take ${path.relative(root, path.dirname(gitFolder)) || "the workspace"} for a git directory of its own by it`,
    );
  };
  for (const entry of protectedEntries) {
    const target = path.join(root, entry.name);
    if (entry.name === ".git" && writableGit(target)) {
      addGitRunEntries(target, GIT_RUN_ENTRIES);
      addWorkTreeHead(target);
    } else {
      add(
        target,
        wholeWithGitWrites(target) ?? entryRule(entry, root, "at the top of the workspace"),
      );
    }
  }
  for (const home of homeFolders) {
    if (!isInside(root, home)) continue;
    for (const entry of [...protectedEntries, ...HOME_FOLDER_ENTRIES]) {
      add(path.join(home, entry.name), entryRule(entry, home, "of a home folder"));
    }
  }
  for (const { path: rolePath, rule } of hostRolePaths({ root, hostEnvironment, homeFolders })) {
    add(rolePath, rule);
  }
  for (const nested of nestedGitEntries) {
    if (nested === root) {
      // The root cannot be protected whole: its part of a git directory's layout is.
      if (gitWrites) addGitRunEntries(root, GIT_RUN_ENTRIES);
      for (const name of gitWrites ? GIT_ROOT_UNWRITTEN : GIT_DIRECTORY_ENTRIES) {
        add(path.join(root, name), `${name} is part of the git directory the workspace root is`);
      }
    } else if (writableGit(nested)) {
      addGitRunEntries(nested, GIT_RUN_ENTRIES);
      addWorkTreeHead(nested);
    } else if (path.basename(nested) === ".git") {
      add(
        nested,
        wholeWithGitWrites(nested) ??
          `${path.relative(root, nested)} is a nested repository's metadata`,
      );
    }
  }
  for (const folder of unreadableFolders) {
    add(
      folder,
      `${path.relative(root, folder)} cannot be read (no permission), so the repositories it may hold cannot be found; it stays read-only until its permissions are restored by hand`,
    );
  }
  for (const gitEntry of [path.join(root, ".git"), ...nestedGitEntries, ...otherGitEntries]) {
    for (const { path: extra, rule } of gitMachinery({ gitEntry, root, hostEnvironment })) {
      add(extra, rule);
    }
  }
  // After the machinery: a gitdir a `.git` file names keeps that more telling rule.
  for (const nested of nestedGitEntries) {
    if (writableGit(nested)) continue;
    add(
      nested,
      `${path.relative(root, nested)} is a git directory (it holds HEAD, objects and refs, so git takes it for one)`,
    );
  }

  const paths: ProtectedPath[] = [];
  const identities = new Map<string, string>();
  for (const [candidate, rule] of rules) {
    const info = lstatOr(candidate);
    const state = stateOf(info);
    if (info !== undefined) identities.set(`${info.dev}:${info.ino}`, rule);
    const within = state === "missing" ? existingFolderAbove(root, candidate) : undefined;
    paths.push({ path: candidate, state, rule, ...(within === undefined ? {} : { within }) });
  }
  return {
    root,
    gitEntries: nestedGitEntries,
    unreadableFolders,
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

/** The deepest folder on the way from `root` to `target` that exists, when it is not the root. */
function existingFolderAbove(root: string, target: string): string | undefined {
  for (
    let current = path.dirname(target);
    current !== root && isInside(root, current);
    current = path.dirname(current)
  ) {
    if (stateOf(lstatOr(current)) === "directory") return current;
  }
  return undefined;
}

/** A path protected for its role, with the rule a refusal names. */
interface RolePath {
  path: string;
  rule: string;
}

/** Options of {@link hostRolePaths}. */
interface HostRolePathsOptions {
  /** Real path of the workspace root. */
  root: string;
  hostEnvironment: Readonly<Record<string, string | undefined>>;
  /** Real paths of the host's home folders. */
  homeFolders: readonly string[];
}

/**
 * The paths protected in the workspace `root` for the role of the folder they are in, one rule:
 * a folder a host variable names (`PATH`, `XDG_CONFIG_HOME`, `ZDOTDIR`, `PYTHONUSERBASE`,
 * `CARGO_HOME`, ... see {@link ROLE_VARIABLES}) is protected whole, and in a home folder every
 * entry at its top whose name starts with a dot is (also the missing {@link HOME_ROLE_NAMES}).
 * Where such a folder is the workspace itself, every entry at its top is protected instead (a
 * home's dot-entries only); names made there later are protected from the next call on.
 */
function hostRolePaths({ root, hostEnvironment, homeFolders }: HostRolePathsOptions): RolePath[] {
  const found: RolePath[] = [];
  for (const home of homeFolders) {
    if (!isInside(root, home)) continue;
    const where =
      home === root ? "the workspace, a home folder" : `${relative(root, home)}, a home folder`;
    const names = new Set(HOME_ROLE_NAMES);
    for (const name of entriesOf(home)) if (name.startsWith(".")) names.add(name);
    for (const name of names) {
      const entry = path.join(home, name);
      found.push({
        path: entry,
        rule: `${relative(root, entry)} is protected: it is at the top of ${where}, where every dot-entry is the configuration of a program the host runs`,
      });
    }
  }
  for (const { variable, why, folder } of roleFolders(hostEnvironment)) {
    if (!isInside(root, folder)) continue;
    if (folder !== root) {
      found.push({
        path: folder,
        rule: `${relative(root, folder)} is protected: it is what the host's ${variable} names, and ${why}`,
      });
      continue;
    }
    for (const name of entriesOf(root)) {
      found.push({
        path: path.join(root, name),
        rule: `${name} is protected: the workspace is what the host's ${variable} names, and ${why}`,
      });
    }
  }
  return found;
}

/** A folder (or file) a host variable with a role names (`ROLE_VARIABLES`), by its real path. */
export interface RoleFolder {
  variable: string;
  why: string;
  folder: string;
}

/** Every absolute path the host's {@link ROLE_VARIABLES} name, as real paths (a missing one's parent resolved). */
export function roleFolders(
  hostEnvironment: Readonly<Record<string, string | undefined>>,
): RoleFolder[] {
  const found: RoleFolder[] = [];
  for (const [variable, { why, list }] of Object.entries(ROLE_VARIABLES)) {
    const value = hostEnvironment[variable];
    if (value === undefined || value === "") continue;
    for (const named of list ? value.split(":") : [value]) {
      if (named.startsWith("/")) found.push({ variable, why, folder: realOf(path.resolve(named)) });
    }
  }
  return found;
}

/** The names in `folder`, or none when it cannot be listed (missing, not a folder). */
function entriesOf(folder: string): string[] {
  try {
    return readdirSync(folder);
  } catch {
    return [];
  }
}

/** The real path of `target`, through its deepest existing ancestor when it is missing. */
function realOf(target: string): string {
  if (pathState(target) !== "missing") return realpathOr(target);
  const parent = path.dirname(target);
  return parent === target ? target : path.join(realOf(parent), path.basename(target));
}

function relative(root: string, target: string): string {
  return path.relative(root, target) || ".";
}
