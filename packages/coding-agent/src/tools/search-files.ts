import { defineTool, isToolError, type PluginToolDefinition, ToolError } from "@pleach/core";
import { z } from "zod";
import type { SandboxClient } from "../sandbox/index.js";
import { displayPath } from "./control-characters.js";
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

/** The output of `search_files`: the matching lines, sorted by path and line (seed 000's shape). */
export const searchFilesOutputSchema = z.array(searchMatchSchema);

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
 * `search_files` (seed 000): search file contents for a regular expression with ripgrep, or
 * `grep -rn` where ripgrep is missing. Both print the canonical `path:line:content` records (the
 * path NUL-terminated, so any file name parses), capped upstream with `| head -n`.
 *
 * What is searched: ripgrep skips binary files and, inside a git repository, files ignored by
 * `.gitignore` (so `node_modules` usually), and searches hidden files; grep has no ignore rules,
 * so it skips binary files, `node_modules` and hidden `.git` only. `.git` is never searched.
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
      `Returns at most maxMatches matches (default ${DEFAULT_MAX_MATCHES}), sorted by path and line; lines longer than ${maxSnippetChars} characters are cut.`,
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
      const rg = shellJoin([
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
        ...(glob === undefined ? [] : [`--glob=${glob}`]),
        `--regexp=${pattern}`,
        "--",
        ".",
      ]);
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
          ? reportExitStatus(rg)
          : searchBackend === "grep"
            ? grepPipeline
            : `if command -v rg >/dev/null 2>&1; then ${reportExitStatus(rg)}; else ${grepPipeline}; fi`;
      // One line more than asked for tells "exactly maxMatches" from "more than maxMatches".
      const command = `${GIT_DIR_GUARD}${search} | head -n ${maxMatches + 1}`;
      let result: Awaited<ReturnType<SandboxClient["exec"]>>;
      try {
        result = await client.exec(command, {
          cwd: folder,
          timeoutMs,
          abortSignal,
          maxOutputBytes: Math.min(
            (maxMatches + 1) * (PATH_BYTES + lineBytes + 64) + 65_536,
            MAX_OUTPUT_BYTES,
          ),
        });
      } catch (error) {
        if (isToolError(error) && error.code === "NOT_A_DIRECTORY") {
          throw new ToolError(
            "NOT_A_DIRECTORY",
            `path ${JSON.stringify(path)} is a file, not a folder. To search one file, pass its folder as path and its name as glob.`,
          );
        }
        throw error;
      }
      if (result.timedOut) {
        throw new ToolError(
          "TIMEOUT",
          `search_files ran past ${timeoutMs} ms and was stopped. Narrow the search with path or glob.`,
        );
      }
      const { status, stderr } = takeExitStatus(result.stderr);
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
      const lines = output.map(
        (match) => `${displayPath(match.path, { alsoQuote: ":" })}:${match.line}:${match.snippet}`,
      );
      if (output[output.length - 1]?.truncatedAfter) {
        lines.push(
          `[results capped at ${output.length} matches; narrow the pattern, glob or path, or raise maxMatches]`,
        );
      }
      return { output: lines.join("\n"), error: false };
    },
  });
}

/** Options of {@link parseSearchOutput}. */
interface ParseSearchOptions {
  /** The searched folder, workspace-relative, put before each `./`-relative path. */
  prefix: string;
  maxMatches: number;
  maxSnippetChars: number;
}

/**
 * Parse `path\0line:content\n` records (ripgrep `--null`, grep `-Z`). Scanning for the NUL first
 * keeps colons and even newlines inside file names from confusing the parse.
 */
function parseSearchOutput(
  stdout: string,
  { prefix, maxMatches, maxSnippetChars }: ParseSearchOptions,
): { matches: SearchMatch[]; truncated: boolean } {
  // Both programs print each file's matches as one block; ripgrep orders the blocks by whichever
  // thread finished first. Sorting whole blocks by path (stable, a few comparisons per file rather
  // than per match) gives an order that does not change from call to call.
  const blocks: SearchMatch[][] = [];
  let block: SearchMatch[] = [];
  let records = 0;
  let newlines = 0;
  let rawPath = "";
  let path = "";
  let position = 0;
  while (position < stdout.length && records <= maxMatches) {
    const nul = stdout.indexOf("\0", position);
    if (nul === -1) break;
    const colon = stdout.indexOf(":", nul + 1);
    let end = stdout.indexOf("\n", nul + 1);
    if (end === -1) end = stdout.length;
    if (colon === -1 || colon > end) {
      position = end + 1;
      continue;
    }
    records += 1;
    newlines += 1;
    // Consecutive matches of one file share one path string (fewer strings to build and collect).
    const found = stdout.slice(position, nul);
    if (found !== rawPath || block.length === 0) {
      rawPath = found;
      for (
        let index = rawPath.indexOf("\n");
        index !== -1;
        index = rawPath.indexOf("\n", index + 1)
      ) {
        newlines += 1;
      }
      path = toWorkspacePath(rawPath, prefix);
      if (block.length > 0) blocks.push(block);
      block = [];
    }
    if (records > maxMatches) break;
    let snippet = stdout.slice(colon + 1, end);
    if (snippet.endsWith("\r")) snippet = snippet.slice(0, -1);
    const match: SearchMatch = { path, line: Number(stdout.slice(nul + 1, colon)), snippet };
    if (snippet.length > maxSnippetChars) {
      // Drop a lone high surrogate so the cut never splits a character.
      const kept = snippet.slice(0, maxSnippetChars).replace(/[\uD800-\uDBFF]$/, "");
      match.snippet = `${kept} [... line cut at ${maxSnippetChars} characters]`;
      match.snippetTruncated = true;
    }
    block.push(match);
    position = end + 1;
  }
  if (block.length > 0) blocks.push(block);
  blocks.sort((left, right) => {
    const leftPath = left[0]?.path ?? "";
    const rightPath = right[0]?.path ?? "";
    return leftPath < rightPath ? -1 : leftPath > rightPath ? 1 : 0;
  });
  // `head` counts newlines, and a newline inside a file name counts too: reaching the limit means
  // the search may have been cut even when fewer records came through.
  return { matches: blocks.flat(), truncated: records > maxMatches || newlines > maxMatches };
}

/** `./src/a.ts` found in the folder `lib` → `lib/src/a.ts`. */
function toWorkspacePath(found: string, folder: string): string {
  const relative = found.startsWith("./") ? found.slice(2) : found;
  return folder === "" ? relative : `${folder}/${relative}`;
}
