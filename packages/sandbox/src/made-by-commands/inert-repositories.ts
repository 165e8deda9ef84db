import { randomUUID } from "node:crypto";
import { lstatSync, realpathSync } from "node:fs";
import path from "node:path";
import { locate } from "../beneath.js";
import { type GitConfigEntry, gitConfigEntries, gitDirectoriesOf } from "../git/git-machinery.js";
import { isInside, isInsideAny } from "../paths.js";
import { workspaceRoot } from "../workspace-root.js";
import { readSmallFile, writeNewFile } from "./held-files.js";
import { moveAside, renameAside } from "./moved-aside.js";

/**
 * The config keys a repository made by a sandboxed command keeps, by section: none of them names a
 * program, a path git reads configuration or hooks from, or another work tree. Everything else
 * (`core.fsmonitor`, `core.hooksPath`, `core.sshCommand`, `core.pager`, filters, diff drivers,
 * aliases, includes, credential helpers, `core.worktree`, keys nobody listed yet) is left out.
 */
const KEPT_KEYS: Readonly<Record<string, { subsection: boolean; keys: readonly string[] }>> = {
  core: {
    subsection: false,
    keys: [
      "repositoryformatversion",
      "filemode",
      "bare",
      "logallrefupdates",
      "ignorecase",
      "precomposeunicode",
      "symlinks",
    ],
  },
  extensions: { subsection: false, keys: ["objectformat"] },
  remote: { subsection: true, keys: ["url", "fetch"] },
  branch: { subsection: true, keys: ["remote", "merge"] },
};

/** The most bytes of a made config that are read to copy its kept keys (a bigger one keeps none). */
const MAX_CONFIG_BYTES = 1024 * 1024;

/** Options of {@link makeNewRepositoriesInert}. */
export interface MakeInertOptions {
  /** Real path of the workspace root. */
  root: string;
  /** The git directory entries found before the command ran (a walk's `gitEntries`). */
  before: readonly string[];
  /** The git directory entries found once it ended. */
  after: readonly string[];
  /**
   * The paths that were protected while it ran: what lies there was not made by it.
   * @default none: only the git directories of `before` are known not to be its
   */
  protectedBefore?: readonly string[];
  /**
   * Collects the entries of the repositories that could not be made inert (all of it or in
   * part), which a later look should try again.
   */
  notInert?: string[];
  /**
   * Whether the root's `.git` was missing before (the walk's entries never hold it): one there now
   * is a repository the command made.
   * @default false
   */
  rootRepositoryMade?: boolean;
}

/**
 * Make every repository a command made during its call inert before any host program uses it: a
 * `.git` folder, file or link, or a folder git takes for a git directory itself, that was not
 * there before. In each git directory it uses (inside the workspace, not protected while the
 * command ran), the `config` is moved aside and replaced by a copy of the keys that run nothing
 * ({@link KEPT_KEYS}), and `config.worktree` and `hooks` are moved aside, so the repository
 * stays usable (log, diff, status) with nothing of the command's left for host git to run. Every
 * step is made from a folder held open from the workspace root, never through a link that leads
 * out. Returns one note per repository for the command's result.
 */
export function makeNewRepositoriesInert({
  root,
  before,
  after,
  protectedBefore = [],
  rootRepositoryMade = false,
  notInert = [],
}: MakeInertOptions): string[] {
  const known = new Set(before);
  const protectedSet = new Set(protectedBefore);
  const rootEntry = path.join(root, ".git");
  const rootMade =
    rootRepositoryMade && lstatSync(rootEntry, { throwIfNoEntry: false }) !== undefined;
  const made = [...(rootMade ? [rootEntry] : []), ...after.filter((entry) => !known.has(entry))];
  if (made.length === 0) return [];
  const workspace = workspaceRoot(root, root);
  const shown = (target: string) => path.relative(root, target) || ".";
  const notes: string[] = [];
  // A new `.git` file naming a repository that was there before leaves that one alone, however a
  // path of the command's spells it (through a link of the workspace too).
  const done = new Set(
    [...(rootMade ? [] : [rootEntry]), ...before]
      .flatMap((entry) => gitDirectoriesOf(entry, shown).folders)
      .flatMap((folder) => [folder, realOr(folder)]),
  );
  for (const entry of made) {
    const moved: string[] = [];
    const failed: string[] = [];
    const [gitdir, ...common] = gitDirectoriesOf(entry, shown).folders;
    // Machinery outside the workspace (a gitdir or common dir in a folder commands may write,
    // such as their caches) cannot be made inert from here: the entry that leads there goes; so
    // does a `.git` that leads to no git directory at all (a FIFO, a file of garbage).
    if (
      gitdir === undefined ||
      [gitdir, ...common].some((folder) => folder !== undefined && !isInside(root, realOr(folder)))
    ) {
      try {
        const aside = moveAside(workspace, path.relative(root, entry));
        if (aside !== undefined) {
          notes.push(
            `${aside.from} is a git repository a sandboxed command made, whose git directory lies outside the workspace or is none: pleach moved it to ${aside.to} when the command ended.`,
          );
        }
      } catch (error) {
        notInert.push(entry);
        notes.push(
          `${shown(entry)} is a git repository a sandboxed command made, whose git directory lies outside the workspace, and pleach could not move it aside (${(error as Error).message}). Do not run git there.`,
        );
      }
      continue;
    }
    // A git directory inside (or named) `.git` is a repository's machinery whole: its config and
    // hooks are neutralised, and so are those of its common dir. Any other folder may be the
    // user's own (src/ with a HEAD, objects and refs added): it only loses its HEAD.
    const insideGit = gitdir?.split(path.sep).includes(".git") === true;
    const steps: [string | undefined, "config" | "head"][] = insideGit
      ? [[gitdir, "config"], ...common.map((folder) => [folder, "config"] as [string, "config"])]
      : [[gitdir, "head"]];
    for (const [spelled, how] of steps) {
      if (spelled === undefined) continue;
      // Judged by where it leads now: a link of the command's (`commondir` naming `link/.git`
      // with `link -> .`) must not lead to a repository that is not its own. `neutralise` then
      // refuses a path that became a link since.
      const folder = realOr(spelled);
      if (!isInside(root, folder) || isInsideAny(protectedSet, folder)) continue;
      if (done.has(folder) || done.has(spelled)) continue;
      done.add(folder);
      try {
        moved.push(...neutralise(workspace, path.relative(root, folder), how));
      } catch (error) {
        failed.push(`${shown(folder)} (${(error as Error).message})`);
      }
    }
    if (failed.length > 0) notInert.push(entry);
    if (moved.length === 0 && failed.length === 0) continue;
    const what = `${shown(entry)} is a git repository a sandboxed command made`;
    notes.push(
      failed.length > 0
        ? `${what}; pleach could not make all of it inert: ${failed.join("; ")}. Do not run git there before you looked at its config and hooks.`
        : `${what}: pleach made it inert when the command ended, moving ${moved.join(", ")}${moved.some((step) => step.includes("config to")) ? "; the config in its place keeps only keys that run nothing (remotes, branches, core settings), and the repository stays usable, read-only from the next call" : "; git no longer takes that folder for a git directory"}. Ask the user if a hook or a config key of it is needed.`,
    );
  }
  return notes;
}

/**
 * Neutralise the git directory at `relative`: its config and hooks (`how` is `config`), or its
 * `HEAD` (`head`: git then no longer takes the folder for a git directory, and what else the
 * folder holds, perhaps the user's own files, stays). Returns what moved where.
 */
function neutralise(
  workspace: ReturnType<typeof workspaceRoot>,
  relative: string,
  how: "config" | "head",
): string[] {
  // A name that is not there: `locate` then holds the git directory itself (a final name that is a
  // link would be followed to another folder).
  const probe = path.join(relative, `.pleach-${randomUUID()}`);
  const located = locate(workspace, probe);
  try {
    if (located.missing.length !== 1) return [];
    // A folder on the way became a link since its real path was taken (a job of the session
    // swapped it): the folder held may be another repository, the user's own. Not touched.
    if (located.relative !== probe) {
      throw new Error("a folder on its path was replaced by a link while pleach looked at it");
    }
    const folder = located.parent;
    const name = (entry: string) => path.join(relative, entry);
    const moved: string[] = [];
    const moveEntry = (entry: string): string | undefined => {
      const aside = renameAside(workspace, folder, entry);
      if (aside !== undefined) moved.push(`${name(entry)} to ${name(aside)}`);
      return aside;
    };
    if (how === "head") {
      moveEntry("HEAD");
      return moved;
    }
    const config = moveEntry("config");
    if (config !== undefined) {
      const text = readSmallFile(workspace, folder, config, MAX_CONFIG_BYTES) ?? "";
      writeNewFile(workspace, folder, "config", keptConfig(text));
    }
    moveEntry("config.worktree");
    moveEntry("hooks");
    return moved;
  } finally {
    located.close();
  }
}

/** The real path of `target` as it is now (never a remembered one), or `target` if it has none. */
function realOr(target: string): string {
  try {
    return realpathSync.native(target);
  } catch {
    return target;
  }
}

/** A config holding only the {@link KEPT_KEYS} of `text`, each written by us, quoted. */
export function keptConfig(text: string): string {
  const lines = [
    "# Rewritten by pleach: this repository was made by a sandboxed command. Only keys that run",
    "# nothing were kept; the command's own config is beside this file (config.made-by-command).",
  ];
  let header: string | undefined;
  for (const entry of gitConfigEntries(text)) {
    if (!kept(entry)) continue;
    const next =
      entry.subsection === undefined
        ? `[${entry.section}]`
        : `[${entry.section} ${quoted(entry.subsection)}]`;
    if (next !== header) lines.push(next);
    header = next;
    lines.push(`\t${entry.key} = ${quoted(entry.value)}`);
  }
  return `${lines.join("\n")}\n`;
}

function kept(entry: GitConfigEntry): boolean {
  const rule = KEPT_KEYS[entry.section];
  if (rule === undefined || rule.subsection !== (entry.subsection !== undefined)) return false;
  // A control character could end the line or the quotes early as git reads them.
  const hasControl = (text: string) =>
    [...text].some((character) => character < " " || character === "\u007f");
  if (hasControl(entry.value) || hasControl(entry.subsection ?? "")) return false;
  // `<transport>::<address>` always has git run a remote helper program (`ext::sh -c ...` runs
  // the command itself): such a URL is never kept.
  if (
    entry.section === "remote" &&
    entry.key === "url" &&
    /^[A-Za-z][\w+.-]*::/.test(entry.value)
  ) {
    return false;
  }
  return rule.keys.includes(entry.key);
}

function quoted(value: string): string {
  return `"${value.replace(/[\\"]/g, (character) => `\\${character}`)}"`;
}
