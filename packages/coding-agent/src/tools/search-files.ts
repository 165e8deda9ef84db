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
/** The first line of stderr when the `auto` probe fell back to grep. */
const GREP_RAN = "pleach-search-backend grep";

/**
 * `search_files` (seed 000): search file contents for a regular expression with ripgrep, or
 * `grep -rn` where ripgrep is missing, capped upstream with `| head -n`. Both print the canonical
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
        )} | head -n ${order === "any" ? headingLines : recordLines}`;
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
      const grepPipeline = `${reportExitStatus(grep)} | cut -b 1-${PATH_BYTES + lineBytes} | head -n ${recordLines}`;
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
  let run: SearchRun;
  if (headingLines !== undefined && !grepRan) {
    const { matches, newlines } = parseHeadingOutput(result.stdout, { prefix, maxSnippetChars });
    // As many newlines as `head` lets through: the output may have been cut there.
    const cut = newlines >= headingLines;
    run = { matches, truncated: cut || matches.length > maxMatches, cut, heading: true };
  } else {
    const parsed = parseRecordOutput(result.stdout, { prefix, maxMatches, maxSnippetChars });
    run = { ...parsed, cut: parsed.truncated, heading: false };
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
 */
class MatchBlocks {
  readonly matches: SearchMatch[] = [];
  /** Where each file's block starts in `matches`. */
  readonly #starts: number[] = [];
  /**
   * Each block's path below the searched folder with `/` as U+0000 (paths hold no NUL): compared
   * natively, as UTF-16 code units, these sort as compareTreePaths does, except where UTF-16 and
   * UTF-8 disagree (U+E000 and up against surrogates). `undefined` once a path has such a
   * character: then compareTreePaths sorts the blocks.
   */
  #keys: string[] | undefined = [];
  #inOrder = true;
  #lastPath = "";
  #lastKey = "";

  /**
   * Start the block of the file at `path` (as reported), printed as `printed` (`./` and the path
   * below the searched folder).
   */
  startFile(path: string, printed: string): void {
    const keys = this.#keys;
    if (keys !== undefined && /[\uD800-\uFFFF]/.test(printed)) this.#keys = undefined;
    if (this.#keys !== undefined && keys !== undefined) {
      const key = (printed.startsWith("./") ? printed.slice(2) : printed).replaceAll("/", "\0");
      if (keys.length > 0 && key < this.#lastKey) this.#inOrder = false;
      keys.push(key);
      this.#lastKey = key;
    } else if (this.#starts.length > 0 && compareTreePaths(this.#lastPath, path) > 0) {
      this.#inOrder = false;
    }
    this.#lastPath = path;
    this.#starts.push(this.matches.length);
  }

  /** The matches in path order (a stable sort of whole blocks: lines stay in order). */
  sorted(): SearchMatch[] {
    const { matches } = this;
    const starts = this.#starts;
    if (this.#inOrder) return matches;
    const order = Array.from(starts, (_start, index) => index);
    const keys = this.#keys;
    if (keys !== undefined) {
      order.sort((left, right) => {
        const leftKey = keys[left] as string;
        const rightKey = keys[right] as string;
        return leftKey < rightKey ? -1 : leftKey > rightKey ? 1 : 0;
      });
    } else {
      const paths = starts.map((start) => matches[start]?.path ?? "");
      order.sort((left, right) => compareTreePaths(paths[left] ?? "", paths[right] ?? ""));
    }
    const sorted = new Array<SearchMatch>(matches.length);
    let filled = 0;
    for (const block of order) {
      const end = starts[block + 1] ?? matches.length;
      for (let index = starts[block] ?? 0; index < end; index++) {
        sorted[filled++] = matches[index] as SearchMatch;
      }
    }
    return sorted;
  }
}

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
  if (end - start <= maxSnippetChars) return { path, line, snippet: text.slice(start, end) };
  let cut = start + maxSnippetChars;
  // Never split a surrogate pair.
  const last = text.charCodeAt(cut - 1);
  if (last >= 0xd800 && last <= 0xdbff) cut -= 1;
  return {
    path,
    line,
    snippet: `${text.slice(start, cut)} [... line cut at ${maxSnippetChars} characters]`,
    snippetTruncated: true,
  };
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
  { prefix, maxMatches, maxSnippetChars }: ParseOptions & { maxMatches: number },
): { matches: SearchMatch[]; truncated: boolean } {
  const blocks = new MatchBlocks();
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
      blocks.startFile(path, printedPath);
    }
    newlines += 1 + printedPathNewlines;
    matches.push(match(path, line, stdout, cursor + 1, end, maxSnippetChars));
  }
  // `head` counts newlines, and a newline inside a file name counts too: output left unread, or
  // maxMatches + 1 newlines read, mean the search may have been cut.
  const truncated = position < stdout.length || newlines > maxMatches;
  return { matches: blocks.sorted(), truncated };
}

/**
 * Parse ripgrep's `--heading --null` output: for each file, its path and a NUL, then its
 * `line:content\n` lines, then a blank line before the next file. Every match is kept, in path
 * order. `newlines` counts every newline, those inside file names too, as `head` does.
 */
function parseHeadingOutput(
  stdout: string,
  { prefix, maxSnippetChars }: ParseOptions,
): { matches: SearchMatch[]; newlines: number } {
  const blocks = new MatchBlocks();
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
    blocks.startFile(path, printed);
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
      let cursor = start;
      let line = 0;
      let code = stdout.charCodeAt(cursor);
      while (code >= 0x30 && code <= 0x39) {
        line = line * 10 + (code - 0x30);
        cursor += 1;
        code = stdout.charCodeAt(cursor);
      }
      if (code === 0x3a /* : */ && cursor > start) {
        matches.push(match(path, line, stdout, cursor + 1, end, maxSnippetChars));
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
  return { matches: blocks.sorted(), newlines };
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
