import type { Tolerance } from "./locate.js";
import type { HunkLine } from "./parse.js";

/** What placing a hunk in a file reports and decides: shared by the diff engine and edit_file. */

/** What happened to one hunk. */
export interface HunkReport {
  /** 1-based number of the hunk within its file's diff, as in `Hunk #N`. */
  hunk: number;
  /**
   * `applied`; `already-applied` (its new text is in the file and its old text is not, so it was
   * left alone); `conflict` (not applied, see `message`); `skipped` (it would apply, but another
   * hunk conflicted and nothing was written).
   */
  status: "applied" | "already-applied" | "conflict" | "skipped";
  /** 1-based line of the original file where the hunk's old text starts (or where it was found). */
  line?: number;
  /** `line` minus the line the `@@` header declared; 0 when the header was right. */
  offset?: number;
  /** How loosely lines were compared to locate the hunk. */
  tolerance?: Tolerance;
  /** How many outer context lines had to be left out to locate the hunk. */
  contextDropped?: number;
  /** Several places matched and the `@@` line number chose one. */
  chosenByHint?: boolean;
  /** 1-based lines of the file that differ from the diff's line by a small edit (a slip). */
  similarLines?: number[];
  /** 1-based lines of the file that the diff's context left out (kept as they are). */
  missingLines?: number[];
  /** Context lines of the diff the file does not have (remembered from an older version), left out. */
  unmatchedContext?: number;
  /** 1-based lines of the file that hold one of the hunk's changes already (kept as they are). */
  appliedLines?: number[];
  /** 1-based blank lines of the file the diff left out between two of its removed lines (removed). */
  blankLinesRemoved?: number[];
  /** For a conflict: why, for the model. */
  message?: string;
}

/** Where a hunk goes in the original text, and how its added lines are written there. */
export interface Placement {
  number: number;
  /** The hunk's lines actually matched (outer context lines may have been dropped). */
  lines: HunkLine[];
  /** 0-based line of the original where `lines`' first old line sits (insertion point if none). */
  start: number;
  tolerance: Tolerance;
  /** The added lines re-indented to the file's indentation (indentation tolerance only). */
  reindented: string[] | undefined;
  /** The lines the hunk's full (undropped) lines reported, for the final-newline markers. */
  fullLines: HunkLine[];
  /** The original lines [coreStart, coreEnd) the changed lines cover (see `coreRange`). */
  coreStart: number;
  coreEnd: number;
}
