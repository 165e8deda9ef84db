import { type EditHunkMatch, placeEditAsHunk } from "../diff/edit-hunk.js";
import type { HunkReport } from "../diff/hunk-report.js";
import { locateTolerantly } from "../diff/locate-text.js";

/** Where one `{ old, new }` edit goes in a file's text. */
export type EditLocation =
  | {
      status: "found";
      /** Offsets of the region replaced, `end` exclusive, and the text put there. */
      start: number;
      end: number;
      replacement: string;
      /** Set when `old` was not found exactly and was placed with tolerances (see `report`). */
      tolerated?: HunkReport;
    }
  | { status: "ambiguous"; offsets: number[] }
  | {
      status: "none";
      /** What placing it with tolerances found (when `tolerant` was off, what it would do). */
      tolerant: EditHunkMatch;
    };

/** The most occurrences of an ambiguous `old` listed. */
const MAX_OCCURRENCES = 1_000;

/**
 * Locate `edit` in `text`: `old` exactly once; else, not found exactly, placed as apply_diff places
 * a hunk (see {@link placeEditAsHunk}) when `tolerant`, only where one place fits. An `old` found
 * exactly several times is ambiguous, never placed by tolerance. Pure: no I/O.
 */
export function locateEdit(
  text: string,
  edit: { old: string; new: string },
  { tolerant }: { tolerant: boolean },
): EditLocation {
  const offsets = findOccurrences(text, edit.old, MAX_OCCURRENCES);
  const [first] = offsets;
  if (first !== undefined && offsets.length === 1) {
    return { status: "found", start: first, end: first + edit.old.length, replacement: edit.new };
  }
  if (offsets.length > 1) return { status: "ambiguous", offsets };
  // Whole lines matching under a tolerance are replaced by `new` as it is (re-indented when
  // indentation was ignored); only with slips in the lines does the edit become a hunk, whose
  // context lines keep the file's text.
  const matched = locateTolerantly(text, edit.old, edit.new);
  if (matched.status === "ambiguous") {
    return { status: "none", tolerant: { status: "ambiguous", lines: matched.lines } };
  }
  if (matched.status === "unique") {
    const { start, end, replacement, tolerance, startLine, endLine } = matched;
    if (tolerant) {
      return {
        status: "found",
        start,
        end,
        replacement,
        tolerated: { hunk: 1, status: "applied", line: startLine, tolerance },
      };
    }
    return {
      status: "none",
      tolerant: {
        status: "placed",
        start,
        end,
        replacement,
        startLine,
        endLine,
        report: { hunk: 1, status: "applied", line: startLine, tolerance },
      },
    };
  }
  const placed = placeEditAsHunk(text, edit.old, edit.new);
  if (tolerant && placed.status === "placed") {
    const { start, end, replacement, report } = placed;
    return { status: "found", start, end, replacement, tolerated: report };
  }
  return { status: "none", tolerant: placed };
}

/**
 * `text` with the single edit `old` → `new` made (see {@link locateEdit}), or `undefined` when it
 * is refused: what edit_file writes for one edit, for benchmarks.
 */
export function editText(
  text: string,
  edit: { old: string; new: string },
  options: { tolerant: boolean },
): string | undefined {
  const location = locateEdit(text, edit, options);
  if (location.status !== "found") return undefined;
  return text.slice(0, location.start) + location.replacement + text.slice(location.end);
}

/** Start offsets of `needle` in `text`, overlapping ones included, at most `limit` of them. */
function findOccurrences(text: string, needle: string, limit: number): number[] {
  const found: number[] = [];
  for (
    let index = text.indexOf(needle);
    index !== -1 && found.length < limit;
    index = text.indexOf(needle, index + 1)
  ) {
    found.push(index);
  }
  return found;
}
