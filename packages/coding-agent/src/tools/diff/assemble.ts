import type { Placement } from "./hunk-report.js";
import { oldSide } from "./hunk-sides.js";
import type { HunkLine } from "./parse.js";

/** A line of the original text: content without `\n` (a `\r` before it kept) and the `\n` if any. */
export interface SourceLine {
  text: string;
  newline: boolean;
}

/** The lines of `text`: a final line without `\n` counts, the empty rest after a last `\n` does not. */
export function splitSource(text: string): SourceLine[] {
  const parts = text.split("\n");
  const last = parts.pop() ?? "";
  const lines: SourceLine[] = parts.map((part) => ({ text: part, newline: true }));
  if (last !== "") lines.push({ text: last, newline: false });
  return lines;
}

/** `\r\n` when most of the text's line breaks are, else `\n`. */
export function dominantNewline(lines: readonly SourceLine[]): string {
  let crlf = 0;
  let lf = 0;
  for (const line of lines) {
    if (!line.newline) continue;
    if (line.text.endsWith("\r")) crlf += 1;
    else lf += 1;
  }
  return crlf > lf ? "\r\n" : "\n";
}

/** Options of {@link assemble}: facts of the original text and of the diff. */
interface AssembleOptions {
  newline: string;
  bom: string;
  source: string;
  carriesCr: boolean;
}

/** What {@link assemble} made. */
export interface Assembled {
  text: string;
  /** The new text's lines. */
  lines: SourceLine[];
  /** Per placement, the index in `lines` where its changed lines begin. */
  coreStarts: Map<Placement, number>;
}

/**
 * The new text: the `original` lines with the `placements` applied. Every line outside the changed
 * lines keeps its own bytes; added lines take the file's line ending (`newline`) unless the diff
 * says theirs; the byte order mark is put back and the final newline kept unless a
 * `\ No newline at end of file` marker changes the last line.
 */
export function assemble(
  original: readonly SourceLine[],
  placements: readonly Placement[],
  { newline, bom, source, carriesCr }: AssembleOptions,
): Assembled {
  const coreStarts = new Map<Placement, number>();
  const sorted = [...placements].sort(
    (left, right) => left.coreStart - right.coreStart || left.coreEnd - right.coreEnd,
  );
  const output: SourceLine[] = [];
  let cursor = 0;
  let finalNewline = source === "" || source.endsWith("\n");
  for (const placement of sorted) {
    const { lines: hunkLines, tolerance } = placement;
    const first = hunkLines.findIndex((line) => line.kind !== "context");
    let last = hunkLines.length - 1;
    while (last >= 0 && hunkLines[last]?.kind === "context") last -= 1;
    for (; cursor < placement.coreStart; cursor += 1) output.push(original[cursor] as SourceLine);
    coreStarts.set(placement, output.length);
    // A diff that carries `\r`s, or matched byte for byte, says each added line's ending itself;
    // an LF diff for a file with CRLF lines does not.
    const faithful =
      carriesCr ||
      (tolerance === "exact" &&
        (oldSide(hunkLines).length > 0 || !original.some((line) => line.text.endsWith("\r"))));
    let added = 0;
    for (let index = first; index <= last; index += 1) {
      const line = hunkLines[index] as HunkLine;
      if (line.kind === "context") {
        output.push(original[cursor] as SourceLine);
        cursor += 1;
      } else if (line.kind === "remove") {
        cursor += 1;
      } else {
        const text = placement.reindented?.[added] ?? line.text;
        added += 1;
        if (faithful) {
          output.push({ text, newline: true });
        } else {
          const bare = text.endsWith("\r") ? text.slice(0, -1) : text;
          output.push({ text: newline === "\r\n" ? `${bare}\r` : bare, newline: true });
        }
      }
    }
    const oldLength = oldSide(hunkLines).length;
    if (placement.start + oldLength >= original.length) {
      const full = placement.fullLines;
      const oldMarker = full.some((line) => line.kind !== "add" && line.noNewlineAtEnd);
      const newMarker = full.some((line) => line.kind !== "remove" && line.noNewlineAtEnd);
      if (oldMarker !== newMarker) finalNewline = !newMarker;
    }
  }
  for (; cursor < original.length; cursor += 1) output.push(original[cursor] as SourceLine);
  const crlf = newline === "\r\n";
  const pieces = output.map((line, index) => {
    if (index < output.length - 1) {
      if (line.newline) return `${line.text}\n`;
      // A last line without a newline that now has lines after it gets the file's line ending.
      return crlf && !line.text.endsWith("\r") ? `${line.text}\r\n` : `${line.text}\n`;
    }
    if (!finalNewline) {
      return line.text.endsWith("\r") && line.newline ? line.text.slice(0, -1) : line.text;
    }
    if (line.newline) return `${line.text}\n`;
    return crlf && !line.text.endsWith("\r") ? `${line.text}\r\n` : `${line.text}\n`;
  });
  return { text: bom + pieces.join(""), lines: output, coreStarts };
}
