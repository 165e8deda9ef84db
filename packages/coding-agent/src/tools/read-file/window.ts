import { Buffer } from "node:buffer";
import { ToolError } from "@pleach/core";
import { splitLinesKeepingEnds } from "../shared/line-numbers.js";
import type { ReadFileOutput } from "./schema.js";

/** The window asked for and the budgets of {@link readLines}. */
interface ReadLinesOptions {
  path: string;
  offset: number | undefined;
  limit: number | undefined;
  maxLines: number;
  maxChars: number;
  maxLineChars: number;
}

/**
 * Take the window of lines asked for, within the line, character and line-length budgets, in one
 * pass of `indexOf` over the text: lines before the window and after it are only counted, and the
 * window is one slice of the text unless a line in it is cut.
 */
export function readLines(
  text: string,
  { path, offset = 1, limit, maxLines, maxChars, maxLineChars }: ReadLinesOptions,
): ReadFileOutput {
  // Without a limit the caller wants the rest of the file: stopping early is a truncation.
  const wanted = limit ?? Number.POSITIVE_INFINITY;
  const lineBudget = Math.min(wanted, maxLines);
  if (offset === 1 && text.length <= maxChars) {
    const whole = wholeTextWithinBudgets(text, lineBudget, maxLineChars);
    if (whole !== undefined) {
      return {
        content: text,
        bytes: Buffer.byteLength(text, "utf8"),
        encoding: "utf8",
        totalLines: whole,
        startLine: 1,
        endLine: whole,
        truncated: false,
      };
    }
  }
  // Walk to the start of line `offset`.
  let start = 0;
  let skipped = 0;
  while (skipped < offset - 1) {
    const newline = text.indexOf("\n", start);
    if (newline === -1) break;
    start = newline + 1;
    skipped += 1;
  }
  if (skipped < offset - 1) {
    throw offsetPastEnd(path, offset, skipped + (start < text.length ? 1 : 0));
  }
  // The window: whole lines from `start`. Lines that fit are not copied one by one; the content
  // is a slice of the text, with `pieces` holding what comes before each cut line.
  const pieces: string[] = [];
  let copiedUpTo = start;
  let characters = 0;
  let returned = 0;
  let linesCut = 0;
  let position = start;
  while (position < text.length && returned < lineBudget) {
    const newline = text.indexOf("\n", position);
    const end = newline === -1 ? text.length : newline + 1;
    let bodyEnd = end;
    if (newline !== -1) {
      bodyEnd = newline;
      // The body excludes the terminator, `\r\n` included.
      if (newline > position && text.charCodeAt(newline - 1) === 13) bodyEnd -= 1;
    }
    let length = end - position;
    let cut: string | undefined;
    if (bodyEnd - position > maxLineChars) {
      const body = text.slice(position, bodyEnd);
      const kept = body.slice(0, keepWholeCharacters(body, maxLineChars));
      cut = `${kept} [... ${(body.length - kept.length).toLocaleString("en-US")} more characters of this line cut]${text.slice(bodyEnd, end)}`;
      length = cut.length;
    }
    if (returned > 0 && characters + length > maxChars) break;
    if (cut !== undefined) {
      pieces.push(text.slice(copiedUpTo, position), cut);
      copiedUpTo = end;
      linesCut += 1;
    }
    characters += length;
    returned += 1;
    position = end;
  }
  let content = text.slice(copiedUpTo, position);
  if (pieces.length > 0) {
    pieces.push(content);
    content = pieces.join("");
  }
  const endLine = offset + returned - 1;
  const totalLines = endLine + countLines(text, position);
  if (offset > Math.max(totalLines, 1)) throw offsetPastEnd(path, offset, totalLines);
  const output: ReadFileOutput = {
    content,
    bytes: Buffer.byteLength(content, "utf8"),
    encoding: "utf8",
    totalLines,
    startLine: offset,
    endLine,
    truncated: (endLine < totalLines && returned < wanted) || linesCut > 0,
  };
  if (endLine < totalLines) output.nextOffset = endLine + 1;
  if (linesCut > 0) output.linesCut = linesCut;
  return output;
}

function offsetPastEnd(path: string, offset: number, totalLines: number): ToolError {
  return new ToolError(
    "INVALID_INPUT",
    `offset ${offset} is past the end of ${path}, which has ${totalLines} line${totalLines === 1 ? "" : "s"}. Use an offset from 1 to ${Math.max(totalLines, 1)}.`,
    { details: { offset, totalLines } },
  );
}

/**
 * Lines in `text` from index `from` (a line start) on, as {@link splitLinesKeepingEnds} counts
 * them: a final unterminated line counts.
 */
function countLines(text: string, from: number): number {
  if (from >= text.length) return 0;
  let lines = 0;
  for (let index = text.indexOf("\n", from); index !== -1; index = text.indexOf("\n", index + 1)) {
    lines += 1;
  }
  return text.charCodeAt(text.length - 1) === 10 ? lines : lines + 1;
}

/**
 * The line count of `text` when all of it fits the line budgets (so it can be returned as it is,
 * with no splitting), or `undefined` when it does not; the caller checked the character budget.
 * One pass of `indexOf`, no allocation.
 */
function wholeTextWithinBudgets(
  text: string,
  maxLines: number,
  maxLineChars: number,
): number | undefined {
  // No line can be longer than the text: then only the lines need counting.
  if (text.length <= maxLineChars) {
    const lines = countLines(text, 0);
    return lines <= maxLines ? lines : undefined;
  }
  let lines = 0;
  let start = 0;
  while (start < text.length) {
    const newline = text.indexOf("\n", start);
    const end = newline === -1 ? text.length : newline + 1;
    if (end - start > maxLineChars) {
      // The body excludes the terminator, `\r\n` included, as the line cut does.
      const bodyLength =
        newline === -1
          ? end - start
          : newline - start - (newline > start && text.charCodeAt(newline - 1) === 13 ? 1 : 0);
      if (bodyLength > maxLineChars) return undefined;
    }
    lines += 1;
    if (lines > maxLines) return undefined;
    start = end;
  }
  return lines;
}

/** Lower a cut position by one when it would split a surrogate pair. */
function keepWholeCharacters(text: string, length: number): number {
  const code = text.charCodeAt(length - 1);
  return code >= 0xd800 && code <= 0xdbff ? length - 1 : length;
}
