import { type Dirent, lstatSync, readdirSync, readlinkSync, realpathSync, statSync } from "node:fs";
import path from "node:path";
import { ToolError } from "@pleach/core";
import { userCacheFolder } from "../caches/caches.js";
import { isInside } from "../paths.js";
import { userStateRoot } from "../user-state-folder.js";
import { type HiddenPath, hiddenReads, type ReadPolicy } from "./hidden-reads.js";
import { realpathOr } from "./path-state.js";
import { roleFolders } from "./protection.js";
import { defaultHomeFolders, HOST_FOLDERS } from "./read-view.js";

/**
 * Folders of the system the read view does not list (it empties them: `HOST_FOLDERS` are those it
 * shows and the sandbox's own), which no folder commands write may overlap either: the kernel and
 * the boot loader's configuration (run as root at the next boot), the EFI partition, snaps.
 */
const BOOT_FOLDERS: readonly string[] = ["/boot", "/efi", "/snap"];

/** The most entries of the homes' dot-folders looked at for links (see `homeLinkInto`). */
const MAX_HOME_ENTRIES = 20_000;

/** Options of {@link writableFolders}. */
export interface WritableFoldersOptions {
  /** The folders asked for (`allowWrites`, `--allow-write`): absolute, or relative to the current folder. */
  given: readonly string[];
  /** Real path of the workspace root. */
  root: string;
  /**
   * What commands cannot read (`hiddenReads` in the host scope), or at least what of it lies
   * outside the system's folders (which are refused whole first).
   */
  hiddenPaths: readonly HiddenPath[];
  /** For the homes, the role variables and pleach's own folders. */
  hostEnvironment: Readonly<Record<string, string | undefined>>;
  /**
   * The system's folders and the sandbox's own, each compared as spelled and by its real path
   * (`/opt` may lead to `/data/opt`). @default `HOST_FOLDERS` and `/boot`, `/efi`, `/snap`
   */
  systemFolders?: readonly string[];
}

/**
 * The real paths of the folders besides the workspace that commands in `workspace-write` may
 * write (`allowWrites`), each checked at every use: an existing folder that overlaps none of what
 * the host runs or keeps apart. Refused with `INVALID_INPUT`, naming the rule: a folder that holds
 * or lies inside the workspace (commands write the workspace anyway), a system folder or the
 * sandbox's own (`/usr`, `/etc`, `/var`, `/tmp`, ..., `/boot`), a home or a folder holding one,
 * the dot-entries at the top of a home (what the host's programs read) and what one of them (or an
 * entry of a dot-folder there) links into, a folder a host variable with a role names or one
 * holding it (`PATH`, `XDG_CONFIG_HOME`, ... see `ROLE_VARIABLES`), a folder inside a hidden path
 * (a hidden path inside it stays hidden there), pleach's own caches and state, and a path given through a folder commands write (a link
 * there they could re-point). Inside each folder the workspace's
 * rules hold as they do in the workspace (`workspaceProtection` with it as the root).
 */
export function writableFolders({
  given,
  root,
  hiddenPaths,
  hostEnvironment,
  systemFolders = [...HOST_FOLDERS, ...BOOT_FOLDERS],
}: WritableFoldersOptions): string[] {
  const folders: string[] = [];
  // A folder's real path is compared, so a system folder's is too.
  const systems = systemFolders.map((system) => ({ system, real: realpathOr(system) }));
  for (const each of given) {
    const folder = existingFolder(each);
    const refused = (why: string, other?: string) => refusal(each, folder, why, other);
    const overlap = (other: string) => isInside(other, folder) || isInside(folder, other);
    if (folder === "/") throw refused("it is the whole host");
    if (overlap(root)) {
      throw refused(
        isInside(root, folder)
          ? `it lies inside the workspace ${root}, which commands write anyway`
          : `it holds the workspace ${root}`,
        root,
      );
    }
    for (const { system, real } of systems) {
      const met = [system, real].find(overlap);
      if (met !== undefined) {
        const how =
          folder === met ? "it is" : isInside(met, folder) ? "it lies inside" : "it holds";
        const shown = met === system ? system : `${met} (where ${system} leads)`;
        throw refused(`${how} ${shown}, a folder of the system or the sandbox's own`, system);
      }
    }
    const homes = defaultHomeFolders(hostEnvironment);
    for (const home of homes) {
      if (isInside(folder, home)) {
        throw refused(folder === home ? "it is a home folder" : `it holds the home ${home}`, home);
      }
      const [top] = path.relative(home, folder).split(path.sep);
      if (isInside(home, folder) && top?.startsWith(".")) {
        throw refused(
          `${path.join(home, top)} is a dot-entry at the top of a home, the configuration of programs the host runs`,
          home,
        );
      }
    }
    const linked = homeLinkInto(homes, overlap);
    if (linked !== undefined) {
      throw refused(
        `${linked.entry}, a dot-entry of a home (the configuration of programs the host runs), is a link into it (${linked.real})`,
        linked.real,
      );
    }
    for (const { variable, why, folder: real } of roleFolders(hostEnvironment)) {
      if (overlap(real))
        throw refused(`it overlaps ${real}, what the host's ${variable} names: ${why}`, real);
    }
    // A hidden path inside the folder stays hidden there (mounted over its bind), as in the
    // workspace; one that holds it is refused.
    for (const hidden of hiddenPaths) {
      if (isInside(hidden.path, folder))
        throw refused(`it lies inside ${hidden.path}: ${hidden.rule}`, hidden.path);
    }
    for (const own of pleachFolders(hostEnvironment)) {
      if (overlap(own)) throw refused(`it overlaps ${own}, pleach's own caches or state`, own);
    }
    const other = folders.find(overlap);
    if (other !== undefined)
      throw refused(`it overlaps ${other}, also given: give one of them`, other);
    folders.push(folder);
  }
  // A path given through a link where commands write (`./build` -> /srv/out in the workspace, or
  // a link on the way a link leads) is a link a command can re-point: the next command's folder
  // would be the command's choice.
  given.forEach((each, index) => {
    const folder = folders[index] ?? each;
    for (const link of linksResolved(path.resolve(each))) {
      const top = [root, ...folders].find((writable) => isInside(writable, path.dirname(link)));
      if (top !== undefined) {
        throw refusal(
          each,
          folder,
          `it is reached through the link ${link}, which lies in ${top}, where commands may re-point a link; give the folder's real path ${folder}`,
          top,
        );
      }
    }
  });
  return folders;
}

/** The most links followed resolving one folder (as the kernel's limit). */
const MAX_LINKS = 40;

/**
 * The symbolic links that resolving the absolute `spelled` goes through, as they lie in real
 * folders, one at a time as the kernel follows them (a link's target may hold links too).
 */
function linksResolved(spelled: string): string[] {
  const links: string[] = [];
  let pending = spelled.split(path.sep).filter((segment) => segment !== "");
  let current: string = path.sep;
  while (pending.length > 0 && links.length <= MAX_LINKS) {
    const [name = "", ...rest] = pending;
    pending = rest;
    if (name === ".") continue;
    if (name === "..") {
      current = path.dirname(current);
      continue;
    }
    const next = path.join(current, name);
    let target: string | undefined;
    try {
      target = lstatSync(next).isSymbolicLink() ? readlinkSync(next) : undefined;
    } catch {
      break;
    }
    if (target === undefined) {
      current = next;
      continue;
    }
    links.push(next);
    pending = [...target.split(path.sep).filter((segment) => segment !== ""), ...pending];
    if (path.isAbsolute(target)) current = path.sep;
  }
  return links;
}

/** The refusal of the folder `given` (real path `folder`) for the rule `why`. */
function refusal(given: string, folder: string, why: string, other?: string): ToolError {
  return new ToolError(
    "INVALID_INPUT",
    `allowWrites (--allow-write) ${given} cannot be made writable for commands: ${why}. Give a folder of its own for what the task writes (a build output, a scratch folder) outside the workspace, the homes' dot-entries and the system's folders.`,
    { details: { path: folder, ...(other === undefined ? {} : { overlaps: other }) } },
  );
}

/**
 * The first dot-entry at the top of one of `homes`, or directly inside a dot-folder there
 * (`~/.bashrc`, `~/.config/nvim`), that is a symbolic link whose real path `overlaps` the folder
 * (a dotfiles checkout linked from the home, as stow, chezmoi or yadm make it). Looks at
 * {@link MAX_HOME_ENTRIES} entries at most.
 */
function homeLinkInto(
  homes: readonly string[],
  overlaps: (other: string) => boolean,
): { entry: string; real: string } | undefined {
  let budget = MAX_HOME_ENTRIES;
  const listed = (folder: string): Dirent[] => {
    if (budget <= 0) return [];
    try {
      const entries = readdirSync(folder, { withFileTypes: true }).slice(0, budget);
      budget -= entries.length;
      return entries;
    } catch {
      return [];
    }
  };
  for (const home of homes) {
    for (const top of listed(home)) {
      if (!top.name.startsWith(".")) continue;
      const entry = path.join(home, top.name);
      const candidates = top.isSymbolicLink()
        ? [entry]
        : top.isDirectory()
          ? listed(entry)
              .filter((inner) => inner.isSymbolicLink())
              .map((inner) => path.join(entry, inner.name))
          : [];
      for (const candidate of candidates) {
        const real = realpathOr(candidate);
        if (real !== candidate && overlaps(real)) return { entry: candidate, real };
      }
    }
  }
  return undefined;
}

/** The real path of the folder `given` names, or `INVALID_INPUT` saying why there is none. */
function existingFolder(given: string): string {
  let real: string;
  try {
    real = realpathSync.native(path.resolve(given));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw refusal(given, given, `it cannot be resolved (${code}); make the folder first`);
  }
  if (!statSync(real).isDirectory()) throw refusal(given, real, "it is not a folder");
  return real;
}

/** pleach's own folders, where the caches of every workspace and the checkpoints lie. */
function pleachFolders(hostEnvironment: Readonly<Record<string, string | undefined>>): string[] {
  const cache = userCacheFolder(hostEnvironment);
  return [path.join(realpathOr(cache), "pleach"), realpathOr(userStateRoot())];
}

/** Options of {@link writableFoldersOf}: a wrapper's. */
export interface WritableFoldersOfOptions {
  /** `allowWrites` as given. */
  allowWrites: readonly string[];
  hostEnvironment: Readonly<Record<string, string | undefined>>;
  /** The wrapper's read policy, whose hidden paths no writable folder may overlap. */
  readPolicy: ReadPolicy;
}

/**
 * The checked writable folders of a wrapper for the workspace `root`, with this call's hidden
 * paths when the caller has them (`gatherHostFacts`) or found afresh (the file tools' protection,
 * the look after a command), without the search of the system's folders.
 */
export function writableFoldersOf({
  allowWrites,
  hostEnvironment,
  readPolicy,
}: WritableFoldersOfOptions) {
  return (root: string, hiddenPaths?: readonly HiddenPath[]): string[] =>
    allowWrites.length === 0
      ? []
      : writableFolders({
          given: allowWrites,
          root: realpathSync.native(root),
          // The system's folders, whose secret files the search finds, are refused whole above
          // any hidden path, so found afresh the hidden paths need no search of them.
          hiddenPaths:
            hiddenPaths ?? hiddenReads({ root, hostEnvironment, ...readPolicy, systemFolders: [] }),
          hostEnvironment,
        });
}
