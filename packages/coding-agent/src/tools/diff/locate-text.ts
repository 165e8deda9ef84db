import { dominantNewline } from "./assemble.js";
import { reindentAdded } from "./indent-shifts.js";
import { LineTable, locateLines, TOLERANCES, type Tolerance } from "./locate.js";

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
 * all show the same one (otherwise the match is not offered), in the file's indentation style
 * (see {@link reindentAdded}). Pure: no I/O.
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
    // `old` is the removed side and `replacement` the added side of a one-hunk diff.
    const lines = [
      ...needle.map((text) => ({ kind: "remove" as const, text, noNewlineAtEnd: false })),
      ...adapted.split("\n").map((text) => ({ kind: "add" as const, text, noNewlineAtEnd: false })),
    ];
    const reindented = reindentAdded(rawLines, lines, first, { uniform: true });
    if (reindented === undefined) return { status: "none" };
    adapted = reindented.join("\n");
  }
  // A replacement that would leave the matched text as it was undoes an edit that changes something.
  const lineList = (value: string) =>
    (endsWithNewline ? value.replace(/\r?\n$/, "") : value).replace(/\r/g, "");
  const matched = rawLines
    .slice(first, last + 1)
    .join("\n")
    .replace(/\r/g, "");
  if (lineList(old) !== lineList(replacement) && matched === lineList(adapted)) {
    return { status: "none" };
  }
  // The matched lines' most common line ending (a file may mix them), else the file's.
  const region = rawLines.slice(first, endsWithNewline ? last + 1 : last);
  const newline = dominantNewline(
    (region.length > 0 ? region : rawLines).map((line) => ({ text: line, newline: true })),
  );
  adapted = adapted.replace(/\r?\n/g, newline);
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
