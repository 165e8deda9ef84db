import { splitPathGlob } from "../search/path-glob.js";
import { reportExitStatus } from "../shared/piped-exit-status.js";
import { GIT_DIR_GUARD } from "../shared/relative-path.js";
import { shellJoin } from "../shared/shell-quote.js";

/** The first line of stderr when ripgrep was missing and `find` listed without the ignore files. */
export const FIND_RAN = "pleach-list-backend find";

/** What a path glob list_files refuses without ripgrep is refused by. */
export const FIND_FALLBACK = "find (ripgrep is not in the sandbox)";

/** One record per entry: the path as found (`./a/b`), the kind letter and the size. */
const RECORD_FORMAT = "%p\\t%y\\t%s\\0";

/** What {@link listCommand} lists. */
export interface ListCommandOptions {
  recursive: boolean;
  glob: string | undefined;
  includeIgnored: boolean;
  maxEntries: number;
}

/**
 * The shell command `list_files` runs in the folder to list, printing `./path\tkind\tsize\0`
 * records (see {@link RECORD_FORMAT}), at most maxEntries + 1 of them (one more than asked for
 * tells "exactly maxEntries" from "more"):
 * - leaving ignored files out (the default) where the sandbox has ripgrep: `rg --files` lists the
 *   files its ignore rules keep, and `find -maxdepth 0` prints each one's record. Recursively, in
 *   path order (one thread, so a cut is the same call after call); the caller adds their folders.
 *   One level down, every kept file's first path segment, so a folder is listed when it holds a
 *   kept file; with a glob, the matching files directly in the folder only.
 * - with `includeIgnored`, or without ripgrep (then printing {@link FIND_RAN} on stderr and leaving
 *   out `node_modules`, as search_files' grep does): `find`, which lists every file and folder.
 *   Its cut comes before the sort, so `find` stops early rather than walking a whole
 *   `node_modules` to sort it: a cut listing holds the entries `find` reached first (in the file
 *   system's directory order, the same for an unchanged tree).
 */
export function listCommand(options: ListCommandOptions): string {
  if (options.includeIgnored) return `${GIT_DIR_GUARD}${findPipeline(options)}`;
  let find: string;
  try {
    find = findPipeline(options);
  } catch {
    // A path glob find cannot match: the caller, seeing FIND_RAN, refuses it with the reason.
    find = "exit 2";
  }
  return `${GIT_DIR_GUARD}if command -v rg >/dev/null 2>&1; then ${rgPipeline(options)}; else printf '%s\\n' '${FIND_RAN}' >&2; ${find}; fi`;
}

function rgPipeline({ recursive, glob, maxEntries }: ListCommandOptions): string {
  const rg = shellJoin([
    "rg",
    "--no-config",
    "--files",
    "--null",
    "--hidden",
    // .gitignore counts inside a git repository and out of one alike; the user's own global
    // excludes file does not, so a listing is the same on every machine.
    "--no-require-git",
    "--no-ignore-global",
    "--glob=!.git",
    ...(glob === undefined ? [] : [`--glob=${glob}`]),
    ...(recursive ? ["--sort=path"] : glob === undefined ? [] : ["--max-depth=1"]),
    "--",
    ".",
  ]);
  // One level down without a glob: the first segment of each path (`./src` of `./src/a.ts`).
  const children =
    !recursive && glob === undefined ? " | cut -z -d/ -f1-2 | LC_ALL=C sort -zu" : "";
  const records = shellJoin([
    "xargs",
    "-0r",
    "sh",
    "-c",
    `exec find "$@" -maxdepth 0 -printf '${RECORD_FORMAT}'`,
    "list_files",
  ]);
  return `${reportExitStatus(rg)}${children} | head -z -n ${maxEntries + 1} | ${records}`;
}

function findPipeline({ recursive, glob, includeIgnored, maxEntries }: ListCommandOptions): string {
  const parts =
    glob === undefined
      ? undefined
      : splitPathGlob(glob, "list_files", includeIgnored ? "find" : FIND_FALLBACK);
  let globTests: string[] = [];
  if (parts !== undefined) {
    const below = parts.folder === "" ? "." : `./${parts.folder}`;
    globTests = [
      ...(parts.folder === "" ? [] : ["-path", `${below}/*`]),
      ...(parts.anyDepth ? [] : ["!", "-path", `${below}/*/*`]),
      "-name",
      parts.name,
    ];
  } else if (glob !== undefined) {
    globTests = ["-name", glob];
  }
  const find = shellJoin([
    "find",
    ".",
    "-mindepth",
    "1",
    ...(recursive ? [] : ["-maxdepth", "1"]),
    "-name",
    ".git",
    "-prune",
    "-o",
    ...(includeIgnored ? [] : ["-name", "node_modules", "-prune", "-o"]),
    "(",
    "-type",
    "f",
    "-o",
    "-type",
    "d",
    ")",
    ...globTests,
    "-printf",
    RECORD_FORMAT,
  ]);
  // `head` before sorting: find stops once it has printed maxEntries + 1 records. A tree can hold
  // tens of thousands of entries, which `sort -z` orders in about a third of the time
  // Array.prototype.sort takes (records start with the path, so byte order is path order); one
  // folder's children are few, and sorting them in the caller saves starting `sort`.
  const cut = `${reportExitStatus(find)} | head -z -n ${maxEntries + 1}`;
  return recursive ? `${cut} | LC_ALL=C sort -z` : cut;
}
