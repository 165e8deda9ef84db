import { isToolError, ToolError } from "@pleach/core";
import type { SandboxClient } from "../../sandbox/index.js";
import { takeExitStatus } from "../shared/piped-exit-status.js";
import { GIT_DIR_GUARD, GIT_DIR_GUARD_STATUS } from "../shared/relative-path.js";
import { parseHeadingOutput } from "./heading-output.js";
import { skipHidden } from "./hidden-skips.js";
import { MatchBlocks } from "./match-blocks.js";
import { parseRecordOutput } from "./record-output.js";
import type { SearchMatch } from "./search-match.js";

/** The first line of stderr when the `auto` probe fell back to grep. */
export const GREP_RAN = "pleach-search-backend grep";

/** Options of {@link runSearch}. */
export interface RunSearchOptions {
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
export interface SearchRun {
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
  /** Hidden files and folders the search met and skipped (see `hidden-skips.ts`). */
  hiddenSkipped: number;
}

/**
 * Run one search pipeline (ending in `| head -n N`) and parse what it printed; `"timed out"` when
 * it ran out of time.
 */
export async function runSearch(
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
  let { status } = taken;
  const grepRan = taken.stderr.startsWith(GREP_RAN);
  let stderr = grepRan ? taken.stderr.slice(GREP_RAN.length).trim() : taken.stderr;
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
  let hiddenSkipped = 0;
  if (status === 2) {
    // 2 is also the status of a search that met only hidden files besides its matches.
    const skips = await skipHidden(client, stderr, { prefix, abortSignal });
    hiddenSkipped = skips.hidden;
    stderr = skips.stderr;
    if (hiddenSkipped > 0 && stderr === "") status = 1;
  }
  const blocks = new MatchBlocks();
  let run: SearchRun;
  if (headingLines !== undefined && !grepRan) {
    const newlines = parseHeadingOutput(result.stdout, blocks, { prefix, maxSnippetChars });
    // As many newlines as `head` lets through: the output may have been cut there.
    const cut = newlines >= headingLines;
    const matches = blocks.sorted();
    const truncated = cut || matches.length > maxMatches;
    run = { matches, truncated, cut, heading: true, hiddenSkipped };
  } else {
    const truncated = parseRecordOutput(result.stdout, blocks, {
      prefix,
      maxMatches,
      maxSnippetChars,
    });
    run = { matches: blocks.sorted(), truncated, cut: truncated, heading: false, hiddenSkipped };
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
