import {
  appliedAt,
  changesOnlySlips,
  normalized,
  removedStillStanding,
} from "./already-applied.js";
import { ambiguousReason, notFoundReason } from "./conflict-reasons.js";
import type { HunkReport, Placement } from "./hunk-report.js";
import {
  addsOnly,
  coreRange,
  leadingContext,
  newSide,
  oldSide,
  rangesOverlap,
} from "./hunk-sides.js";
import { reindentAdded } from "./indent-shifts.js";
import { tabsAsFileSpaces } from "./indent-style.js";
import {
  type LineTable,
  type Location,
  locateLines,
  TOLERANCES,
  type Tolerance,
} from "./locate.js";
import { locateFuzzy } from "./locate-fuzzy.js";
import type { Hunk, HunkLine } from "./parse.js";

/** Options of {@link placeHunk}. */
export interface PlaceHunkOptions {
  /** The spaces a tab at the start of an added line stands for (see `diffTabWidth`). */
  tabWidth: number | undefined;
  /** The hunk is a search/replace edit replacing its whole region (see `LocateFuzzyOptions`). */
  region: boolean;
  /** Whether the file's last line ends with a newline (absent: it does, or the file is empty). */
  finalNewline?: boolean;
}

/** What {@link placeHunk} decided for one hunk. */
export type HunkOutcome =
  | { kind: "placed"; placement: Placement; report: HunkReport }
  | {
      kind: "already-applied";
      report: HunkReport;
      /** The offset of the later hunks' `@@` line numbers in the file, which holds this change. */
      drift: number | undefined;
    }
  | { kind: "conflict"; line: number; reason: string };

/**
 * Place hunk number `number` in the original lines of `table`, clear of the hunks `placed` before
 * it. The hunk is located by its old text, `drift` (the offset of the hunk before) added to its `@@`
 * line number to choose among several matches; failing that, outer context lines are dropped one
 * at a time. `hunkLines` are the hunk's lines without a byte order mark.
 */
export function placeHunk(
  table: LineTable,
  hunk: Hunk,
  number: number,
  drift: number,
  placed: readonly Placement[],
  hunkLines: HunkLine[],
  { tabWidth, region, finalNewline = true }: PlaceHunkOptions,
): HunkOutcome {
  const before = oldSide(hunkLines);
  // The header's old start is 1-based, except that a hunk with no old lines names the line after
  // which it inserts.
  const declared =
    hunk.oldStart === undefined
      ? undefined
      : before.length === 0
        ? hunk.oldStart
        : hunk.oldStart - 1;
  const hint = declared === undefined ? undefined : declared + drift;
  const shownLine = (declared ?? 0) + 1;
  const overlaps = (lines: readonly HunkLine[]) => (start: number) => {
    const [coreStart, coreEnd] = coreRange(lines, start);
    return !placed.some((other) =>
      rangesOverlap(coreStart, coreEnd, other.coreStart, other.coreEnd),
    );
  };
  const acceptLines = (lines: HunkLine[], start: number) => overlaps(lines)(start);
  const placement = (lines: HunkLine[], start: number, tolerance: Tolerance): Placement => {
    const [coreStart, coreEnd] = coreRange(lines, start);
    return {
      number,
      lines,
      start,
      tolerance,
      reindented: undefined,
      fullLines: hunkLines,
      coreStart,
      coreEnd,
    };
  };
  const report = (start: number, dropped: number, location: Location): HunkReport => {
    const line = start - dropped + 1;
    const result: HunkReport = { hunk: number, status: "applied", line };
    if (declared !== undefined) result.offset = line - (declared + 1);
    if (location.status === "unique") {
      result.tolerance = location.tolerance;
      if (location.chosenByHint) result.chosenByHint = true;
    }
    if (dropped > 0) result.contextDropped = dropped;
    return result;
  };

  // `at`: where the hunk's new text stands (0-based); `start`: where its first line would stand.
  const alreadyApplied = (at: number, start = at): HunkOutcome => ({
    kind: "already-applied",
    report: { hunk: number, status: "already-applied", line: at + 1 },
    drift:
      declared === undefined
        ? undefined
        : start - declared + newSide(hunkLines).length - before.length,
  });

  if (!hunkLines.some((line) => line.kind !== "context")) {
    return {
      kind: "conflict",
      line: shownLine,
      reason: "the hunk has no added or removed lines; it would change nothing",
    };
  }

  if (before.length === 0) {
    // Nothing to locate by content: only the line number says where the new lines go, and
    // nothing tells whether they are there already (the same lines may well occur elsewhere).
    const size = table.lines.length;
    // A diff adding to an empty file, against a file holding exactly what it adds, down to its
    // final newline: applied already. (With another final newline it is an insertion at the top
    // of a file that only looks like its lines: `a` with no newline, and `+a` before it.)
    const added = newSide(hunkLines);
    const lastAdded = hunkLines.filter((line) => line.kind === "add").at(-1);
    if (
      size > 0 &&
      hunk.oldStart === 0 &&
      size === added.length &&
      added.every((line, index) => table.lines[index] === line) &&
      finalNewline === (lastAdded?.noNewlineAtEnd !== true)
    ) {
      return alreadyApplied(0);
    }
    if (hint === undefined || hint < 0 || hint > size) {
      return {
        kind: "conflict",
        line: shownLine,
        reason:
          "the hunk only adds lines and has no context lines, so only its @@ line number could place it, and that is missing or past the end of the file; add context lines around the added ones",
      };
    }
    if (!overlaps(hunkLines)(hint)) {
      return { kind: "conflict", line: hint + 1, reason: "the hunk overlaps another hunk" };
    }
    // The added lines standing exactly where they would go is what the hunk sent again leaves.
    // It may also be a line meant twice: neither is sure, so it is refused, not applied again.
    if (
      hint + added.length <= size &&
      added.every((line, index) => table.lines[hint + index] === line)
    ) {
      return {
        kind: "conflict",
        line: hint + 1,
        reason: `the hunk has no context lines and its added lines already stand at line ${hint + 1}, where it would put them: it may be applied already; re-read the file and, if the lines are still to be added, give context lines around them`,
      };
    }
    const location: Location = {
      status: "unique",
      start: hint,
      tolerance: "exact",
      chosenByHint: false,
    };
    return {
      kind: "placed",
      placement: placement(hunkLines, hint, "exact"),
      report: report(hint, 0, location),
    };
  }

  // A hunk with no context lines (diff -U0) has only its removed lines and its line number: its
  // removed lines standing elsewhere tell nothing (sent twice, they are found again further on),
  // so with a line number it is placed there or nowhere.
  const contextless = !hunkLines.some((line) => line.kind === "context");
  const full = locateLines(table, before, {
    hint,
    accept:
      contextless && hint !== undefined
        ? (start) => start === hint && overlaps(hunkLines)(start)
        : overlaps(hunkLines),
  });
  if (full.status === "ambiguous") {
    return { kind: "conflict", line: shownLine, reason: ambiguousReason(full.starts) };
  }
  if (full.status === "unique") {
    const already = appliedAt(table, hunkLines, full.start, full.tolerance);
    if (already !== undefined) {
      return alreadyApplied(already);
    }
    // A hunk that only adds lines keeps its old text: when its whole new text stands elsewhere,
    // the old text found may be a copy left over and the hunk applied already. Neither is sure.
    const standing = addsOnly(hunkLines)
      ? locateLines(table, newSide(hunkLines), { tolerances: ["exact"] })
      : undefined;
    if (standing !== undefined && standing.status !== "none") {
      const at = (standing.status === "unique" ? standing.start : (standing.starts[0] ?? 0)) + 1;
      return {
        kind: "conflict",
        line: shownLine,
        reason: `the hunk's new text already stands at line ${at}, and its old text also at line ${full.start + 1}: it may be applied already; check the file and, if the lines are still to be added, give context lines that occur only where they go`,
      };
    }
    return finish(placement(hunkLines, full.start, full.tolerance), report(full.start, 0, full));
  }

  // Checked before outer context lines are dropped: a hunk applied already has its old text gone,
  // and with an outer line left out its old side can line up with lines it added (a block of
  // added tests ending in the blank lines its context starts with), which applies it again.
  // Only a tolerance that tells the old text from the new can say the new one is there already:
  // not one under which the hunk changes nothing but a slip (a hunk changing only indentation,
  // with a typo in its removed line, matched its own old text with indentation ignored). Nor can
  // new text that is only the context on one side of removed lines: it was there before too.
  const removesAtAnEdge =
    !hunkLines.some((line) => line.kind === "add") &&
    (hunkLines[0]?.kind !== "context" || hunkLines.at(-1)?.kind !== "context");
  const telling = TOLERANCES.filter(
    (tolerance) =>
      !removesAtAnEdge &&
      normalized(before, tolerance) !== normalized(newSide(hunkLines), tolerance) &&
      (tolerance === "exact" || !changesOnlySlips(hunkLines, tolerance)),
  );
  const after = locateLines(table, newSide(hunkLines), {
    tolerances: telling,
    ...(contextless && hint !== undefined ? { accept: (start: number) => start === hint } : {}),
  });
  if (after.status !== "none") {
    const at = after.status === "unique" ? after.start : (after.starts[0] ?? 0);
    const standing = removedStillStanding(table, hunkLines, at);
    if (standing !== undefined) {
      return {
        kind: "conflict",
        line: shownLine,
        reason: `the hunk's new text already stands at line ${at + 1}, but lines it removes still stand at line ${standing + 1}: it is not clear whether it is applied; read the file and send a diff of its current content`,
      };
    }
    return alreadyApplied(at);
  }

  // Outer context lines are dropped one at a time, from either end, keeping at least the one
  // next to the changed lines on each side.
  const top = leadingContext(hunkLines);
  const bottom = leadingContext([...hunkLines].reverse());
  const droppable = Math.max(0, top - 1) + Math.max(0, bottom - 1);
  for (let total = 1; total <= droppable; total += 1) {
    const found = new Map<
      number,
      { lines: HunkLine[]; start: number; dropped: number; location: Location }
    >();
    for (let dropTop = 0; dropTop <= total; dropTop += 1) {
      const dropBottom = total - dropTop;
      if (dropTop > Math.max(0, top - 1) || dropBottom > Math.max(0, bottom - 1)) continue;
      const lines = hunkLines.slice(dropTop, hunkLines.length - dropBottom);
      // Blank lines left alone locate nothing.
      if (oldSide(lines).every((line) => line.trim() === "")) continue;
      const location = locateLines(table, oldSide(lines), {
        hint: hint === undefined ? undefined : hint + dropTop,
        accept: overlaps(lines),
        tolerances: TOLERANCES.filter((tolerance) => tolerance !== "indentation"),
      });
      if (location.status === "unique") {
        const [coreStart] = coreRange(lines, location.start);
        found.set(coreStart, { lines, start: location.start, dropped: dropTop, location });
      }
    }
    if (found.size > 1) {
      return {
        kind: "conflict",
        line: shownLine,
        reason: ambiguousReason(
          [...found.values()].map((candidate) => candidate.start - candidate.dropped),
        ),
      };
    }
    const [candidate] = found.values();
    if (candidate !== undefined) {
      // Lining up all of the hunk's lines, some with a slip, may find another place than leaving
      // outer lines out: then neither is sure.
      const whole = locateFuzzy(table, hunkLines, { hint, accept: acceptLines, anyGap: true });
      if (whole.status === "unique") {
        const [wholeStart] = coreRange(whole.alignment.lines, whole.alignment.start);
        const [droppedStart] = coreRange(candidate.lines, candidate.start);
        if (wholeStart !== droppedStart) {
          return {
            kind: "conflict",
            line: shownLine,
            reason: ambiguousReason([candidate.start - candidate.dropped, whole.alignment.start]),
          };
        }
      }
      // The added lines with the context kept around them standing in the file already: the hunk
      // was applied, and its outer line has changed since (or is one it added).
      const standing = addsOnly(candidate.lines)
        ? locateLines(table, newSide(candidate.lines), { tolerances: ["exact"] })
        : undefined;
      if (standing !== undefined && standing.status !== "none") {
        const at = standing.status === "unique" ? standing.start : (standing.starts[0] ?? 0);
        return alreadyApplied(at, at - candidate.dropped);
      }
      const tolerance =
        candidate.location.status === "unique" ? candidate.location.tolerance : "exact";
      const result = report(candidate.start, candidate.dropped, candidate.location);
      result.contextDropped = total;
      return finish(placement(candidate.lines, candidate.start, tolerance), result);
    }
  }

  const fuzzy = locateFuzzy(table, hunkLines, { hint, accept: acceptLines, region });
  if (fuzzy.status === "ambiguous") {
    return { kind: "conflict", line: shownLine, reason: ambiguousReason(fuzzy.starts) };
  }
  if (fuzzy.status === "unique") {
    const { alignment } = fuzzy;
    const location: Location = {
      status: "unique",
      start: alignment.start,
      tolerance: alignment.tolerance,
      chosenByHint: fuzzy.chosenByHint,
    };
    const result = report(alignment.start, 0, location);
    const oneBased = (lines: readonly number[]) => lines.map((line) => line + 1);
    if (alignment.similarLines.length > 0) result.similarLines = oneBased(alignment.similarLines);
    if (alignment.missingLines.length > 0) result.missingLines = oneBased(alignment.missingLines);
    if (alignment.unmatchedContext.length > 0) {
      result.unmatchedContext = alignment.unmatchedContext.length;
    }
    if (alignment.appliedLines.length > 0) result.appliedLines = oneBased(alignment.appliedLines);
    if (alignment.blankLinesRemoved.length > 0) {
      result.blankLinesRemoved = oneBased(alignment.blankLinesRemoved);
    }
    return finish(placement(alignment.lines, alignment.start, alignment.tolerance), result);
  }
  return { kind: "conflict", line: shownLine, reason: notFoundReason(table, before) };

  function finish(found: Placement, result: HunkReport): HunkOutcome {
    if (found.tolerance === "indentation") {
      const reindented = reindentAdded(table.lines, found.lines, found.start);
      if (reindented === undefined) {
        return {
          kind: "conflict",
          line: found.start + 1,
          reason: `the old lines match lines ${found.start + 1}-${found.start + oldSide(found.lines).length} only if indentation is ignored, and their indentation differs from the diff's unevenly, so the added lines' indentation is unclear; send the diff with the file's indentation`,
        };
      }
      found.reindented = reindented;
    } else if (tabWidth !== undefined) {
      const reindented = tabsAsFileSpaces(found.lines, tabWidth);
      if (reindented !== undefined) {
        found.reindented = reindented;
        result.tolerance = "indentation";
      }
    }
    return { kind: "placed", placement: found, report: result };
  }
}
