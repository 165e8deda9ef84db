/**
 * Split `text` into lines that keep their terminators (`\n` or `\r\n`), so joining them gives the
 * text back byte for byte. A final line without a terminator is a line; an empty text has none.
 */
export function splitLinesKeepingEnds(text: string): string[] {
  const lines: string[] = [];
  let start = 0;
  for (let index = text.indexOf("\n"); index !== -1; index = text.indexOf("\n", start)) {
    lines.push(text.slice(start, index + 1));
    start = index + 1;
  }
  if (start < text.length) lines.push(text.slice(start));
  return lines;
}

/** A line without its terminator: no trailing `\n`, nor the `\r` before it. */
export function stripLineEnding(line: string): string {
  if (line.endsWith("\r\n")) return line.slice(0, -2);
  if (line.endsWith("\n")) return line.slice(0, -1);
  return line;
}

/**
 * Where each line of a text starts, to turn character offsets into 1-based line numbers in
 * O(log lines). Lines are counted by `\n`, the way editors and `read_file` count them.
 */
export class LineIndex {
  readonly #starts: number[] = [0];

  constructor(text: string) {
    for (let index = text.indexOf("\n"); index !== -1; index = text.indexOf("\n", index + 1)) {
      this.#starts.push(index + 1);
    }
  }

  /** The 1-based line that holds the character at `offset` (an offset at the very end counts too). */
  lineAt(offset: number): number {
    let low = 0;
    let high = this.#starts.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if ((this.#starts[middle] ?? 0) <= offset) low = middle;
      else high = middle - 1;
    }
    return low + 1;
  }
}

/** Options of {@link formatNumberedLines}. */
export interface FormatNumberedLinesOptions {
  /**
   * Longer lines are cut to this many characters, with `…` after them.
   * @default 200
   */
  maxLineChars?: number;
}

/**
 * Lines with a right-aligned line-number gutter (`  12\tcode`), for showing a region of a file in a
 * message. Line terminators are dropped so a `\r` never garbles the display.
 */
export function formatNumberedLines(
  lines: readonly string[],
  firstLine: number,
  { maxLineChars = 200 }: FormatNumberedLinesOptions = {},
): string {
  const width = String(firstLine + lines.length - 1).length;
  return lines
    .map((line, index) => {
      const bare = stripLineEnding(line);
      const shown = bare.length > maxLineChars ? `${bare.slice(0, maxLineChars)}…` : bare;
      return `${String(firstLine + index).padStart(width)}\t${shown}`;
    })
    .join("\n");
}
