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
 * Compiled (`z.compile`): parsing a long list is about ten times faster than with zod's
 * interpreter, with the same result and the same issues. (The tool's own outputs are checked
 * without a copy: see `outputValidation`.)
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
/**
 * The last stage of a search pipeline that may print a lot: pass the output on in blocks of
 * 256 KiB. ripgrep writes each file's matches as it finishes that file, a few KiB at a time, and a
 * reader woken for every write takes CPU from the search (on two cores, 3–6% of a search printing
 * 5 MB). `iflag=fullblock` is GNU's: a `dd` without it fails before reading, and `cat` passes the
 * output on instead.
 */
const COALESCE = " | { dd bs=256k iflag=fullblock status=none 2>/dev/null || cat; }";
/** The first line of stderr when the `auto` probe fell back to grep. */
const GREP_RAN = "pleach-search-backend grep";

/**
 * `search_files` (seed 000): search file contents for a regular expression with ripgrep, or
 * `grep -rn` where ripgrep is missing, capped upstream with `| head -n` (a large output is then
 * passed on in blocks: see {@link COALESCE}). Both print the canonical
 * `path:line:content` records (the path NUL-terminated, so any file name parses), except that
 * ripgrep's first search prints each file's path once, above that file's `line:content` lines
 * (`--heading`), which leaves less to print, pipe, decode and parse when files have many matches.
 *
 * What is searched: ripgrep skips binary files and, inside a git repository, files ignored by
 * `.gitignore` (so `node_modules` usually), and searches hidden files; grep has no ignore rules,
 * so it skips binary files, `node_modules` and hidden `.git` only. `.git` is never searched.
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
      "Uses ripgrep when the sandbox has it (files ignored by .gitignore, such as node_modules, are skipped) and grep otherwise (node_modules skipped).",
      "Binary files and .git are never searched. Narrow a search with `path` (a folder) and `glob` (file names such as `*.ts`).",
      "An invalid regular expression fails with the engine's message: fix or escape the pattern and search again. No matches returns an empty list.",
    ].join(" "),
    inputSchema: searchFilesInputSchema,
    outputSchema: searchFilesOutputSchema,
    annotations: { title: "Search files", readOnlyHint: true, idempotentHint: true },
    // Tens of thousands of entries, built here in the schema's exact shape: validate each one, but
    // return them as built rather than a copy.
    outputValidation: "check",
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
      const grepPipeline = `${reportExitStatus(grep)} | cut -b 1-${PATH_BYTES + lineBytes} | head -n ${recordLines}${coalesce}`;
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
      const { matches, truncated } = found;
      if (matches.length > maxMatches) matches.length = maxMatches;
      if (truncated) {
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
  /**
   * Set when the command runs ripgrep with `--heading` (unless `auto` finds no ripgrep): the
   * lines its `head` lets through.
   */
  headingLines: number | undefined;
  maxOutputBytes: number;
}

/** What one run of the search pipeline found. */
interface SearchRun {
  /**
   * The matches printed, sorted by path and line: of `path\0line:content` records (grep, or
   * ripgrep in path order), the first maxMatches; of ripgrep's `--heading` output, every one
   * (maybe more than maxMatches).
   */
  matches: SearchMatch[];
  /** More than maxMatches matches exist (or may: see `cut`). */
  truncated: boolean;
  /** The pipeline's `head` may have cut the output, so matches may be missing. */
  cut: boolean;
  /** ripgrep printed `--heading` output. */
  heading: boolean;
}

/**
 * Run one search pipeline (ending in `| head -n N`) and parse what it printed; `"timed out"` when
 * it ran out of time.
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
    headingLines,
    maxOutputBytes,
  }: RunSearchOptions,
): Promise<SearchRun | "timed out"> {
  const command = `${GIT_DIR_GUARD}${search}`;
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
  const prefix = folder === "" ? "" : `${folder}/`;
  // The parsers fill `blocks`; sorting it is left to here, outside their hot loops.
  const blocks = new MatchBlocks();
  let run: SearchRun;
  if (headingLines !== undefined && !grepRan) {
    const newlines = parseHeadingOutput(result.stdout, blocks, { prefix, maxSnippetChars });
    // As many newlines as `head` lets through: the output may have been cut there.
    const cut = newlines >= headingLines;
    const matches = blocks.sorted();
    run = { matches, truncated: cut || matches.length > maxMatches, cut, heading: true };
  } else {
    const truncated = parseRecordOutput(result.stdout, blocks, {
      prefix,
      maxMatches,
      maxSnippetChars,
    });
    run = { matches: blocks.sorted(), truncated, cut: truncated, heading: false };
  }
  // 0: matches; 1: none; 2: an error (a bad regex, an unreadable file). Matches found beside
  // an unreadable file are still worth returning.
  if (run.matches.length === 0 && status !== 0 && status !== 1) {
    throw new ToolError(
      status === 2 ? "INVALID_INPUT" : "COMMAND_FAILED",
      `search_files failed (exit ${status}): ${stderr || "no message"}${status === 2 ? "\nIf the pattern is at fault, fix its syntax or escape its metacharacters (\\( \\[ \\. \\$) and search again." : ""}`,
      { details: { exitCode: status, stderr } },
    );
  }
  return run;
}

/** Options of {@link parseRecordOutput} and {@link parseHeadingOutput}. */
interface ParseOptions {
  /** The searched folder, workspace-relative with a trailing `/` (or `""`), put before each path. */
  prefix: string;
  maxSnippetChars: number;
}

/**
 * Matches of one file after another, as a program printed them (each file's matches together, in
 * line order), to be put in path order a file at a time: a few comparisons per file, not per match.
 *
 * The parsers call in here tens of thousands of times per search, so this class keeps their
 * optimized code stable: no field changes type, and no array is read past its end.
 */
class MatchBlocks {
  readonly matches: SearchMatch[] = emptyObjectArray();
  /** Where each file's block starts in `matches`, and where the last ends (pushed by `sorted`). */
  readonly #bounds: number[] = [];
  /** Each file's path as printed: `./` and the path below the searched folder. */
  readonly #printed: string[] = [];

  /** Start the block of the file printed as `printed`. */
  startFile(printed: string): void {
    this.#bounds.push(this.matches.length);
    this.#printed.push(printed);
  }

  /**
   * The matches in path order (a stable sort of whole blocks: lines stay in order). Each block's
   * key is its path below the searched folder with `/` as U+0000 (paths hold no NUL): compared
   * natively, as UTF-16 code units, keys order as compareTreePaths does, except where UTF-16 and
   * UTF-8 disagree (U+E000 and up against surrogates), where compareTreePaths sorts instead.
   */
  sorted(): SearchMatch[] {
    const { matches } = this;
    const printed = this.#printed;
    const keys = printed.map((path) =>
      (path.startsWith("./") ? path.slice(2) : path).replace(SLASHES, "\0"),
    );
    let inOrder = true;
    for (let block = 1; block < keys.length && inOrder; block++) {
      if ((keys[block] as string) < (keys[block - 1] as string)) inOrder = false;
    }
    // Keys order blocks unless a path has a character where UTF-16 and UTF-8 disagree.
    const plain = !printed.some((path) => SURROGATES_AND_UP.test(path));
    if (inOrder && plain) return matches;
    let order: number[] | undefined;
    if (plain) {
      const blocks = new Map<string, number>();
      for (let block = 0; block < keys.length; block++) blocks.set(keys[block] as string, block);
      // The default sort compares strings natively, about twice as fast as a comparator. (Not
      // when two blocks have one path, which a Map of blocks by path cannot tell apart.)
      if (blocks.size === keys.length) {
        order = keys.sort().map((key) => blocks.get(key) as number);
      }
    }
    if (order === undefined) {
      const paths = this.#bounds.map((start) => (matches[start] as SearchMatch).path);
      order = Array.from(paths, (_path, block) => block);
      order.sort((left, right) => compareTreePaths(paths[left] as string, paths[right] as string));
    }
    const bounds = this.#bounds;
    bounds.push(matches.length);
    const sorted = new Array<SearchMatch>(matches.length);
    let filled = 0;
    for (const block of order) {
      const end = bounds[block + 1] as number;
      for (let index = bounds[block] as number; index < end; index++) {
        sorted[filled++] = matches[index] as SearchMatch;
      }
    }
    bounds.pop();
    return sorted;
  }
}

/**
 * An empty array that already holds objects as far as V8 knows: a fresh `[]` starts as an array of
 * small integers, and code optimized for pushing matches deoptimizes on its first push.
 */
function emptyObjectArray<T>(): T[] {
  const array: unknown[] = [null];
  array.length = 0;
  return array as T[];
}

const SLASHES = /\//g;
/** UTF-16 code units that sort against each other otherwise than UTF-8 does. */
const SURROGATES_AND_UP = /[\uD800-\uFFFF]/;

/**
 * Makes a match, a plain object (its prototype is `Object.prototype`, as a literal's is). Made by
 * `new` rather than as a literal: V8 allocates the objects of a literal that mostly outlive their
 * first garbage collection straight in the old generation ("pretenuring"), which is slower to
 * allocate in and to collect: building 60,000 matches from ripgrep's output took a median 12–13 ms
 * with a literal against about 8 ms this way (garbage collection included).
 */
const PlainMatch = function PlainMatch(
  this: SearchMatch,
  path: string,
  line: number,
  snippet: string,
) {
  this.path = path;
  this.line = line;
  this.snippet = snippet;
} as unknown as new (
  path: string,
  line: number,
  snippet: string,
) => SearchMatch;
PlainMatch.prototype = Object.prototype;

/**
 * A match: `path`, `line`, and the content at `text[start, end)` less a final `\r`, cut at
 * `maxSnippetChars` with a marker.
 */
function match(
  path: string,
  line: number,
  text: string,
  start: number,
  lineEnd: number,
  maxSnippetChars: number,
): SearchMatch {
  const end =
    text.charCodeAt(lineEnd - 1) === 0x0d /* \r */ && lineEnd > start ? lineEnd - 1 : lineEnd;
  if (end - start <= maxSnippetChars) return new PlainMatch(path, line, text.slice(start, end));
  let cut = start + maxSnippetChars;
  // Never split a surrogate pair.
  const last = text.charCodeAt(cut - 1);
  if (last >= 0xd800 && last <= 0xdbff) cut -= 1;
  const found = new PlainMatch(
    path,
    line,
    `${text.slice(start, cut)} [... line cut at ${maxSnippetChars} characters]`,
  );
  found.snippetTruncated = true;
  return found;
}

/** The reported path of a printed one: `./a/b` under the searched folder. */
function reportedPath(prefix: string, printed: string): string {
  return prefix + (printed.startsWith("./") ? printed.slice(2) : printed);
}

/**
 * Parse `path\0line:content\n` records (ripgrep `--null`, grep `-Z`) in one pass over the text,
 * keeping the first maxMatches. Scanning for the NUL first keeps colons and even newlines inside
 * file names from confusing the parse. Each program prints a file's matches as one block; blocks
 * out of path order (grep's directory order) are put in order whole.
 */
function parseRecordOutput(
  stdout: string,
  blocks: MatchBlocks,
  { prefix, maxMatches, maxSnippetChars }: ParseOptions & { maxMatches: number },
): boolean {
  const { matches } = blocks;
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
    const cursor = afterDigits(stdout, nul + 1, end);
    if (cursor === nul + 1 || cursor === end || stdout.charCodeAt(cursor) !== 0x3a /* : */) {
      newlines += 1 + countNewlines(stdout.slice(recordStart, nul));
      continue;
    }
    // A slice and a native comparison are cheaper than `startsWith` at an offset.
    const found = stdout.slice(recordStart, nul);
    if (found !== printedPath || matches.length === 0) {
      if (matches.length > 0 && found.startsWith(`${printedPath}: `) && found.includes("\n")) {
        // ripgrep's `<path>: WARNING: stopped searching binary file after match (...)` line about
        // the file before, not the start of a path: skip that line, and parse on after it.
        position = recordStart + found.indexOf("\n") + 1;
        newlines += 1;
        continue;
      }
      printedPath = found;
      printedPathNewlines = countNewlines(printedPath);
      path = reportedPath(prefix, printedPath);
      blocks.startFile(printedPath);
    }
    newlines += 1 + printedPathNewlines;
    const line = lineNumber(stdout, nul + 1, cursor);
    matches.push(match(path, line, stdout, cursor + 1, end, maxSnippetChars));
  }
  // `head` counts newlines, and a newline inside a file name counts too: output left unread, or
  // maxMatches + 1 newlines read, mean the search may have been cut.
  return position < stdout.length || newlines > maxMatches;
}

/**
 * Parse ripgrep's `--heading --null` output into `blocks`: for each file, its path and a NUL, then
 * its `line:content\n` lines, then a blank line before the next file. Every match is kept. Returns
 * how many newlines the output holds, those inside file names too, as `head` counts them.
 */
function parseHeadingOutput(
  stdout: string,
  blocks: MatchBlocks,
  { prefix, maxSnippetChars }: ParseOptions,
): number {
  const { matches } = blocks;
  const length = stdout.length;
  let newlines = 0;
  let position = 0;
  while (position < length) {
    // A file's block: its path, up to the NUL, whatever it holds.
    const nul = stdout.indexOf("\0", position);
    if (nul === -1) {
      newlines += countNewlines(stdout.slice(position));
      break;
    }
    const printed = stdout.slice(position, nul);
    newlines += countNewlines(printed);
    const path = reportedPath(prefix, printed);
    blocks.startFile(printed);
    // Its lines, up to the blank line that ends it.
    let start = nul + 1;
    while (start < length) {
      let end = stdout.indexOf("\n", start);
      if (end === -1) end = length;
      else newlines += 1;
      if (end === start) {
        start = end + 1;
        break;
      }
      const cursor = afterDigits(stdout, start, end);
      if (cursor > start && cursor < end && stdout.charCodeAt(cursor) === 0x3a /* : */) {
        matches.push(
          match(path, lineNumber(stdout, start, cursor), stdout, cursor + 1, end, maxSnippetChars),
        );
      } else if (isPathLine(stdout, start, end)) {
        // A path and its first match with no blank line before them: the next file's block.
        if (end < length) newlines -= 1;
        break;
      }
      // Anything else (ripgrep's warning that it stopped reading a file it found binary) is no match.
      start = end + 1;
    }
    position = start;
  }
  return newlines;
}

/** Where the run of ASCII digits at `text[start, end)` ends. */
function afterDigits(text: string, start: number, end: number): number {
  let cursor = start;
  while (cursor < end) {
    const code = text.charCodeAt(cursor);
    if (code < 0x30 || code > 0x39) break;
    cursor += 1;
  }
  return cursor;
}

/** The line number written at `text[start, end)` (ASCII digits only). */
function lineNumber(text: string, start: number, end: number): number {
  let line = 0;
  for (let cursor = start; cursor < end; cursor++) {
    line = line * 10 + (text.charCodeAt(cursor) - 0x30);
  }
  return line;
}

/** Whether the line at `text[start, end)` holds a NUL: a path, not a match or a warning. */
function isPathLine(text: string, start: number, end: number): boolean {
  const nul = text.indexOf("\0", start);
  return nul !== -1 && nul < end;
}

function countNewlines(text: string): number {
  let count = 0;
  for (let index = text.indexOf("\n"); index !== -1; index = text.indexOf("\n", index + 1)) {
    count += 1;
  }
  return count;
}
