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
        "Only search files whose name matches this glob, e.g. `*.ts` or `*.{js,mjs}`. Name globs work everywhere; path globs such as `src/**/*.ts` only when ripgrep runs (use `path` to pick a folder instead).",
      ),
    path: z
      .string()
      .optional()
      .describe(
        'The folder to search in, relative to the workspace root (default: the whole workspace, "."). To search one file, give its folder here and its name as `glob`.',
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

/** One matching line. */
export const searchMatchSchema = z.object({
  path: z
    .string()
    .describe("The file, relative to the workspace root (e.g. `src/index.ts`, never `./...`)."),
  line: z.number().int().min(1).describe("The 1-based line number of the match."),
  snippet: z
    .string()
    .describe("The matching line, without its line ending; a long line is cut with a marker."),
  snippetTruncated: z
    .literal(true)
    .optional()
    .describe("Present when the line was longer than the snippet limit and was cut."),
  truncatedAfter: z
    .literal(true)
    .optional()
    .describe(
      "Present on the last match only, when more matches exist than `maxMatches`: the list was cut after it.",
    ),
});

/**
 * The output of `search_files`: the matching lines, sorted by path and line (seed 000's shape).
 * Compiled (`z.compile`): `defineTool` validates every output, and the compiled check of a long
 * list is about ten times faster than zod's interpreter, with the same result and the same issues.
 */
export const searchFilesOutputSchema = z.compile(z.array(searchMatchSchema));

/** What `search_files` accepts. */
export type SearchFilesInput = z.input<typeof searchFilesInputSchema>;
/** What `search_files` returns. */
export type SearchFilesOutput = z.output<typeof searchFilesOutputSchema>;
/** One entry of {@link SearchFilesOutput}. */
export type SearchMatch = z.output<typeof searchMatchSchema>;

/** Which program searches. */
export type SearchBackend = "auto" | "rg" | "grep";

/** Options of {@link createSearchFilesTool}. */
export interface SearchFilesToolOptions {
  /**
   * `"auto"` probes `command -v rg` in the sandbox on each call and uses ripgrep when it is there,
   * `grep -rn` otherwise (seed 000); `"rg"` or `"grep"` forces one.
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
/** The first line of stderr when the `auto` probe fell back to grep. */
const GREP_RAN = "pleach-search-backend grep";

/**
 * `search_files` (seed 000): search file contents for a regular expression with ripgrep, or
 * `grep -rn` where ripgrep is missing. Both print the canonical `path:line:content` records (the
 * path NUL-terminated, so any file name parses), capped upstream with `| head -n`.
 *
 * What is searched: ripgrep skips binary files and, inside a git repository, files ignored by
 * `.gitignore` (so `node_modules` usually), and searches hidden files; grep has no ignore rules,
 * so it skips binary files, `node_modules` and hidden `.git` only. `.git` is never searched.
 *
 * Order and cuts: matches come sorted by path (folder by folder, as ripgrep's `--sort path` walks:
 * `a/b.ts` before `a.ts`) and line. ripgrep searches on all cores, so the order in which it finds
 * files, and which matches a `head` cut keeps, change from run to run; a search that fits in
 * maxMatches is complete, so sorting it is enough. A search that was cut runs again with
 * `--sort path` (one thread, stopping once maxMatches + 1 lines are out), so a cut result is always
 * the first maxMatches matches in path order. grep walks in one thread: its cut keeps the first
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
  const lineBytes = Math.max(4_096, maxSnippetChars * 4);
  return defineTool({
    name: "search_files",
    description: [
      "Search the contents of workspace files for a regular expression and get back matching lines as `path:line:content`.",
      `Returns at most maxMatches matches (default ${DEFAULT_MAX_MATCHES}), sorted by path and line (with ripgrep, a cut list holds the first ones in that order); lines longer than ${maxSnippetChars} characters are cut.`,
      "Uses ripgrep when the sandbox has it (files ignored by .gitignore, such as node_modules, are skipped) and grep otherwise (node_modules skipped).",
      "Binary files and .git are never searched. Narrow a search with `path` (a folder) and `glob` (file names such as `*.ts`).",
      "An invalid regular expression fails with the engine's message: fix or escape the pattern and search again. No matches returns an empty list.",
    ].join(" "),
    inputSchema: searchFilesInputSchema,
    outputSchema: searchFilesOutputSchema,
    annotations: { title: "Search files", readOnlyHint: true, idempotentHint: true },
    async execute(
      { pattern, glob, path = "", maxMatches = DEFAULT_MAX_MATCHES },
      { abortSignal },
    ): Promise<SearchFilesOutput> {
      const folder = workspaceRelativePath(path, { field: "path" });
      if (isInsideGitDir(folder)) {
        throw new ToolError(
          "INVALID_INPUT",
          `search_files does not search inside .git (path ${JSON.stringify(path)}). Search the working tree, and use git tools for history.`,
        );
      }
      const rg = (order: "any" | "path") =>
        reportExitStatus(
          shellJoin([
            "rg",
            "--no-config",
            "--null",
            "--line-number",
            "--with-filename",
            "--no-heading",
            "--color=never",
            "--hidden",
            "--glob=!.git",
            `--max-columns=${lineBytes}`,
            "--max-columns-preview",
            ...(order === "path" ? ["--sort=path"] : []),
            ...(glob === undefined ? [] : [`--glob=${glob}`]),
            `--regexp=${pattern}`,
            "--",
            ".",
          ]),
        );
      const grep = shellJoin([
        "grep",
        "-rnHIZE",
        "--color=never",
        // grep includes a file no option matches unless the first such option is --include.
        ...(glob === undefined ? [] : [`--include=${glob}`]),
        "--exclude=.git",
        "--exclude-dir=.git",
        "--exclude-dir=node_modules",
        `--regexp=${pattern}`,
        "--",
        ".",
      ]);
      // grep cannot bound its line length itself; `cut` does (NUL bytes pass through it).
      const grepPipeline = `${reportExitStatus(grep)} | cut -b 1-${PATH_BYTES + lineBytes}`;
      const search =
        searchBackend === "rg"
          ? rg("any")
          : searchBackend === "grep"
            ? grepPipeline
            : `if command -v rg >/dev/null 2>&1; then ${rg("any")}; else printf '%s\\n' '${GREP_RAN}' >&2; ${grepPipeline}; fi`;
      const started = performance.now();
      const run = (command: string) =>
        runSearch(client, command, {
          path,
          folder,
          timeoutMs: Math.max(1, Math.round(timeoutMs - (performance.now() - started))),
          abortSignal,
          maxMatches,
          maxSnippetChars,
          maxOutputBytes: Math.min(
            (maxMatches + 1) * (PATH_BYTES + lineBytes + 64) + 65_536,
            MAX_OUTPUT_BYTES,
          ),
        });
      let found = await run(search);
      if (found === "timed out") {
        throw new ToolError(
          "TIMEOUT",
          `search_files ran past ${timeoutMs} ms and was stopped. Narrow the search with path or glob.`,
        );
      }
      const ripgrepRan = searchBackend === "rg" || (searchBackend === "auto" && !found.grepRan);
      if (found.truncated && ripgrepRan) {
        // Which matches a parallel search kept depends on thread timing; walking in path order
        // makes the cut the first maxMatches in the order shown, and stops as early. One thread
        // can take much longer than all of them: out of time, the first cut is still an answer.
        const sorted = await run(rg("path"));
        if (sorted !== "timed out") found = sorted;
      }
      const { matches } = found;
      if (found.truncated) {
        const last = matches[matches.length - 1];
        if (last !== undefined) last.truncatedAfter = true;
      }
      return matches;
    },
    toModelOutput(output) {
      if (output.length === 0) {
        return {
          output:
            "No matches. (.gitignore'd files under ripgrep, node_modules under grep, binary files and .git are not searched.)",
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
      return { output: lines.join("\n"), error: false };
    },
  });
}

/** Options of {@link runSearch}. */
interface RunSearchOptions {
  /** The `path` input as given, for messages. */
  path: string;
  /** `path` normalized: the folder to run in, and the prefix of every reported path. */
  folder: string;
  /** What is left of the call's time limit. */
  timeoutMs: number;
  abortSignal: AbortSignal | undefined;
  maxMatches: number;
  maxSnippetChars: number;
  maxOutputBytes: number;
}

/** What one run of the search pipeline found. */
interface SearchRun {
  /** At most maxMatches matches, sorted by path and line. */
  matches: SearchMatch[];
  /** The pipeline's `head` cut the output: more matches exist. */
  truncated: boolean;
  /** The `auto` probe found no ripgrep, so grep searched (only `auto` says so). */
  grepRan: boolean;
}

/**
 * Run one search pipeline (`... | head -n maxMatches+1`) and parse what it printed; `"timed out"`
 * when it ran out of time.
 */
async function runSearch(
  client: SandboxClient,
  search: string,
  {
    path,
    folder,
    timeoutMs,
    abortSignal,
    maxMatches,
    maxSnippetChars,
    maxOutputBytes,
  }: RunSearchOptions,
): Promise<SearchRun | "timed out"> {
  // One line more than asked for tells "exactly maxMatches" from "more than maxMatches".
  const command = `${GIT_DIR_GUARD}${search} | head -n ${maxMatches + 1}`;
  let result: Awaited<ReturnType<SandboxClient["exec"]>>;
  try {
    result = await client.exec(command, { cwd: folder, timeoutMs, abortSignal, maxOutputBytes });
  } catch (error) {
    if (isToolError(error) && error.code === "NOT_A_DIRECTORY") {
      throw new ToolError(
        "NOT_A_DIRECTORY",
        `path ${JSON.stringify(path)} is a file, not a folder. To search one file, pass its folder as path and its name as glob.`,
      );
    }
    throw error;
  }
  if (result.timedOut) return "timed out";
  const taken = takeExitStatus(result.stderr);
  const { status } = taken;
  const grepRan = taken.stderr.startsWith(GREP_RAN);
  const stderr = grepRan ? taken.stderr.slice(GREP_RAN.length).trim() : taken.stderr;
  if (status === undefined) {
    if (result.exitCode === GIT_DIR_GUARD_STATUS) {
      throw new ToolError(
        "INVALID_INPUT",
        `search_files does not search inside .git: ${JSON.stringify(path)} leads into a .git folder. Search the working tree instead.`,
      );
    }
    throw new ToolError(
      "COMMAND_FAILED",
      `search_files could not run its search (exit ${result.exitCode}): ${stderr || "no message"}`,
    );
  }
  if (result.truncated) {
    throw new ToolError(
      "TOO_LARGE",
      "search_files got more output than it can hold. Lower maxMatches or narrow the search with path or glob.",
    );
  }
  const { matches, truncated } = parseSearchOutput(result.stdout, {
    prefix: folder,
    maxMatches,
    maxSnippetChars,
  });
  // 0: matches; 1: none; 2: an error (a bad regex, an unreadable file). Matches found beside
  // an unreadable file are still worth returning.
  if (matches.length === 0 && status !== 0 && status !== 1) {
    throw new ToolError(
      status === 2 ? "INVALID_INPUT" : "COMMAND_FAILED",
      `search_files failed (exit ${status}): ${stderr || "no message"}${status === 2 ? "\nIf the pattern is at fault, fix its syntax or escape its metacharacters (\\( \\[ \\. \\$) and search again." : ""}`,
      { details: { exitCode: status, stderr } },
    );
  }
  return { matches, truncated, grepRan };
}

/** Options of {@link parseSearchOutput}. */
interface ParseSearchOptions {
  /** The searched folder, workspace-relative, put before each `./`-relative path. */
  prefix: string;
  maxMatches: number;
  maxSnippetChars: number;
}

/**
 * Parse `path\0line:content\n` records (ripgrep `--null`, grep `-Z`) in one pass over the text.
 * Scanning for the NUL first keeps colons and even newlines inside file names from confusing the
 * parse. Each program prints a file's matches as one block; blocks out of path order (a parallel
 * ripgrep, grep's directory order) are put in order whole, a few comparisons per file rather than
 * per match.
 */
function parseSearchOutput(
  stdout: string,
  { prefix, maxMatches, maxSnippetChars }: ParseSearchOptions,
): { matches: SearchMatch[]; truncated: boolean } {
  const matches: SearchMatch[] = [];
  /** Where each file's block starts in `matches`. */
  const blockStarts: number[] = [];
  const pathPrefix = prefix === "" ? "" : `${prefix}/`;
  let inOrder = true;
  // The last record's path as printed, and as reported: a file's matches share one string.
  let printedPath = "";
  let printedPathNewlines = 0;
  let path = "";
  let newlines = 0;
  let position = 0;
  while (position < stdout.length && matches.length < maxMatches) {
    const nul = stdout.indexOf("\0", position);
    if (nul === -1) break;
    let end = stdout.indexOf("\n", nul + 1);
    if (end === -1) end = stdout.length;
    const recordStart = position;
    position = end + 1;
    let cursor = nul + 1;
    let line = 0;
    let code = stdout.charCodeAt(cursor);
    while (code >= 0x30 && code <= 0x39) {
      line = line * 10 + (code - 0x30);
      cursor += 1;
      code = stdout.charCodeAt(cursor);
    }
    if (code !== 0x3a /* : */ || cursor === nul + 1) {
      newlines += 1 + countNewlines(stdout.slice(recordStart, nul));
      continue;
    }
    // A slice and a native comparison are cheaper than `startsWith` at an offset.
    const found = stdout.slice(recordStart, nul);
    if (found !== printedPath || matches.length === 0) {
      printedPath = found;
      printedPathNewlines = countNewlines(printedPath);
      const next = pathPrefix + (printedPath.startsWith("./") ? printedPath.slice(2) : printedPath);
      if (matches.length > 0 && compareTreePaths(path, next) > 0) inOrder = false;
      path = next;
      blockStarts.push(matches.length);
    }
    newlines += 1 + printedPathNewlines;
    let contentEnd = end;
    if (stdout.charCodeAt(end - 1) === 0x0d /* \r */ && end - 1 > cursor) contentEnd = end - 1;
    if (contentEnd - cursor - 1 > maxSnippetChars) {
      let cut = cursor + 1 + maxSnippetChars;
      // Never split a surrogate pair.
      const last = stdout.charCodeAt(cut - 1);
      if (last >= 0xd800 && last <= 0xdbff) cut -= 1;
      matches.push({
        path,
        line,
        snippet: `${stdout.slice(cursor + 1, cut)} [... line cut at ${maxSnippetChars} characters]`,
        snippetTruncated: true,
      });
    } else {
      matches.push({ path, line, snippet: stdout.slice(cursor + 1, contentEnd) });
    }
  }
  // `head` counts newlines, and a newline inside a file name counts too: output left unread, or
  // maxMatches + 1 newlines read, mean the search may have been cut.
  const truncated = position < stdout.length || newlines > maxMatches;
  return { matches: inOrder ? matches : sortBlocks(matches, blockStarts), truncated };
}

/** Reorder whole blocks of one file's matches by path (a stable sort: lines stay in order). */
function sortBlocks(matches: SearchMatch[], blockStarts: number[]): SearchMatch[] {
  const paths = blockStarts.map((start) => matches[start]?.path ?? "");
  const order = Array.from(blockStarts, (_start, index) => index);
  order.sort((left, right) => compareTreePaths(paths[left] ?? "", paths[right] ?? ""));
  const sorted = new Array<SearchMatch>(matches.length);
  let filled = 0;
  for (const block of order) {
    const end = blockStarts[block + 1] ?? matches.length;
    for (let index = blockStarts[block] ?? 0; index < end; index++) {
      sorted[filled++] = matches[index] as SearchMatch;
    }
  }
  return sorted;
}

function countNewlines(text: string): number {
  let count = 0;
  for (let index = text.indexOf("\n"); index !== -1; index = text.indexOf("\n", index + 1)) {
    count += 1;
  }
  return count;
}
