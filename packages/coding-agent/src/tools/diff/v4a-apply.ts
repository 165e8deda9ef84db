import { type ApplyFilePatchResult, applyFilePatch } from "./apply.js";
import { dominantNewline, splitSource } from "./assemble.js";
import { oldSide } from "./hunk-sides.js";
import { LineTable, TOLERANCES } from "./locate.js";
import type { Hunk } from "./parse.js";
import type { V4AChunk } from "./v4a.js";

/**
 * Apply the changes of a V4A `*** Update File:` section to `original` through the placing engine
 * ({@link applyFilePatch}), which finds each change by its content and refuses one that fits
 * several places. V4A has no line numbers: its order does that work. Each change is looked for
 * after the one before: below its `@@` lines (each found in turn, the first at or after that
 * point), the first place; without them, the only place after the change before; at the file's
 * end with `*** End of File`. The place found becomes the hunk's line hint, which only chooses
 * among places its text matches, so a text found twice with nothing to choose is refused. A `@@`
 * line not in the file is a conflict. A change with no old lines goes after its last `@@` line, or at the end of the file.
 * A changed file ends with a newline, as V4A cannot say otherwise.
 */
export function applyV4AChunks(
  original: string,
  chunks: readonly V4AChunk[],
  { label }: { label?: string } = {},
): ApplyFilePatchResult {
  const lines = splitSource(original).map((line) => line.text);
  const table = new LineTable(lines);
  const hunks: Hunk[] = [];
  const missing: Array<{ number: number; anchor: string }> = [];
  let cursor = 0;
  chunks.forEach((chunk, index) => {
    let anchored = false;
    for (const anchor of chunk.anchors) {
      const found = placeAfter(table, [anchor], cursor, { atEnd: false, first: true });
      if (found === undefined) {
        missing.push({ number: index + 1, anchor });
        return;
      }
      cursor = found + 1;
      anchored = true;
    }
    const before = oldSide(chunk.lines);
    let oldStart: number | undefined;
    if (before.length === 0) {
      // The line after which the added lines go.
      oldStart = anchored ? cursor : lines.length;
    } else {
      const found = placeAfter(table, before, cursor, { atEnd: chunk.endOfFile, first: anchored });
      if (found !== undefined) {
        oldStart = found + 1;
        cursor = found + before.length;
      }
    }
    hunks.push({
      oldStart,
      oldCount: undefined,
      newStart: undefined,
      newCount: undefined,
      lines: chunk.lines,
      recounted: false,
    });
  });
  if (missing.length > 0) {
    const where = label === undefined ? "" : ` in ${label}`;
    const conflicts = missing.map(
      ({ number, anchor }) =>
        `Hunk #${number} FAILED${where}: its @@ line ${JSON.stringify(anchor)} is not in the file after the change before it; send the @@ line as the file has it (a line above the change, such as its function's signature), or leave it out`,
    );
    return {
      text: original,
      hunks: missing.map(({ number }) => ({ hunk: number, status: "conflict" })),
      conflicts,
    };
  }
  const result = applyFilePatch(
    original,
    { oldPath: undefined, newPath: undefined, operation: "modify", hunks },
    label === undefined ? {} : { label },
  );
  const worded = {
    ...result,
    conflicts: result.conflicts.map(inV4AWords),
    // The line hints were ours, not the patch's: no offset from them, no choice by a line number.
    hunks: result.hunks.map(({ offset: _offset, chosenByHint: _chosen, ...report }) =>
      report.message === undefined ? report : { ...report, message: inV4AWords(report.message) },
    ),
  };
  const text = worded.text;
  if (text === null || text === "" || text.endsWith("\n") || text === original) return worded;
  return { ...worded, text: text + dominantNewline(splitSource(original)) };
}

/** A V4A change has no line numbers: what singles one out is context or an `@@` line. */
function inV4AWords(reason: string): string {
  return reason
    .replace(
      "and its @@ line number does not single one out",
      "and neither its place in the patch nor its @@ lines single one out",
    )
    .replace(
      "or correct the @@ line number",
      "or put the line that starts its function or class after @@",
    );
}

/**
 * The 0-based line at or after `from` where `needle` starts, trying each tolerance in turn (the
 * engine's order): the first such line with `first`, else the only one. With `atEnd`, the place
 * that ends the file is taken first.
 */
function placeAfter(
  table: LineTable,
  needle: readonly string[],
  from: number,
  { atEnd, first }: { atEnd: boolean; first: boolean },
): number | undefined {
  const end = table.lines.length - needle.length;
  for (const tolerance of TOLERANCES) {
    const starts = table.findAll(needle, tolerance).filter((start) => start >= from);
    if (atEnd && starts.includes(end)) return end;
    if (starts.length === 0) continue;
    return first || starts.length === 1 ? starts[0] : undefined;
  }
  return undefined;
}
