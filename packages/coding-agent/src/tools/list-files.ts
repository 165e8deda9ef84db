import { defineTool, isToolError, type PluginToolDefinition, ToolError } from "@pleach/core";
import { z } from "zod";
import type { SandboxClient } from "../sandbox/index.js";
import { displayPath } from "./control-characters.js";
import { compareTreePaths } from "./path-order.js";
import { reportExitStatus, takeExitStatus } from "./piped-exit-status.js";
import {
  GIT_DIR_GUARD,
  GIT_DIR_GUARD_STATUS,
  isInsideGitDir,
  workspaceRelativePath,
} from "./relative-path.js";
import { shellJoin } from "./shell-quote.js";

/** The input of `list_files`. */
export const listFilesInputSchema = z
  .object({
    dir: z
      .string()
      .describe(
        'The folder to list, relative to the workspace root: "." (or "") for the root, "src" for a subfolder.',
      ),
    recursive: z
      .boolean()
      .optional()
      .describe(
        "List everything below `dir` (true) or only its immediate children (false, the default).",
      ),
    glob: z
      .string()
      .min(1)
      .refine((glob) => !glob.includes("\0"), { message: "the glob cannot contain a NUL byte" })
      .optional()
      .describe(
        "Only list entries whose name (the last path segment, not the whole path) matches this glob, e.g. `*.ts`. Folders whose name does not match are still descended into when recursive.",
      ),
    maxEntries: z
      .number()
      .int()
      .min(1)
      .max(1_000_000)
      .optional()
      .describe(
        "The most entries to return (default 5,000). When more exist, the last entry carries `truncatedAfter: true`; narrow `dir` or `glob` rather than raising this far.",
      ),
  })
  .strict();

/** One listed file or folder. */
const listEntrySchema = z.object({
  path: z
    .string()
    .describe(
      "Relative to the workspace root, whatever `dir` was (listing `src` gives `src/a.ts`); never `./...`.",
    ),
  kind: z.enum(["file", "dir"]).describe("A regular file or a folder."),
  size: z.number().int().nonnegative().optional().describe("Files only: the size in bytes."),
  truncatedAfter: z
    .literal(true)
    .optional()
    .describe(
      "Present on the last entry only, when more entries exist than `maxEntries`: the list was cut after it (it holds entries `find` reached first, sorted; the same tree gives the same cut).",
    ),
});

/**
 * The output of `list_files`: files and folders, sorted by path bytes.
 * Compiled (`z.compile`): parsing a long list is about ten times faster than with zod's
 * interpreter, with the same result and the same issues. (The tool's own outputs are checked
 * without a copy: see `outputValidation`.)
 */
export const listFilesOutputSchema = z.compile(z.array(listEntrySchema));

/** What `list_files` accepts. */
export type ListFilesInput = z.input<typeof listFilesInputSchema>;
/** What `list_files` returns. */
export type ListFilesOutput = z.output<typeof listFilesOutputSchema>;
/** One entry of {@link ListFilesOutput}. */
type ListEntry = z.output<typeof listEntrySchema>;

/** Options of {@link createListFilesTool}. */
export interface ListFilesToolOptions {
  /**
   * Time limit of one listing, in milliseconds.
   * @default 60_000
   */
  timeoutMs?: number;
}

const DEFAULT_MAX_ENTRIES = 5_000;

/** Room for one record: a path up to PATH_MAX, the size and the kind. */
const RECORD_BYTES = 4_096 + 32;
const MAX_OUTPUT_BYTES = 256 * 1024 * 1024;

/** The exit status of {@link PLACEHOLDER_PRUNE} when the folder to list is a placeholder. */
const PLACEHOLDER_STATUS = 96;

/**
 * Shell text that leaves the sandbox's placeholders out of the listing. Where a sandbox keeps a
 * missing protected path uncreatable with an empty read-only folder of its own (the local
 * bubblewrap sandbox in workspace-write mode), it names those folders in `PLEACH_PLACEHOLDERS`,
 * absolute paths one a line. This sets the positional parameters to a find expression that prunes
 * each of them by identity (`-samefile`: the very folder, never another one of the same name, and
 * nothing below it), and stops with {@link PLACEHOLDER_STATUS} when the folder to list is one.
 * Without the variable (other sandboxes, danger-full-access) it leaves the parameters empty and
 * nothing changes. Run by bash (`-ef` is not POSIX): `set -f` because the paths are split
 * unquoted, on newlines only.
 */
const PLACEHOLDER_PRUNE = [
  "set --",
  `if [ -n "\${PLEACH_PLACEHOLDERS-}" ]; then set -f; IFS='\n'`,
  `for pleach_placeholder in $PLEACH_PLACEHOLDERS; do if [ . -ef "$pleach_placeholder" ]; then exit ${PLACEHOLDER_STATUS}; fi; if [ -d "$pleach_placeholder" ]; then set -- "$@" -samefile "$pleach_placeholder" -o; fi; done`,
  "unset IFS; set +f",
  'if [ "$#" -gt 0 ]; then set -- "(" "$@" -false ")" -prune -o; fi; fi; ',
].join("; ");

/**
 * `list_files`: list a workspace folder with `find -printf '<dir>/%P\t%y\t%s\0'` (the
 * workspace-relative path, kind and size; each record NUL-terminated so any file name parses), its
 * immediate children or, with `recursive`, everything below it. Only regular files and folders are listed: symlinks, devices, sockets and pipes are
 * dropped, and `.git` is neither listed nor entered. Nor are the sandbox's placeholder folders
 * (`PLEACH_PLACEHOLDERS`, see {@link PLACEHOLDER_PRUNE}): a missing `.envrc` is not listed as a
 * folder; a folder of the user's of that name is.
 *
 * Order and cuts: entries come sorted by path bytes. A listing longer than maxEntries is cut before
 * it is sorted, so `find` stops early rather than walking a whole `node_modules` to sort it: a cut
 * listing holds entries `find` reached first (depth first, in the file system's directory order),
 * which is the same from call to call on an unchanged tree, but is not the first paths by name.
 */
export function createListFilesTool(
  client: SandboxClient,
  { timeoutMs = 60_000 }: ListFilesToolOptions = {},
): PluginToolDefinition<typeof listFilesInputSchema, typeof listFilesOutputSchema> {
  return defineTool({
    name: "list_files",
    description: [
      "List the files and folders in a workspace folder: its immediate children, or everything below it with `recursive: true`.",
      "Paths come back relative to the workspace root, sorted, with file sizes in bytes.",
      `Returns at most maxEntries entries (default ${DEFAULT_MAX_ENTRIES.toLocaleString("en-US")}); a cut listing says so, and holds the entries found first rather than the first by name. Filter by name with \`glob\` (e.g. \`*.ts\`).`,
      "Symlinks, devices and the .git folder are not listed. To find text inside files, use search_files.",
    ].join(" "),
    inputSchema: listFilesInputSchema,
    outputSchema: listFilesOutputSchema,
    annotations: { title: "List files", readOnlyHint: true, idempotentHint: true },
    // Tens of thousands of entries, built here in the schema's exact shape: validate each one, but
    // return them as built rather than a copy.
    outputValidation: "check",
    async execute(
      { dir, recursive = false, glob, maxEntries = DEFAULT_MAX_ENTRIES },
      { abortSignal },
    ): Promise<ListFilesOutput> {
      const folder = workspaceRelativePath(dir, { field: "dir" });
      if (isInsideGitDir(folder)) throw insideGitDir(dir);
      // `"$@"`: the prune of the placeholders (see PLACEHOLDER_PRUNE), before anything else.
      const find = `${shellJoin([
        "find",
        ".",
        "-mindepth",
        "1",
        ...(recursive ? [] : ["-maxdepth", "1"]),
      ])} "$@" ${shellJoin([
        "-name",
        ".git",
        "-prune",
        "-o",
        "(",
        "-type",
        "f",
        "-o",
        "-type",
        "d",
        ")",
        ...(glob === undefined ? [] : ["-name", glob]),
        "-printf",
        // The path as reported (`%P` is the path below `.`, without `./`), so each is one slice
        // of the output; `%` and a backslash in the folder's name are escaped for -printf.
        `${printfLiteral(folder === "" ? "" : `${folder}/`)}%P\\t%y\\t%s\\0`,
      ])}`;
      // `head` before sorting: find stops once it has printed maxEntries + 1 records (one more
      // than asked for tells "exactly maxEntries" from "more"), and only those are sorted. A tree
      // can hold tens of thousands of entries, which `sort -z` orders in about a third of the time
      // Array.prototype.sort takes (records start with the path, so byte order is path order); one
      // folder's children are few, and sorting them here saves starting `sort` (about a millisecond).
      const cut = `${GIT_DIR_GUARD}${PLACEHOLDER_PRUNE}${reportExitStatus(find)} | head -z -n ${maxEntries + 1}`;
      const command = recursive ? `${cut} | LC_ALL=C sort -z` : cut;
      let result: Awaited<ReturnType<SandboxClient["exec"]>>;
      try {
        result = await client.exec(command, {
          cwd: folder,
          timeoutMs,
          abortSignal,
          maxOutputBytes: Math.min((maxEntries + 1) * RECORD_BYTES + 65_536, MAX_OUTPUT_BYTES),
        });
      } catch (error) {
        if (isToolError(error) && error.code === "NOT_A_DIRECTORY") {
          throw new ToolError(
            "NOT_A_DIRECTORY",
            `dir ${JSON.stringify(dir)} is a file, not a folder. Read it with read_file, or list its folder.`,
          );
        }
        throw error;
      }
      if (result.timedOut) {
        throw new ToolError(
          "TIMEOUT",
          `list_files ran past ${timeoutMs} ms and was stopped. List a smaller folder, or without recursive.`,
        );
      }
      const { status, stderr } = takeExitStatus(result.stderr);
      if (status === undefined) {
        if (result.exitCode === GIT_DIR_GUARD_STATUS) throw insideGitDir(dir);
        // A placeholder stands for a path that does not exist.
        if (result.exitCode === PLACEHOLDER_STATUS) {
          throw new ToolError("NOT_FOUND", `no such folder: ${dir}`);
        }
        throw new ToolError(
          "COMMAND_FAILED",
          `list_files could not run find (exit ${result.exitCode}): ${stderr || "no message"}`,
        );
      }
      if (result.truncated) {
        throw new ToolError(
          "TOO_LARGE",
          "list_files got more output than it can hold. Lower maxEntries or list a smaller folder.",
        );
      }
      const { entries, truncated } = parseFindOutput(result.stdout, maxEntries);
      // Within one folder, this order is the byte order `sort -z` gives.
      if (!recursive) entries.sort((left, right) => compareTreePaths(left.path, right.path));
      // find exits 1 when some folder could not be read; what it did list is still worth returning.
      if (entries.length === 0 && status !== 0) {
        throw new ToolError(
          "COMMAND_FAILED",
          `find failed (exit ${status}): ${stderr || "no message"}`,
          { details: { exitCode: status, stderr } },
        );
      }
      if (truncated) {
        const last = entries[entries.length - 1];
        if (last !== undefined) last.truncatedAfter = true;
      }
      return entries;
    },
    toModelOutput(output) {
      if (output.length === 0) {
        return {
          output: "No entries. (Symlinks, devices and .git are not listed.)",
          error: false,
        };
      }
      const lines = output.map((entry) => {
        const shown = displayPath(entry.path);
        return entry.kind === "dir"
          ? `${shown}/`
          : `${shown}  (${(entry.size ?? 0).toLocaleString("en-US")} bytes)`;
      });
      if (output[output.length - 1]?.truncatedAfter) {
        lines.push(
          `[listing capped at ${output.length} entries; narrow dir or glob, or raise maxEntries]`,
        );
      }
      return { output: lines.join("\n"), error: false };
    },
  });
}

/**
 * Parse `path\tkind\tsize\0` records (the path as reported) in one pass over the text, keeping the
 * first maxEntries; kinds other than file and folder are dropped. Each record is read from its end:
 * the size's digits, a tab, the kind and a tab, so a tab in a file name cannot confuse the parse.
 * (This walk is about twice as fast as `lastIndexOf("\t")` from the end of each record.)
 */
function parseFindOutput(
  stdout: string,
  maxEntries: number,
): { entries: ListEntry[]; truncated: boolean } {
  const entries: ListEntry[] = [];
  // `head -z -n` counts records, kept or dropped.
  let records = 0;
  let position = 0;
  const length = stdout.length;
  while (position < length && records < maxEntries) {
    let end = stdout.indexOf("\0", position);
    if (end === -1) end = length;
    records += 1;
    const recordStart = position;
    position = end + 1;
    let cursor = end - 1;
    let size = 0;
    let scale = 1;
    let code = stdout.charCodeAt(cursor);
    while (code >= 0x30 && code <= 0x39) {
      size += (code - 0x30) * scale;
      scale *= 10;
      cursor -= 1;
      code = stdout.charCodeAt(cursor);
    }
    const kindTab = cursor - 2;
    if (code !== 0x09 /* \t */ || kindTab <= recordStart) continue;
    const kind = stdout.charCodeAt(kindTab + 1);
    if (kind === 0x66 /* f */) {
      entries.push({ path: stdout.slice(recordStart, kindTab), kind: "file", size });
    } else if (kind === 0x64 /* d */) {
      entries.push({ path: stdout.slice(recordStart, kindTab), kind: "dir" });
    }
  }
  return { entries, truncated: position < length };
}

/** `text` as a literal part of a find `-printf` format: `\\` and `%` escaped. */
function printfLiteral(text: string): string {
  return text.replaceAll("\\", "\\\\").replaceAll("%", "%%");
}

function insideGitDir(dir: string): ToolError {
  return new ToolError(
    "INVALID_INPUT",
    `list_files does not list inside .git (dir ${JSON.stringify(dir)}). List the working tree, and use git tools for history.`,
  );
}
