import { findClosestRegion } from "../closest-region.js";
import {
  LineTable,
  type Location,
  locateLines,
  normalizeLine,
  TOLERANCES,
  type Tolerance,
} from "./locate.js";
import type { FilePatch, Hunk, HunkLine } from "./parse.js";
import { canReindent, type IndentShift, indentShift, reindentLine } from "./reindent.js";

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
  /** For a conflict: why, for the model. */
  message?: string;
}

/** The outcome of {@link applyFilePatch}. */
export interface ApplyFilePatchResult {
  /**
   * The new text with every hunk that did not conflict applied; `null` when the patch deletes the
   * file. When `conflicts` is not empty this is a partial result a caller writes only if asked to.
   */
  text: string | null;
  hunks: HunkReport[];
  /** One `Hunk #N FAILED at L: reason` line per hunk that could not be applied. */
  conflicts: string[];
}

/** Options of {@link applyFilePatch}. */
export interface ApplyFilePatchOptions {
  /** A file name for conflict lines (`Hunk #2 FAILED at 10 in <label>: ...`); none by default. */
  label?: string;
}

/** A line of the original text: content without `\n` (a `\r` before it kept) and the `\n` if any. */
interface SourceLine {
  text: string;
  newline: boolean;
}

interface Placement {
  number: number;
  /** The hunk's lines actually matched (outer context lines may have been dropped). */
  lines: HunkLine[];
  /** 0-based line of the original where `lines`' first old line sits (insertion point if none). */
  start: number;
  tolerance: Tolerance;
  /** The indentation change to give added lines (indentation tolerance only). */
  shift: IndentShift[] | undefined;
  /** The lines the hunk's full (undropped) lines reported, for the final-newline markers. */
  fullLines: HunkLine[];
  coreStart: number;
  coreEnd: number;
}

const BYTE_ORDER_MARK = "\uFEFF";

/**
 * Apply one file's hunks to `original` (`undefined` when the file does not exist). Pure: no I/O.
 * Each hunk is located by its old text (see {@link locateLines}), the `@@` line number serving only
 * to choose among several matches; failing that, outer context lines are dropped one at a time
 * (never the changed lines' immediate neighbours). A hunk whose new text is there and old text is
 * not is reported `already-applied`. Every line outside the changed lines keeps its own bytes; added
 * lines take the file's line ending; the byte order mark and the final newline stay as they were
 * unless a `\ No newline at end of file` marker changes the last line.
 */
export function applyFilePatch(
  original: string | undefined,
  patch: FilePatch,
  { label }: ApplyFilePatchOptions = {},
): ApplyFilePatchResult {
  const where = label === undefined ? "" : ` in ${label}`;
  const failed = (number: number, line: number, reason: string) =>
    `Hunk #${number} FAILED at ${line}${where}: ${reason}`;

  if (patch.operation === "create" && original !== undefined) {
    return createOverExisting(original, patch, failed);
  }
  if (patch.operation === "delete" && original === undefined) {
    return {
      text: null,
      hunks: patch.hunks.map((_, index) => ({ hunk: index + 1, status: "already-applied" })),
      conflicts: [],
    };
  }

  const source = original ?? "";
  const bom = source.startsWith(BYTE_ORDER_MARK) ? BYTE_ORDER_MARK : "";
  // A file holding only a byte order mark has one empty line to a diff tool, not none.
  const lines =
    source === bom && bom !== ""
      ? [{ text: "", newline: false }]
      : splitSource(source.slice(bom.length));
  const table = new LineTable(lines.map((line) => line.text));
  const newline = dominantNewline(lines);

  const reports: HunkReport[] = [];
  const conflicts: string[] = [];
  const placements: Placement[] = [];
  let drift = 0;
  patch.hunks.forEach((hunk, index) => {
    const number = index + 1;
    const outcome = placeHunk(table, hunk, number, drift, placements, bomFree(hunk.lines));
    if (outcome.kind === "placed") {
      const { placement, report } = outcome;
      placements.push(placement);
      reports.push(report);
      if (report.offset !== undefined) drift = report.offset;
    } else if (outcome.kind === "already-applied") {
      reports.push(outcome.report);
    } else {
      const line = outcome.line;
      conflicts.push(failed(number, line, outcome.reason));
      reports.push({ hunk: number, status: "conflict", line, message: outcome.reason });
    }
  });

  const carriesCr = patch.hunks.some((hunk) => hunk.lines.some((line) => line.text.endsWith("\r")));
  const text = assemble(lines, placements, { newline, bom, source, carriesCr });
  if (patch.operation === "delete" && conflicts.length === 0) {
    if (text !== "" && text !== bom) {
      const line = 1;
      const reason =
        "the diff deletes the file, but the file holds more than the diff removes; read it and send a diff of its whole content";
      return {
        text,
        hunks: reports.map((report) => ({ ...report, status: "conflict", message: reason })),
        conflicts: [failed(1, line, reason)],
      };
    }
    return { text: null, hunks: reports, conflicts };
  }
  return { text, hunks: reports, conflicts };
}

/** Strip a byte order mark a diff of a BOM file carries at the start of its first line. */
function bomFree(lines: readonly HunkLine[]): HunkLine[] {
  return lines.map((line) =>
    line.text.startsWith(BYTE_ORDER_MARK) ? { ...line, text: line.text.slice(1) } : line,
  );
}

function createOverExisting(
  original: string,
  patch: FilePatch,
  failed: (number: number, line: number, reason: string) => string,
): ApplyFilePatchResult {
  const created = applyFilePatch(undefined, patch);
  const same =
    created.text !== null &&
    normalizeLine(created.text.replace(/\r\n/g, "\n"), "trailing-whitespace") ===
      normalizeLine(original.replace(/\r\n/g, "\n"), "trailing-whitespace");
  if (same) {
    return {
      text: original,
      hunks: patch.hunks.map((_, index) => ({
        hunk: index + 1,
        status: "already-applied",
        line: 1,
      })),
      conflicts: [],
    };
  }
  const reason =
    "the diff creates this file (--- /dev/null), but it exists already with other content; send a diff against its current content, or replace it with write_file";
  return {
    text: original,
    hunks: patch.hunks.map((_, index) => ({
      hunk: index + 1,
      status: "conflict",
      line: 1,
      message: reason,
    })),
    conflicts: [failed(1, 1, reason)],
  };
}

function splitSource(text: string): SourceLine[] {
  const parts = text.split("\n");
  const last = parts.pop() ?? "";
  const lines: SourceLine[] = parts.map((part) => ({ text: part, newline: true }));
  if (last !== "") lines.push({ text: last, newline: false });
  return lines;
}

/** `\r\n` when most of the text's line breaks are, else `\n`. */
function dominantNewline(lines: readonly SourceLine[]): string {
  let crlf = 0;
  let lf = 0;
  for (const line of lines) {
    if (!line.newline) continue;
    if (line.text.endsWith("\r")) crlf += 1;
    else lf += 1;
  }
  return crlf > lf ? "\r\n" : "\n";
}

type HunkOutcome =
  | { kind: "placed"; placement: Placement; report: HunkReport }
  | { kind: "already-applied"; report: HunkReport }
  | { kind: "conflict"; line: number; reason: string };

const oldSide = (lines: readonly HunkLine[]) =>
  lines.filter((line) => line.kind !== "add").map((line) => line.text);
const newSide = (lines: readonly HunkLine[]) =>
  lines.filter((line) => line.kind !== "remove").map((line) => line.text);

function placeHunk(
  table: LineTable,
  hunk: Hunk,
  number: number,
  drift: number,
  placed: readonly Placement[],
  hunkLines: HunkLine[],
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
  const placement = (lines: HunkLine[], start: number, tolerance: Tolerance): Placement => {
    const [coreStart, coreEnd] = coreRange(lines, start);
    return {
      number,
      lines,
      start,
      tolerance,
      shift: undefined,
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

  const full = locateLines(table, before, { hint, accept: overlaps(hunkLines) });
  if (full.status === "ambiguous") return ambiguous(full.starts, shownLine);
  if (full.status === "unique") {
    const already = appliedAt(table, hunkLines, full.start, full.tolerance);
    if (already !== undefined) {
      return {
        kind: "already-applied",
        report: { hunk: number, status: "already-applied", line: already + 1 },
      };
    }
    return finish(placement(hunkLines, full.start, full.tolerance), report(full.start, 0, full));
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
      return ambiguous(
        [...found.values()].map((candidate) => candidate.start - candidate.dropped),
        shownLine,
      );
    }
    const [candidate] = found.values();
    if (candidate !== undefined) {
      const tolerance =
        candidate.location.status === "unique" ? candidate.location.tolerance : "exact";
      const result = report(candidate.start, candidate.dropped, candidate.location);
      result.contextDropped = total;
      return finish(placement(candidate.lines, candidate.start, tolerance), result);
    }
  }

  const after = locateLines(table, newSide(hunkLines));
  if (after.status !== "none") {
    const line = (after.status === "unique" ? after.start : (after.starts[0] ?? 0)) + 1;
    return { kind: "already-applied", report: { hunk: number, status: "already-applied", line } };
  }
  return { kind: "conflict", line: shownLine, reason: notFound(table, before) };

  function finish(found: Placement, result: HunkReport): HunkOutcome {
    if (found.tolerance === "indentation") {
      const shift = indentShifts(table, found);
      if (shift === undefined) {
        return {
          kind: "conflict",
          line: found.start + 1,
          reason: `the old lines match lines ${found.start + 1}-${found.start + oldSide(found.lines).length} only if indentation is ignored, and their indentation differs from the diff's unevenly, so the added lines' indentation is unclear; send the diff with the file's indentation`,
        };
      }
      found.shift = shift;
    }
    return { kind: "placed", placement: found, report: result };
  }
}

function ambiguous(starts: readonly number[], shownLine: number): HunkOutcome {
  const lines = [...new Set(starts)].sort((left, right) => left - right).map((start) => start + 1);
  const listed =
    lines.length <= 2
      ? lines.join(" and ")
      : `${lines.slice(0, 5).join(", ")}${lines.length > 5 ? ` and ${lines.length - 5} more` : ""}`;
  return {
    kind: "conflict",
    line: shownLine,
    reason: `the hunk's old lines match at lines ${listed} and its @@ line number does not single one out; add context lines that occur only at the place you mean, or correct the @@ line number`,
  };
}

function notFound(table: LineTable, before: readonly string[]): string {
  const text = table.lines.join("\n");
  const region = findClosestRegion(text, before.join("\n"), { maxComparisons: 20_000 });
  if (region === undefined) {
    return "the hunk's old lines are not in the file; read the file and send a diff of its current content";
  }
  const span =
    region.startLine === region.endLine
      ? `line ${region.startLine}`
      : `lines ${region.startLine}-${region.endLine}`;
  const difference = region.firstDifference;
  const detail =
    difference === undefined
      ? ""
      : `, where line ${difference.line} reads ${JSON.stringify(difference.inText.slice(0, 120))} and the diff has ${JSON.stringify(difference.inNeedle.slice(0, 120))}`;
  return `the hunk's old lines are not in the file; the closest region is ${span}${detail}. Read those lines and send a diff of the current content`;
}

/**
 * The 0-based line where the hunk's new text already stands around its old text found at `start`.
 * Only a hunk that only adds lines can be both found and applied already: its old lines are all
 * still there once it is applied.
 */
function appliedAt(
  table: LineTable,
  lines: readonly HunkLine[],
  start: number,
  tolerance: Tolerance,
): number | undefined {
  if (lines.some((line) => line.kind === "remove")) return undefined;
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

function leadingContext(lines: readonly HunkLine[]): number {
  let count = 0;
  while (lines[count]?.kind === "context") count += 1;
  return count;
}

/** The original lines [start, end) the hunk's changed lines cover (empty for a pure insertion). */
function coreRange(lines: readonly HunkLine[], start: number): [number, number] {
  const first = lines.findIndex((line) => line.kind !== "context");
  let last = lines.length - 1;
  while (last >= 0 && lines[last]?.kind === "context") last -= 1;
  const oldBefore = oldSide(lines.slice(0, Math.max(first, 0))).length;
  const oldWithin = oldSide(lines.slice(Math.max(first, 0), last + 1)).length;
  return [start + oldBefore, start + oldBefore + oldWithin];
}

function rangesOverlap(start: number, end: number, otherStart: number, otherEnd: number): boolean {
  if (start === end && otherStart === otherEnd) return start === otherStart;
  if (start === end) return otherStart < start && start < otherEnd;
  if (otherStart === otherEnd) return start < otherStart && otherStart < end;
  return start < otherEnd && otherStart < end;
}

/** For each added line, the indentation change its neighbours show, or `undefined` if unclear. */
function indentShifts(table: LineTable, found: Placement): IndentShift[] | undefined {
  const shifts: IndentShift[] = [];
  let fileLine = found.start;
  const pairs: Array<IndentShift | undefined> = found.lines.map((line) => {
    if (line.kind === "add") return undefined;
    const shift = indentShift(line.text, table.lines[fileLine] ?? "");
    fileLine += 1;
    return shift;
  });
  for (let index = 0; index < found.lines.length; index += 1) {
    if (found.lines[index]?.kind !== "add") continue;
    const neighbours = new Map<string, IndentShift>();
    for (const step of [-1, 1]) {
      for (let other = index + step; other >= 0 && other < found.lines.length; other += step) {
        const shift = pairs[other];
        if (found.lines[other]?.kind === "add" || shift === undefined) continue;
        neighbours.set(`${shift.from}\u0000${shift.to}`, shift);
        break;
      }
    }
    if (neighbours.size > 1) return undefined;
    const shift = [...neighbours.values()][0] ?? { from: "", to: "" };
    if (!canReindent(found.lines[index]?.text ?? "", shift)) return undefined;
    shifts.push(shift);
  }
  return shifts;
}

interface AssembleOptions {
  newline: string;
  bom: string;
  source: string;
  carriesCr: boolean;
}

function assemble(
  original: readonly SourceLine[],
  placements: readonly Placement[],
  { newline, bom, source, carriesCr }: AssembleOptions,
): string {
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
        let text = line.text;
        const shift = placement.shift?.[added];
        added += 1;
        if (shift !== undefined) text = reindentLine(text, shift);
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
  return bom + pieces.join("");
}
