import type { MatchBlocks } from "./match-blocks.js";
import { afterDigits, countNewlines, reportedPath } from "./output-text.js";
import { searchMatch } from "./search-match.js";

/** Options of {@link parseRecordOutput}. */
export interface RecordOutputOptions {
  /** The searched folder, workspace-relative with a trailing `/` (or `""`), put before each path. */
  prefix: string;
  /** Matches past this many are not parsed. */
  maxMatches: number;
  maxSnippetChars: number;
}

/**
 * Parses `path\0line:content\n` records (ripgrep `--null --no-heading`, grep `-Z`) into `blocks`,
 * keeping the first maxMatches. Scanning for the NUL first keeps colons and even newlines inside
 * file names from confusing the parse. Returns whether the output may have been cut: output left
 * unread, or more than maxMatches newlines read (`head` counts newlines, those in names too).
 */
export function parseRecordOutput(
  stdout: string,
  blocks: MatchBlocks,
  { prefix, maxMatches, maxSnippetChars }: RecordOutputOptions,
): boolean {
  // The last record's path as printed, and as reported: a file's matches share one string.
  let printedPath = "";
  let printedPathNewlines = 0;
  let path = "";
  let newlines = 0;
  let position = 0;
  while (position < stdout.length && blocks.count < maxMatches) {
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
    const found = stdout.slice(recordStart, nul);
    if (found !== printedPath || blocks.count === 0) {
      if (blocks.count > 0 && found.startsWith(`${printedPath}: `) && found.includes("\n")) {
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
    const line = Number(stdout.slice(nul + 1, cursor));
    blocks.add(searchMatch(path, line, stdout, cursor + 1, end, maxSnippetChars));
  }
  return position < stdout.length || newlines > maxMatches;
}
