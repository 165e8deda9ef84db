import path from "node:path";
import { isInside } from "../paths.js";
import { lookupLstat, lookupSmallFile } from "./host-lookups.js";
import { realpathOr, stateOf } from "./path-state.js";

/** How deep `include.path` chains are followed, as git's own limit. */
const MAX_INCLUDE_DEPTH = 10;

/**
 * The paths inside the workspace that a repository's `.git` makes the host run or read as
 * configuration: the gitdir a `.git` file points to, its common dir, the hooks folder named by
 * `core.hooksPath` (in the repository's config, in files it includes, or, relative to the work
 * tree, in the user's and the system's config), and files pulled in by `include.path`, followed
 * as deep as git follows them. Each as spelled and as its real path; and every symlink on the way
 * to one, which a command could re-point (such a link makes workspace-write commands refuse).
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
  const found: { path: string; rule: string }[] = [];
  const shown = (target: string) => path.relative(root, target) || ".";
  const state = stateOf(lookupLstat(gitEntry));
  let gitdir = gitEntry;
  if (state === "file") {
    const pointer = /^gitdir:\s*(.+?)\s*$/m.exec(readSmallFile(gitEntry));
    if (pointer?.[1] === undefined) return found;
    gitdir = path.resolve(path.dirname(gitEntry), pointer[1]);
    found.push({ path: gitdir, rule: `it is the gitdir that ${shown(gitEntry)} points to` });
  } else if (state !== "directory") {
    return found;
  }
  const configs = [path.join(gitdir, "config"), path.join(gitdir, "config.worktree")];
  const common = readSmallFile(path.join(gitdir, "commondir")).trim();
  if (common !== "") {
    const commonDirectory = path.resolve(gitdir, common);
    found.push({ path: commonDirectory, rule: `it is the common gitdir of ${shown(gitEntry)}` });
    configs.push(
      path.join(commonDirectory, "config"),
      path.join(commonDirectory, "config.worktree"),
    );
  }
  const workTree = path.dirname(gitEntry);
  const home = hostEnvironment.HOME;
  const expand = (value: string) =>
    value.startsWith("~/") && home !== undefined ? path.join(home, value.slice(2)) : value;
  const visit = (file: string, depth: number, whose: string) => {
    for (const { section, key, value } of gitConfigEntries(readSmallFile(file))) {
      if (section === "core" && key === "hookspath") {
        found.push({
          path: path.resolve(workTree, expand(value)),
          rule: `git runs the hooks in it (core.hooksPath of ${whose})`,
        });
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
    const info = lookupLstat(current);
    if (info === undefined) break;
    if (info.isSymbolicLink()) links.push(current);
  }
  return links;
}

/** The most bytes of a git file read for the policy; a larger one counts as empty. */
const MAX_CONFIG_BYTES = 1024 * 1024;

/** A git file's text for the policy ("" when missing, unreadable, not a regular file or large). */
function readSmallFile(file: string): string {
  return lookupSmallFile(file, MAX_CONFIG_BYTES);
}

/** A forgiving reader of git's config format: enough to find `core.hooksPath` and includes. */
function gitConfigEntries(text: string): { section: string; key: string; value: string }[] {
  const entries: { section: string; key: string; value: string }[] = [];
  let section = "";
  for (const rawLine of text.split("\n")) {
    const line = rawLine.trim();
    const header = /^\[\s*([A-Za-z0-9.-]+)/.exec(line);
    if (header?.[1] !== undefined) {
      section = header[1].toLowerCase();
      continue;
    }
    const pair = /^([A-Za-z][A-Za-z0-9-]*)\s*=\s*(.*)$/.exec(line);
    if (pair?.[1] === undefined || pair[2] === undefined) continue;
    const value = pair[2].replace(/\s[;#].*$/, "").replace(/^"(.*)"$/, "$1");
    entries.push({ section, key: pair[1].toLowerCase(), value });
  }
  return entries;
}
