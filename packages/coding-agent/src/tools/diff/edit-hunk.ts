import { commonEnds } from "../shared/common-ends.js";
import { applyFilePatch, type HunkReport } from "./apply.js";
import { lineDiff } from "./line-diff.js";
import type { FilePatch } from "./parse.js";

/** Where a search/replace edit whose `old` is not in the file lands when read as a hunk. */
export type EditHunkMatch =
  | {
      status: "placed";
      /** Offsets in the text of the region that changes, `end` exclusive. */
      start: number;
      end: number;
      /** The text that takes the region's place. */
      replacement: string;
      /** 1-based first and last line of the region. */
      startLine: number;
      endLine: number;
      /** How the hunk was placed: its line, tolerance and the slips taken (see {@link HunkReport}). */
      report: HunkReport;
    }
  | { status: "already-applied"; line: number }
  /** 1-based lines where `old` matches under a tolerance: several, so none is taken. */
  | { status: "ambiguous"; lines: number[] }
  | { status: "none"; reason: string };

/**
 * Place the edit `old` → `new` in `text` as apply_diff places a hunk without line numbers: the
 * lines `old` and `new` share are its context (kept as the file has them), the others its removed
 * and added lines; every tolerance and slip the diff engine takes applies (see `placeHunk`), and
 * it lands only where one place fits. `old` and `new` must both end with a line break or both not.
 * Pure: no I/O.
 */
export function placeEditAsHunk(text: string, old: string, replacement: string): EditHunkMatch {
  const ends = (value: string) => value.endsWith("\n");
  if (old !== "" && replacement !== "" && ends(old) !== ends(replacement)) {
    return { status: "none", reason: "`old` and `new` differ in ending with a line break" };
  }
  const lines = (value: string) => {
    if (value === "") return [];
    const split = value.split("\n");
    if (ends(value)) split.pop();
    return split;
  };
  const patch: FilePatch = {
    oldPath: undefined,
    newPath: undefined,
    operation: "modify",
    hunks: [
      {
        oldStart: undefined,
        oldCount: undefined,
        newStart: undefined,
        newCount: undefined,
        lines: lineDiff(lines(old), lines(replacement)),
        recounted: false,
      },
    ],
  };
  const result = applyFilePatch(text, patch, { region: true });
  const [report] = result.hunks;
  if (report?.status === "already-applied") {
    return { status: "already-applied", line: report.line ?? 1 };
  }
  if (result.conflicts.length > 0 || report?.status !== "applied" || result.text === null) {
    return { status: "none", reason: report?.message ?? "not found" };
  }
  const edited = result.text;
  const { head: start, tail } = commonEnds(text, edited);
  if (start === text.length && start === edited.length) {
    return { status: "none", reason: "the edit would change nothing there" };
  }
  const end = text.length - tail;
  const lineOf = (offset: number) => text.slice(0, offset).split("\n").length;
  return {
    status: "placed",
    start,
    end,
    replacement: edited.slice(start, edited.length - tail),
    startLine: lineOf(start),
    endLine: lineOf(Math.max(start, end - 1)),
    report,
  };
}
