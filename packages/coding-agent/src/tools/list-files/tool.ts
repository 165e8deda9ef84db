import { defineTool, isToolError, type PluginToolDefinition, ToolError } from "@pleach/core";
import { z } from "zod";
import type { SandboxClient } from "../../sandbox/index.js";
import { splitPathGlob } from "../search/path-glob.js";
import { displayPath } from "../shared/control-characters.js";
import { comparePathBytes, compareTreePaths } from "../shared/path-order.js";
import { takeExitStatus } from "../shared/piped-exit-status.js";
import {
  GIT_DIR_GUARD_STATUS,
  isInsideGitDir,
  resolveWorkspacePath,
} from "../shared/relative-path.js";
import { FIND_FALLBACK, FIND_RAN, listCommand } from "./command.js";

/** The input of `list_files`. */
export const listFilesInputSchema = z
  .object({
    dir: z
      .string()
      .describe(
        'The folder to list, relative to the workspace root: "." (or "") for the root, "src" for a subfolder. An absolute path inside the workspace works too.',
      ),
    recursive: z
      .boolean()
      .optional()
      .describe(
        "List everything below `dir` (true) or only its immediate children (false, the default; with a glob that has a `/`, true is the default).",
      ),
    glob: z
      .string()
      .min(1)
      .refine((glob) => !glob.includes("\0"), { message: "the glob cannot contain a NUL byte" })
      .optional()
      .describe(
        "Only list files matching this glob: a name glob such as `*.ts` matches the last path segment at any depth; a glob with a `/` matches the path below `dir`, e.g. `src/**/*.ts` or `**/*.d.ts` (as in search_files), and makes the listing recursive unless `recursive` is false. With a glob, folders are not listed (with includeIgnored, folders whose name matches are). Folders are still descended into when recursive.",
      ),
    includeIgnored: z
      .boolean()
      .optional()
      .describe(
        "Also list what .gitignore, .ignore and .git/info/exclude leave out, such as node_modules or build output (default false).",
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

/**
 * `list_files`: list a workspace folder, its immediate children or, with `recursive`, everything
 * below it, as `./path\tkind\tsize\0` records that `find -printf` prints (each NUL-terminated so
 * any file name parses; see `list-files-command.ts` for the commands). By default what the ignore
 * files (`.gitignore`, nested ones too, `.ignore`, `.git/info/exclude`) leave out is not listed:
 * ripgrep picks the files, and a folder is listed when it holds a listed file. Only regular files
 * and folders are listed: symlinks, devices, sockets and pipes are dropped, and `.git` is neither
 * listed nor entered.
 *
 * Order and cuts: entries come sorted by path bytes. A recursive listing of ripgrep's is cut in
 * path order, at maxEntries files and folders; one of `find`'s (`includeIgnored`) is cut before it
 * is sorted, and holds the entries `find` reached first, the same from call to call on an
 * unchanged tree, but not the first paths by name.
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
      "Files that .gitignore, .ignore or .git/info/exclude leave out (node_modules, build output) are not listed, and a folder is listed when it holds a listed file; `includeIgnored: true` lists everything, empty folders too.",
      `Returns at most maxEntries entries (default ${DEFAULT_MAX_ENTRIES.toLocaleString("en-US")}); a cut listing says so. Filter with \`glob\`: \`*.ts\` by name, \`src/**/*.ts\` or \`**/*.d.ts\` by path.`,
      "Symlinks, devices and the .git folder are not listed. To find text inside files, use search_files.",
    ].join(" "),
    inputSchema: listFilesInputSchema,
    outputSchema: listFilesOutputSchema,
    annotations: { title: "List files", readOnlyHint: true, idempotentHint: true },
    // Tens of thousands of entries, built here in the schema's exact shape: validate each one, but
    // return them as built rather than a copy.
    outputValidation: "check",
    async execute(
      { dir, recursive: asked, glob, includeIgnored = false, maxEntries = DEFAULT_MAX_ENTRIES },
      { abortSignal },
    ): Promise<ListFilesOutput> {
      // A glob with a `/` names paths below `dir`, which only a recursive listing holds: unless
      // the call says `recursive: false`, such a glob lists recursively.
      const recursive = asked ?? glob?.includes("/") ?? false;
      const folder = await resolveWorkspacePath(client, dir, {
        field: "dir",
        kind: "folder",
        abortSignal,
      });
      if (isInsideGitDir(folder)) throw insideGitDir(dir);
      const command = listCommand({ recursive, glob, includeIgnored, maxEntries });
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
      const taken = takeExitStatus(result.stderr);
      const { status } = taken;
      const findRan = includeIgnored || taken.stderr.startsWith(FIND_RAN);
      const stderr = taken.stderr.startsWith(FIND_RAN)
        ? taken.stderr.slice(FIND_RAN.length).trim()
        : taken.stderr;
      // Without ripgrep, a path glob that find cannot match is refused with the reason.
      if (findRan && !includeIgnored && glob !== undefined) {
        splitPathGlob(glob, "list_files", FIND_FALLBACK);
      }
      if (status === undefined) {
        if (result.exitCode === GIT_DIR_GUARD_STATUS) throw insideGitDir(dir);
        throw new ToolError(
          "COMMAND_FAILED",
          `list_files could not run its listing (exit ${result.exitCode}): ${stderr || "no message"}`,
        );
      }
      if (result.truncated) {
        throw new ToolError(
          "TOO_LARGE",
          "list_files got more output than it can hold. Lower maxEntries or list a smaller folder.",
        );
      }
      const prefix = folder === "" ? "" : `${folder}/`;
      // ripgrep's recursive listing of files gets their folders, and is cut after that.
      const ripgrepTree = !findRan && recursive;
      const parsed = parseFindOutput(
        result.stdout,
        ripgrepTree ? maxEntries + 1 : maxEntries,
        prefix,
      );
      const entries = parsed.entries;
      if (ripgrepTree) {
        if (glob === undefined) addFolders(entries, prefix);
        entries.sort((left, right) => comparePathBytes(left.path, right.path));
      }
      let truncated = parsed.truncated;
      if (entries.length > maxEntries) {
        entries.length = maxEntries;
        truncated = true;
      }
      // Within one folder, this order is the byte order `sort -z` gives.
      if (!recursive) entries.sort((left, right) => compareTreePaths(left.path, right.path));
      // find exits 1 when some folder could not be read, ripgrep 2; what they did list is still
      // worth returning. ripgrep exits 1 when it found no file.
      if (entries.length === 0 && status !== 0 && (findRan || status !== 1)) {
        throw new ToolError(
          glob !== undefined && !findRan ? "INVALID_INPUT" : "COMMAND_FAILED",
          `list_files failed (exit ${status}): ${stderr || "no message"}${glob !== undefined && !findRan ? "\nIf the glob is at fault, fix it and list again." : ""}`,
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
          output:
            "No entries. (Nothing here matches the glob, if one was given. Files left out by .gitignore or .ignore are listed with includeIgnored: true; symlinks, devices and .git never are.)",
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
 * Add to `entries` (files below the listed folder, whose paths start with `prefix`) every folder
 * between them and it.
 */
function addFolders(entries: ListEntry[], prefix: string): void {
  const seen = new Set<string>();
  const files = entries.length;
  for (let index = 0; index < files; index++) {
    const file = entries[index] as ListEntry;
    for (
      let slash = file.path.lastIndexOf("/");
      slash >= prefix.length;
      slash = file.path.lastIndexOf("/", slash - 1)
    ) {
      const folder = file.path.slice(0, slash);
      if (seen.has(folder)) break;
      seen.add(folder);
      entries.push({ path: folder, kind: "dir" });
    }
  }
}

/**
 * Parse `./path\tkind\tsize\0` records in one pass over the text, the path below the listed folder
 * (whose workspace-relative path and a `/` are `prefix`), keeping the first maxEntries; kinds other than file and folder are dropped. Each record is read from its end:
 * the size's digits, a tab, the kind and a tab, so a tab in a file name cannot confuse the parse.
 * (This walk is about twice as fast as `lastIndexOf("\t")` from the end of each record.)
 */
function parseFindOutput(
  stdout: string,
  maxEntries: number,
  prefix: string,
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
    // Past the `./` that find and ripgrep print before each path.
    const pathStart = stdout.startsWith("./", recordStart) ? recordStart + 2 : recordStart;
    if (kind === 0x66 /* f */) {
      entries.push({ path: prefix + stdout.slice(pathStart, kindTab), kind: "file", size });
    } else if (kind === 0x64 /* d */) {
      entries.push({ path: prefix + stdout.slice(pathStart, kindTab), kind: "dir" });
    }
  }
  return { entries, truncated: position < length };
}

function insideGitDir(dir: string): ToolError {
  return new ToolError(
    "INVALID_INPUT",
    `list_files does not list inside .git (dir ${JSON.stringify(dir)}). List the working tree, and use git tools for history.`,
  );
}
