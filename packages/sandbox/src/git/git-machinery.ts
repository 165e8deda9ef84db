import {
  closeSync,
  constants,
  type Dirent,
  fstatSync,
  openSync,
  readdirSync,
  readFileSync,
} from "node:fs";
import path from "node:path";
import { isInside } from "../paths.js";
import { leadsTo, lstatOr, realpathOr, stateOf, statOr } from "../policy/path-state.js";

/** An entry of a folder, as `readdir` with file types gives it. */
export interface FolderEntry {
  name: string;
  isDirectory(): boolean;
}

/**
 * Whether a folder holding `entries` is one git takes for a git directory, by git's own test
 * (setup.c, `is_git_directory`): a `HEAD`, and `objects` and `refs` (or a `commondir` naming where
 * they are). Git looks at a folder itself before its parents, and `safe.bareRepository` lets it
 * use such a folder by default, so its name does not matter. Looser than git (any type, `HEAD`
 * unread): a folder that only looks like one is protected too, never the other way round.
 */
export function holdsGitDirectoryLayout(entries: Iterable<FolderEntry>): boolean {
  const names = new Set<string>();
  for (const entry of entries) {
    if (entry.name === "HEAD" && entry.isDirectory()) continue;
    names.add(entry.name);
  }
  return (
    names.has("HEAD") && (names.has("commondir") || (names.has("objects") && names.has("refs")))
  );
}

/** How deep `include.path` chains are followed, as git's own limit. */
const MAX_INCLUDE_DEPTH = 10;

/** The most entries of one git folder looked at for links (a real one has a few dozen). */
const MAX_ENTRIES_LOOKED_AT = 4_096;

/**
 * The paths inside the workspace that a repository's git directory makes the host run or read as
 * configuration: the gitdir a `.git` file or link points to, its common dir, the hooks folder
 * named by `core.hooksPath` (in the repository's config, in files it includes, or, relative to the
 * work tree, in the user's and the system's config), files pulled in by `include.path`, followed
 * as deep as git follows them, the object stores `objects/info/alternates` names, and where every
 * symbolic link among the entries of a gitdir, a common dir and a hooks folder leads (the layout
 * of `repo` and `git-new-workdir`, a hook linked to a tracked script): git follows them, so what
 * they lead to is its machinery too. Each as spelled and as its real path; and every symlink on
 * the way to one, which a command could re-point (such a link makes workspace-write commands
 * refuse). `gitEntry` is a `.git` entry or a folder git takes for a git directory itself.
 */
export function gitMachinery({
  gitEntry,
  root,
  hostEnvironment,
}: {
  gitEntry: string;
  root: string;
  hostEnvironment: Readonly<Record<string, string | undefined>>;
}): { path: string; rule: string }[] {
  const shown = (target: string) => path.relative(root, target) || ".";
  const { folders: gitFolders, found } = gitDirectoriesOf(gitEntry, shown);
  const configs = gitFolders.flatMap((folder) => [
    path.join(folder, "config"),
    path.join(folder, "config.worktree"),
  ]);
  const hookFolders: string[] = [];
  for (const folder of gitFolders) {
    hookFolders.push(path.join(folder, "hooks"));
    for (const link of linksIn(folder)) {
      found.push({
        path: leadsTo(link),
        rule: `it is where the link ${shown(link)} leads, which git follows as part of ${shown(gitEntry)}'s git directory`,
      });
    }
    const alternates = readSmallFile(path.join(folder, "objects", "info", "alternates"));
    for (const line of alternates.split("\n")) {
      const store = line.trim();
      if (store === "" || store.startsWith("#")) continue;
      found.push({
        path: path.resolve(folder, "objects", store.replace(/^"(.*)"$/, "$1")),
        rule: `git reads objects from it (objects/info/alternates of ${shown(gitEntry)})`,
      });
    }
  }
  // A folder that is a git directory itself (bare) runs hooks relative to itself.
  const workTree = path.basename(gitEntry) === ".git" ? path.dirname(gitEntry) : gitEntry;
  const home = hostEnvironment.HOME;
  const expand = (value: string) =>
    value.startsWith("~/") && home !== undefined ? path.join(home, value.slice(2)) : value;
  const visit = (file: string, depth: number, whose: string) => {
    for (const { section, key, value } of gitConfigEntries(readSmallFile(file))) {
      if (section === "core" && key === "hookspath") {
        const hooks = path.resolve(workTree, expand(value));
        hookFolders.push(hooks);
        found.push({ path: hooks, rule: `git runs the hooks in it (core.hooksPath of ${whose})` });
      } else if (section.startsWith("include") && key === "path") {
        const included = path.resolve(path.dirname(file), expand(value));
        found.push({
          path: included,
          rule: `git reads it as configuration (include.path of ${whose})`,
        });
        if (depth < MAX_INCLUDE_DEPTH) visit(included, depth + 1, whose);
      }
    }
  };
  for (const config of configs) visit(config, 1, shown(gitEntry));
  for (const config of userGitConfigs(hostEnvironment)) visit(config, 1, config);
  for (const hooks of hookFolders) {
    for (const link of linksIn(hooks)) {
      found.push({
        path: leadsTo(link),
        rule: `git runs it as a hook: ${shown(link)} is a link to it`,
      });
    }
  }
  return withLinksOnTheWay(root, found);
}

/**
 * The git directories a git directory entry makes git use: where a `.git` link leads, the gitdir a
 * `.git` file points to (or the entry itself when it is a folder), then its `commondir`; with the
 * rule of each one that is not the entry itself. No folders when the entry is no git directory.
 */
export function gitDirectoriesOf(
  gitEntry: string,
  shown: (target: string) => string,
): { folders: string[]; found: { path: string; rule: string }[] } {
  const found: { path: string; rule: string }[] = [];
  let state = stateOf(lstatOr(gitEntry));
  let gitdir = gitEntry;
  if (state === "symbolic-link") {
    // Git stats `.git`, following the link: where it leads is the gitdir.
    gitdir = leadsTo(gitEntry);
    found.push({
      path: gitdir,
      rule: `it is where the link ${shown(gitEntry)} leads, git's gitdir`,
    });
    state = stateOf(lstatOr(gitdir));
  }
  if (state === "file") {
    const pointer = /^gitdir:\s*(.+?)\s*$/m.exec(readSmallFile(gitdir));
    if (pointer?.[1] === undefined) return { folders: [], found };
    gitdir = path.resolve(path.dirname(gitEntry), pointer[1]);
    found.push({ path: gitdir, rule: `it is the gitdir that ${shown(gitEntry)} points to` });
  } else if (state !== "directory") {
    return { folders: [], found };
  }
  const folders = [gitdir];
  const common = readSmallFile(path.join(gitdir, "commondir")).trim();
  if (common !== "") {
    const commonDirectory = path.resolve(gitdir, common);
    found.push({ path: commonDirectory, rule: `it is the common gitdir of ${shown(gitEntry)}` });
    folders.push(commonDirectory);
  }
  return { folders, found };
}

/** `found` inside `root`, each as spelled and as its real path, with the links on the way. */
function withLinksOnTheWay(
  root: string,
  found: readonly { path: string; rule: string }[],
): { path: string; rule: string }[] {
  const shown = (target: string) => path.relative(root, target) || ".";
  const all: { path: string; rule: string }[] = [];
  for (const entry of found) {
    for (const spelled of [entry.path, realpathOr(entry.path)]) {
      if (!isInside(root, spelled)) continue;
      all.push({ ...entry, path: spelled });
      for (const link of linksOnTheWay(root, spelled)) {
        all.push({
          path: link,
          rule: `it is a symbolic link on the way to ${shown(spelled)}, which git uses (${entry.rule}); a command could re-point it`,
        });
      }
    }
  }
  return all;
}

/** The symbolic links among the entries of `folder` (none when it cannot be listed). */
function linksIn(folder: string): string[] {
  let entries: Dirent[];
  try {
    entries = readdirSync(folder, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries
    .slice(0, MAX_ENTRIES_LOOKED_AT)
    .filter((entry) => entry.isSymbolicLink())
    .map((entry) => path.join(folder, entry.name));
}

/** The user's and the system's git config files, whose relative `core.hooksPath` applies here. */
function userGitConfigs(hostEnvironment: Readonly<Record<string, string | undefined>>): string[] {
  const home = hostEnvironment.HOME;
  const xdg = hostEnvironment.XDG_CONFIG_HOME;
  return [
    "/etc/gitconfig",
    ...(home === undefined ? [] : [path.join(home, ".gitconfig")]),
    ...(xdg !== undefined && xdg !== ""
      ? [path.join(xdg, "git", "config")]
      : home === undefined
        ? []
        : [path.join(home, ".config", "git", "config")]),
  ];
}

/** The symbolic links among the folders between `root` and `target` (and `target` itself). */
function linksOnTheWay(root: string, target: string): string[] {
  const links: string[] = [];
  let current = root;
  for (const segment of path.relative(root, target).split(path.sep)) {
    if (segment === "") continue;
    current = path.join(current, segment);
    const info = lstatOr(current);
    if (info === undefined) break;
    if (info.isSymbolicLink()) links.push(current);
  }
  return links;
}

/** The most bytes of a git file read for the policy; a larger one counts as empty. */
const MAX_CONFIG_BYTES = 1024 * 1024;

/** A git file's text for the policy ("" when missing, unreadable, not a regular file or large). */
function readSmallFile(file: string): string {
  // Only a regular file is opened: a config a command wrote can name a device by include.path,
  // whose open can act (a watchdog arms, a tape rewinds), or a FIFO, which a read would wait on
  // forever. One swapped in after this look is judged on what was opened (non-blocking).
  if (statOr(file)?.isFile() !== true) return "";
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch {
    return "";
  }
  try {
    const info = fstatSync(fd);
    if (!info.isFile() || info.size > MAX_CONFIG_BYTES) return "";
    return readFileSync(fd, "utf8");
  } catch {
    return "";
  } finally {
    closeSync(fd);
  }
}

/** One `key = value` of a git config file, names lower-cased but the subsection's. */
export interface GitConfigEntry {
  section: string;
  /** The quoted part of `[section "subsection"]` (or of `[section.subsection]`), if any. */
  subsection?: string;
  key: string;
  value: string;
}

/**
 * A forgiving reader of git's config format: enough to find `core.hooksPath` and includes, and
 * the keys a rewritten config keeps. What it misreads is at worst left out, never invented.
 */
export function gitConfigEntries(text: string): GitConfigEntry[] {
  const entries: GitConfigEntry[] = [];
  let section = "";
  let subsection: string | undefined;
  for (const rawLine of text.split("\n")) {
    const line = rawLine.trim();
    const header = /^\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?/.exec(line);
    if (header?.[1] !== undefined) {
      const [name = "", ...rest] = header[1].split(".");
      section = (header[2] === undefined ? name : header[1]).toLowerCase();
      subsection =
        header[2] !== undefined
          ? header[2].replace(/\\(.)/g, "$1")
          : rest.length > 0
            ? rest.join(".").toLowerCase()
            : undefined;
      continue;
    }
    const pair = /^([A-Za-z][A-Za-z0-9-]*)\s*=\s*(.*)$/.exec(line);
    if (pair?.[1] === undefined || pair[2] === undefined) continue;
    const value = pair[2].replace(/\s[;#].*$/, "").replace(/^"(.*)"$/, "$1");
    entries.push({
      section,
      ...(subsection === undefined ? {} : { subsection }),
      key: pair[1].toLowerCase(),
      value,
    });
  }
  return entries;
}
