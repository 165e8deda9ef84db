import { defineTool, isToolError, type PluginToolDefinition, ToolError } from "@pleach/core";
import { z } from "zod";
import type { SandboxClient } from "../../sandbox/index.js";
import { type PathGlob, splitPathGlob } from "../search/path-glob.js";
import { GREP_RAN, runSearch } from "../search/run-search.js";
import { searchMatchSchema } from "../search/search-match.js";
import { displayPath } from "../shared/control-characters.js";
import { reportExitStatus } from "../shared/piped-exit-status.js";
import { isInsideGitDir, resolveWorkspacePath } from "../shared/relative-path.js";
import { shellJoin } from "../shared/shell-quote.js";

/** The input of `search_files`. */
export const searchFilesInputSchema = z
  .object({
    pattern: z
      .string()
      .min(1)
      .refine((pattern) => !/[\n\r\0]/.test(pattern), {
        message:
          "the pattern matches within one line, so it cannot contain a newline (or a NUL byte); search for the text of a single line",
      })
      .describe(
        "A regular expression matched against each line (ripgrep's Rust syntax; POSIX extended syntax when grep runs instead). Escape metacharacters such as `.`, `(`, `[` or `$` to match them literally.",
      ),
    glob: z
      .string()
      .min(1)
      .refine((glob) => !glob.includes("\0"), { message: "the glob cannot contain a NUL byte" })
      .optional()
      .describe(
        "Only search files matching this glob: a name glob such as `*.ts` or `*.{js,mjs}` matches the last path segment at any depth; a glob with a `/` matches the path below `path`, e.g. `src/**/*.ts` or `**/*.d.ts` (as in list_files).",
      ),
    includeIgnored: z
      .boolean()
      .optional()
      .describe(
        "Also search what .gitignore, .ignore and .git/info/exclude leave out, such as node_modules or build output (default false).",
      ),
    path: z
      .string()
      .optional()
      .describe(
        'The folder to search in, relative to the workspace root (default: the whole workspace, "."); an absolute path inside the workspace works too. To search one file, give its folder here and its name as `glob`.',
      ),
    maxMatches: z
      .number()
      .int()
      .min(1)
      .max(100_000)
      .optional()
      .describe(
        "The most matches to return (default 100). When more exist, the last match carries `truncatedAfter: true`; narrow the pattern, glob or path rather than raising this far.",
      ),
  })
  .strict();

/**
 * The output of `search_files`: the matching lines, sorted by path and line (the shape the
 * `search_files` contract gives). Compiled (`z.compile`), because the list may hold tens of
 * thousands of matches; the result and the issues are zod's own. (The tool's own outputs are
 * checked without a copy: see `outputValidation`.)
 */
export const searchFilesOutputSchema = z.compile(z.array(searchMatchSchema));

/** What `search_files` accepts. */
export type SearchFilesInput = z.input<typeof searchFilesInputSchema>;
/**
 * What `search_files` returns: the matches, and, on the list itself (a property of the array, not
 * an entry, so the contract's shape holds; JSON leaves it out), `hiddenSkipped`: how many files and
 * folders the sandbox's read policy hides (`--hide-read`) the search met and skipped, when any.
 */
export type SearchFilesOutput = z.output<typeof searchFilesOutputSchema> & {
  hiddenSkipped?: number;
};

/** Which program searches. */
export type SearchBackend = "auto" | "rg" | "grep";

/** Options of {@link createSearchFilesTool}. */
export interface SearchFilesToolOptions {
  /**
   * `"auto"` probes `command -v rg` in the sandbox on each call and uses ripgrep when it is there,
   * `grep -rn` otherwise, as the `search_files` contract says; `"rg"` or `"grep"` forces one.
   * @default "auto"
   */
  searchBackend?: SearchBackend;
  /**
   * Snippets longer than this many characters are cut, with a marker.
   * @default 500
   */
  maxSnippetChars?: number;
  /**
   * Time limit of one search, in milliseconds.
   * @default 60_000
   */
  timeoutMs?: number;
}

const DEFAULT_MAX_MATCHES = 100;
/** Longest path the kernel hands out (PATH_MAX), plus room for `:NNN:`. */
const PATH_BYTES = 4_096 + 32;
const MAX_OUTPUT_BYTES = 256 * 1024 * 1024;
/**
 * The last stage of a search pipeline that may print a lot: pass the output on in blocks of
 * 256 KiB. ripgrep writes each file's matches as it finishes that file, a few KiB at a time, and a
 * reader woken for every write takes CPU from the search. `iflag=fullblock` is GNU's: a `dd`
 * without it fails before reading, and `cat` passes the output on instead.
 */
const COALESCE = " | { dd bs=256k iflag=fullblock status=none 2>/dev/null || cat; }";

/**
 * `search_files`: search file contents for a regular expression with ripgrep, or
 * `grep -rn` where ripgrep is missing, capped upstream with `| head -n` (a large output is then
 * passed on in blocks: see {@link COALESCE}). Both print the canonical
 * `path:line:content` records (the path NUL-terminated, so any file name parses), except that
 * ripgrep's first search prints each file's path once, above that file's `line:content` lines
 * (`--heading`), which leaves less to print, pipe, decode and parse when files have many matches.
 *
 * What is searched: ripgrep skips binary files and what the ignore files leave out (`.gitignore`,
 * nested ones too, inside a git repository or not, `.ignore`, `.git/info/exclude`; not the user's
 * global excludes file, so a search is the same on every machine), and searches hidden files; grep
 * has no ignore rules, so it skips binary files and `node_modules` only. With `includeIgnored`,
 * both skip binary files only. `.git` is never searched. A path glob (`src/**\/*.ts`) is
 * ripgrep's; grep gets its folder to search and `--include` for the name (see `path-glob.ts`).
 *
 * Order and cuts: matches come sorted by path (folder by folder, as ripgrep's `--sort path` walks:
 * `a/b.ts` before `a.ts`) and line. ripgrep searches on all cores, so the order in which it finds
 * files, and which matches a cut keeps, change from run to run. Its first search is cut at
 * 2 × (maxMatches + 1) lines, which hold more than maxMatches matches (each line is a match, or the
 * blank line that closes a file's matches): a search that was not cut is complete, and sorting it
 * gives the first maxMatches matches in path order, however many more there are. A search that was
 * cut runs again with `--sort path` (one thread, records cut at maxMatches + 1 lines, so it stops
 * as early as it can), so a cut result is always the first maxMatches matches in path order. grep
 * prints records cut at maxMatches + 1 lines and walks in one thread: its cut keeps the first
 * matches in the file system's directory order, the same for an unchanged tree.
 */
export function createSearchFilesTool(
  client: SandboxClient,
  {
    searchBackend = "auto",
    maxSnippetChars = 500,
    timeoutMs = 60_000,
  }: SearchFilesToolOptions = {},
): PluginToolDefinition<typeof searchFilesInputSchema, typeof searchFilesOutputSchema> {
  // Bound the bytes per line upstream so a minified file cannot flood the pipe; a line cut there is
  // always longer than maxSnippetChars (at most 4 bytes per character), so the marker still shows.
  const lineBytes = Math.max(64, maxSnippetChars * 4);
  return defineTool({
    name: "search_files",
    description: [
      "Search the contents of workspace files for a regular expression and get back matching lines as `path:line:content`.",
      `Returns at most maxMatches matches (default ${DEFAULT_MAX_MATCHES}), sorted by path and line (with ripgrep, a cut list holds the first ones in that order); lines longer than ${maxSnippetChars} characters are cut.`,
      "Files that .gitignore, .ignore or .git/info/exclude leave out (node_modules, build output) are skipped unless `includeIgnored: true` (ripgrep; when the sandbox lacks it, grep skips node_modules only).",
      "Binary files and .git are never searched. Narrow a search with `path` (a folder) and `glob` (file names such as `*.ts`).",
      "An invalid regular expression fails with the engine's message: fix or escape the pattern and search again. No matches returns an empty list. Files the sandbox hides (--hide-read) are skipped and counted.",
    ].join(" "),
    inputSchema: searchFilesInputSchema,
    outputSchema: searchFilesOutputSchema,
    annotations: { title: "Search files", readOnlyHint: true, idempotentHint: true },
    // Tens of thousands of entries, built here in the schema's exact shape: validate each one, but
    // return them as built rather than a copy.
    outputValidation: "check",
    async execute(
      { pattern, glob, path = "", includeIgnored = false, maxMatches = DEFAULT_MAX_MATCHES },
      { abortSignal },
    ): Promise<SearchFilesOutput> {
      const folder = await resolveWorkspacePath(client, path, {
        field: "path",
        kind: "folder",
        abortSignal,
      });
      if (isInsideGitDir(folder)) {
        throw new ToolError(
          "INVALID_INPUT",
          `search_files does not search inside .git (path ${JSON.stringify(path)}). Search the working tree, and use git tools for history.`,
        );
      }
      // One line more than asked for tells "exactly maxMatches" from "more than maxMatches".
      const recordLines = maxMatches + 1;
      // Worth a process only when the output may run to megabytes.
      const coalesce = maxMatches > 1_000 ? COALESCE : "";
      // In ripgrep's `--heading` output a line is a match or the blank line that closes a file's
      // matches, so twice that many lines hold more than maxMatches matches. (A warning line or a
      // newline in a file name takes a line too: a cut is then reported even if fewer were kept.)
      const headingLines = 2 * recordLines;
      const rg = (order: "any" | "path") =>
        `${reportExitStatus(
          shellJoin([
            "rg",
            "--no-config",
            "--null",
            "--line-number",
            "--with-filename",
            order === "any" ? "--heading" : "--no-heading",
            "--color=never",
            "--hidden",
            ...(includeIgnored ? ["--no-ignore"] : ["--no-require-git", "--no-ignore-global"]),
            "--glob=!.git",
            `--max-columns=${lineBytes}`,
            "--max-columns-preview",
            ...(order === "path" ? ["--sort=path"] : []),
            ...(glob === undefined ? [] : [`--glob=${glob}`]),
            `--regexp=${pattern}`,
            "--",
            ".",
          ]),
        )} | head -n ${order === "any" ? headingLines : recordLines}${coalesce}`;
      let grepPipeline: string;
      try {
        const grep = grepArgv(pattern, glob, includeIgnored);
        // grep cannot bound its line length itself; `cut` does (NUL bytes pass through it).
        grepPipeline = `${reportExitStatus(shellJoin(grep))} | cut -b 1-${PATH_BYTES + lineBytes} | head -n ${recordLines}${coalesce}`;
      } catch (error) {
        // A path glob grep cannot match: refused now when grep is asked for, else if it runs.
        if (searchBackend === "grep" || !isToolError(error)) throw error;
        grepPipeline = reportExitStatus(`printf '%s\\n' ${shellJoin([error.message])} >&2; false`);
      }
      const search =
        searchBackend === "rg"
          ? rg("any")
          : searchBackend === "grep"
            ? grepPipeline
            : `if command -v rg >/dev/null 2>&1; then ${rg("any")}; else printf '%s\\n' '${GREP_RAN}' >&2; ${grepPipeline}; fi`;
      const started = performance.now();
      const run = (command: string, heading: boolean) =>
        runSearch(client, command, {
          path,
          folder,
          timeoutMs: Math.max(1, Math.round(timeoutMs - (performance.now() - started))),
          abortSignal,
          maxMatches,
          maxSnippetChars,
          headingLines: heading ? headingLines : undefined,
          maxOutputBytes: Math.min(
            (heading ? headingLines : recordLines) * (PATH_BYTES + lineBytes + 64) + 65_536,
            MAX_OUTPUT_BYTES,
          ),
        });
      let found = await run(search, searchBackend !== "grep");
      if (found === "timed out") {
        throw new ToolError(
          "TIMEOUT",
          `search_files ran past ${timeoutMs} ms and was stopped. Narrow the search with path or glob.`,
        );
      }
      if (found.cut && found.heading) {
        // Which matches a parallel search kept depends on thread timing; walking in path order
        // makes the cut the first maxMatches in the order shown, and stops as early. One thread
        // can take much longer than all of them: out of time, the first cut is still an answer.
        const sorted = await run(rg("path"), false);
        if (sorted !== "timed out") found = sorted;
      }
      const { matches, truncated, hiddenSkipped } = found;
      if (matches.length > maxMatches) matches.length = maxMatches;
      if (truncated) {
        const last = matches[matches.length - 1];
        if (last !== undefined) last.truncatedAfter = true;
      }
      return hiddenSkipped === 0 ? matches : Object.assign(matches, { hiddenSkipped });
    },
    toModelOutput(output) {
      const hidden = hiddenNote(output);
      if (output.length === 0) {
        return {
          output: `No matches.${hidden === undefined ? "" : ` ${hidden}`} (Files left out by .gitignore or .ignore are searched with includeIgnored: true; binary files and .git never are.)`,
          error: false,
        };
      }
      const lines: string[] = [];
      let shownFor: string | undefined;
      let shown = "";
      for (const match of output) {
        // Consecutive matches share one path string; quote it once per file.
        if (match.path !== shownFor) {
          shownFor = match.path;
          shown = displayPath(match.path, { alsoQuote: ":" });
        }
        lines.push(`${shown}:${match.line}:${match.snippet}`);
      }
      if (output[output.length - 1]?.truncatedAfter) {
        lines.push(
          `[results capped at ${output.length} matches; narrow the pattern, glob or path, or raise maxMatches]`,
        );
      }
      if (hidden !== undefined) lines.push(hidden);
      return { output: lines.join("\n"), error: false };
    },
  });
}

/** The line on the hidden files and folders a search skipped; none when it met none. */
function hiddenNote(output: SearchFilesOutput): string | undefined {
  const count = output.hiddenSkipped ?? 0;
  if (count === 0) return undefined;
  const [one, them] = count === 1 ? ["path", "it"] : ["paths", "them"];
  return `[${count.toLocaleString("en-US")} hidden ${one} skipped (--hide-read): the sandbox's read policy keeps ${them} from commands and file tools; if the task needs ${them}, ask the user to give ${them} back with --allow-read <path> (allowReads)]`;
}

/** The parts of a path glob grep matches; refuses one it cannot, such as `*\/test/*.ts`. */
function grepGlob(glob: string): PathGlob | undefined {
  const grep = "grep (ripgrep is not in the sandbox)";
  const parts = splitPathGlob(glob, "search_files", grep);
  if (parts !== undefined && !parts.anyDepth) {
    throw new ToolError(
      "INVALID_INPUT",
      `search_files cannot match the glob ${JSON.stringify(glob)} with ${grep}, which searches every folder below: use \`${parts.folder === "" ? "" : `${parts.folder}/`}**/${parts.name}\`, or path ${JSON.stringify(parts.folder || ".")} with the name glob ${JSON.stringify(parts.name)}.`,
    );
  }
  return parts;
}

/** The grep argv of a search: `glob` a name glob, or a path glob with a literal folder part. */
function grepArgv(pattern: string, glob: string | undefined, includeIgnored: boolean): string[] {
  const parts = glob === undefined ? undefined : grepGlob(glob);
  const name = parts === undefined ? glob : parts.name;
  return [
    "grep",
    "-rnHIZE",
    "--color=never",
    // grep includes a file no option matches unless the first such option is --include.
    ...(name === undefined ? [] : [`--include=${name}`]),
    "--exclude=.git",
    "--exclude-dir=.git",
    ...(includeIgnored ? [] : ["--exclude-dir=node_modules"]),
    `--regexp=${pattern}`,
    "--",
    parts === undefined || parts.folder === "" ? "." : `./${parts.folder}`,
  ];
}
