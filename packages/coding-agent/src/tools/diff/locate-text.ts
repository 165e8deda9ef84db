import { LineTable, locateLines, TOLERANCES, type Tolerance } from "./locate.js";
import { canReindent, type IndentShift, indentShift, reindentLine } from "./reindent.js";

/** Where a piece of text matches whole lines of a file under a tolerance. */
export type TolerantMatch =
  | {
      status: "unique";
      tolerance: Tolerance;
      /** Offsets in the text of the matched region, `end` exclusive. */
      start: number;
      end: number;
      /** 1-based first and last line of the region. */
      startLine: number;
      endLine: number;
      /** `replacement` re-indented and given the file's line endings, ready to put at start..end. */
      replacement: string;
    }
  | { status: "ambiguous"; tolerance: Tolerance; lines: number[] }
  | { status: "none" };

/**
 * Find `old` in `text` when it does not occur exactly: `old` must cover whole lines, which are
 * compared under each tolerance after `exact` in turn (see {@link locateLines}); the first that
 * finds them decides. A unique match comes with `replacement` adapted to the region: the file's
 * line endings, and under `indentation` the indentation change the matched lines show, when they
 * all show the same one (otherwise the match is not offered). Pure: no I/O.
 */
export function locateTolerantly(text: string, old: string, replacement: string): TolerantMatch {
  const rawLines = text.split("\n");
  const lineStarts: number[] = [];
  let offset = 0;
  for (const line of rawLines) {
    lineStarts.push(offset);
    offset += line.length + 1;
  }
  // The element after a final newline is no line.
  if (rawLines.at(-1) === "") rawLines.pop();
  const table = new LineTable(rawLines);
  const endsWithNewline = old.endsWith("\n");
  const needle = (endsWithNewline ? old.slice(0, -1) : old).split("\n");
  const location = locateLines(table, needle, {
    tolerances: TOLERANCES.filter((tolerance) => tolerance !== "exact"),
  });
  if (location.status === "none") return location;
  if (location.status === "ambiguous") {
    return {
      status: "ambiguous",
      tolerance: location.tolerance,
      lines: location.starts.map((start) => start + 1),
    };
  }
  const first = location.start;
  const last = first + needle.length - 1;
  const lastLine = rawLines[last] ?? "";
  const start = lineStarts[first] ?? 0;
  const end = endsWithNewline
    ? (lineStarts[last] ?? 0) + lastLine.length + 1
    : (lineStarts[last] ?? 0) + lastLine.length - (lastLine.endsWith("\r") ? 1 : 0);
  let adapted = replacement;
  if (location.tolerance === "indentation") {
    const shifts = new Map<string, IndentShift>();
    needle.forEach((line, index) => {
      const shift = indentShift(line, rawLines[first + index] ?? "");
      if (shift !== undefined) shifts.set(`${shift.from}\u0000${shift.to}`, shift);
    });
    const [shift] = shifts.values();
    const lines = adapted.split("\n");
    if (
      shifts.size > 1 ||
      (shift !== undefined && !lines.every((line) => canReindent(line, shift)))
    ) {
      return { status: "none" };
    }
    if (shift !== undefined) adapted = lines.map((line) => reindentLine(line, shift)).join("\n");
  }
  let crlf = 0;
  for (const line of rawLines) if (line.endsWith("\r")) crlf += 1;
  adapted =
    crlf * 2 > rawLines.length ? adapted.replace(/\r?\n/g, "\r\n") : adapted.replace(/\r\n/g, "\n");
  return {
    status: "unique",
    tolerance: location.tolerance,
    start,
    end,
    startLine: first + 1,
    endLine: last + 1,
    replacement: adapted,
  };
}
