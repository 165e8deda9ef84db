import type { MatchBlocks } from "./match-blocks.js";
import { afterDigits, countNewlines, reportedPath } from "./output-text.js";
import { searchMatch } from "./search-match.js";

/** Options of {@link parseHeadingOutput}. */
export interface HeadingOutputOptions {
  /** The searched folder, workspace-relative with a trailing `/` (or `""`), put before each path. */
  prefix: string;
  maxSnippetChars: number;
}

/** Whether the line at `text[start, end)` holds a NUL: a path, not a match or a warning. */
function isPathLine(text: string, start: number, end: number): boolean {
  const nul = text.indexOf("\0", start);
  return nul !== -1 && nul < end;
}

/**
 * Parses ripgrep's `--heading --null` output into `blocks`: for each file, its path and a NUL, then
 * its `line:content\n` lines, then a blank line before the next file. Every match is kept. Returns
 * how many newlines the output holds, those inside file names too, as `head` counts them.
 */
export function parseHeadingOutput(
  stdout: string,
  blocks: MatchBlocks,
  { prefix, maxSnippetChars }: HeadingOutputOptions,
): number {
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
        const line = Number(stdout.slice(start, cursor));
        blocks.add(searchMatch(path, line, stdout, cursor + 1, end, maxSnippetChars));
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
