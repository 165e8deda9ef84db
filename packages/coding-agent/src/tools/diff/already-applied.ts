import { addsOnly, newSide } from "./hunk-sides.js";
import type { LineTable, Tolerance } from "./locate.js";
import { normalizeLine } from "./locate.js";
import type { HunkLine } from "./parse.js";
import { isSmallEdit } from "./small-edit.js";

/**
 * The 0-based line where the hunk's new text already stands around its old text found at `start`.
 * Only a hunk that only adds lines can be both found and applied already: its old lines are all
 * still there once it is applied.
 */
export function appliedAt(
  table: LineTable,
  lines: readonly HunkLine[],
  start: number,
  tolerance: Tolerance,
): number | undefined {
  if (!addsOnly(lines)) return undefined;
  const after = newSide(lines).map((line) => normalizeLine(line, tolerance));
  const keys = table.keys(tolerance);
  // The lines added before the first old line put the new text that much earlier.
  const addedFirst = lines.findIndex((line) => line.kind !== "add");
  const at = start - addedFirst;
  const matches =
    at >= 0 &&
    at + after.length <= keys.length &&
    after.every((line, index) => keys[at + index] === line);
  return matches ? at : undefined;
}

/**
 * Whether the hunk's added lines are its removed lines, one for one, once compared under
 * `tolerance`, but for at most a slip (see {@link isSmallEdit}).
 */
export function changesOnlySlips(lines: readonly HunkLine[], tolerance: Tolerance): boolean {
  const removed = lines.filter((line) => line.kind === "remove").map((line) => line.text);
  const added = lines.filter((line) => line.kind === "add").map((line) => line.text);
  return (
    removed.length === added.length &&
    removed.every((line, index) => {
      const left = normalizeLine(line, tolerance);
      const right = normalizeLine(added[index] ?? "", tolerance);
      return left === right || isSmallEdit(left, right);
    })
  );
}

export function normalized(lines: readonly string[], tolerance: Tolerance): string {
  return lines.map((line) => normalizeLine(line, tolerance)).join("\n");
}

/** A run of removed lines tells nothing by itself with fewer lines that are not blank. */
const TELLING_RUN = 2;

/**
 * The 0-based line where a run of the hunk's removed lines (two or more that are not blank) still
 * stands, exactly but for trailing whitespace, near its new text found at `at`: within the hunk's
 * reach either side. Then the new text standing does not show the hunk applied (the old text
 * may stand in another order, as a model remembered it).
 */
export function removedStillStanding(
  table: LineTable,
  lines: readonly HunkLine[],
  at: number,
): number | undefined {
  const reach = lines.length;
  const runs: string[][] = [];
  let run: string[] = [];
  for (const line of [...lines, undefined]) {
    if (line?.kind === "remove") run.push(line.text);
    else if (run.length > 0) {
      if (run.filter((text) => text.trim() !== "").length >= TELLING_RUN) runs.push(run);
      run = [];
    }
  }
  for (const removed of runs) {
    const near = table
      .findAll(removed, "trailing-whitespace")
      .find((start) => start >= at - reach && start <= at + reach + newSide(lines).length);
    if (near !== undefined) return near;
  }
  return undefined;
}
