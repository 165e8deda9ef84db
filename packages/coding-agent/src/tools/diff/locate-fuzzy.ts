import {
  chooseByHint,
  type LineTable,
  normalizeLine,
  TOLERANCES,
  type Tolerance,
} from "./locate.js";
import type { HunkLine } from "./parse.js";
import { isSmallEdit } from "./small-edit.js";

/** How a hunk's old lines line up with the file when some differ by a slip. */
export interface FuzzyAlignment {
  /** 0-based line of the file where the hunk's first old line sits. */
  start: number;
  /** The hunk's lines, with the file lines the diff left out put in as context lines. */
  lines: HunkLine[];
  /** 0-based lines of the file that differ from the diff's line by a small edit. */
  similarLines: number[];
  /** 0-based lines of the file that the diff's context left out. */
  missingLines: number[];
  /** 0-based blank lines of the file the diff left out between two of its removed lines: removed. */
  blankLinesRemoved: number[];
  /** The loosest tolerance the lines that do match needed. */
  tolerance: Tolerance;
}

/** Where {@link locateFuzzy} lined a hunk up. */
export type FuzzyLocation =
  | { status: "unique"; alignment: FuzzyAlignment; chosenByHint: boolean }
  | { status: "ambiguous"; starts: number[] }
  | { status: "none" };

/** Options of {@link locateFuzzy}. */
export interface LocateFuzzyOptions {
  /** The 0-based line the hunk's old lines are expected to start at, to choose among matches. */
  hint: number | undefined;
  /** Alignments this returns false for are left out (they overlap a hunk placed before). */
  accept: (lines: HunkLine[], start: number) => boolean;
  /**
   * Let a file line be missing where lines are added before a context line too, where it is
   * unclear whether it goes before or after them: to tell where a hunk may be, not to apply it.
   * @default false
   */
  anyGap?: boolean;
}

/** Lines of a hunk that may differ from the file's by a small edit, at most. */
const MAX_SIMILAR = 3;
/** File lines the diff's context may leave out, per hunk. */
const MAX_MISSING = 2;
/** A line occurring more often than this anchors nothing. */
const MAX_ANCHOR_POSITIONS = 64;
/** Line comparisons one hunk may spend; past them it is not found (a conflict, never a guess). */
const MAX_COMPARISONS = 200_000;
/** The loosest comparison of lines that count as matching: no indentation. */
const MATCHING: readonly Tolerance[] = TOLERANCES.slice(0, TOLERANCES.indexOf("indentation"));
const LOOSEST = MATCHING.at(-1) ?? "exact";

interface Step {
  /** The index among the hunk's old lines, or -1 for a file line the diff left out. */
  old: number;
  fileLine: number;
  similar: boolean;
}

/**
 * Line a hunk's old lines (`hunkLines` without the added ones) up with the file when no
 * tolerance finds them: a line may differ from the file's by a small edit (see
 * {@link isSmallEdit}), and up to {@link MAX_MISSING} file lines between two of the hunk's old
 * lines may be missing from the diff, when no line is added between the two or the second is
 * removed. At most a third of the old lines may differ ({@link MAX_SIMILAR} at most), at least half
 * must match and one of those must be more than punctuation. Every way of lining the hunk up
 * within these bounds is found; only one may remain (or the hint single one out), else the hunk
 * is ambiguous.
 */
export function locateFuzzy(
  table: LineTable,
  hunkLines: readonly HunkLine[],
  { hint, accept, anyGap = false }: LocateFuzzyOptions,
): FuzzyLocation {
  const old = hunkLines.filter((line) => line.kind !== "add").map((line) => line.text);
  if (old.length < 2) return { status: "none" };
  // Whether a file line may be missing before old line i: not when lines are added between old
  // line i - 1 and it (the missing line could stand before or after them), unless old line i is
  // removed. A diff lists a change's removed lines before its added ones, so lines added just
  // before a removed line belong to the change before the missing line.
  const mayMissBefore: boolean[] = [];
  let adding = false;
  for (const line of hunkLines) {
    if (line.kind === "add") adding = true;
    else {
      mayMissBefore.push(anyGap || !adding || line.kind === "remove");
      adding = false;
    }
  }
  const keys = table.keys(LOOSEST);
  const wanted = old.map((line) => normalizeLine(line, LOOSEST));
  const maxSimilar = Math.min(MAX_SIMILAR, Math.max(1, Math.floor(old.length / 3)));
  const minMatching = Math.ceil(old.length / 2);

  const starts = new Set<number>();
  wanted.forEach((line, index) => {
    if (line.trim().length < 3) return;
    const positions = table.findAll([old[index] ?? ""], LOOSEST);
    if (positions.length > MAX_ANCHOR_POSITIONS) return;
    for (const position of positions) {
      for (let missing = 0; missing <= MAX_MISSING; missing += 1) {
        const start = position - index - missing;
        if (start >= 0) starts.add(start);
      }
    }
  });

  const found = new Map<string, FuzzyAlignment>();
  let comparisons = 0;
  for (const start of starts) {
    const steps: Step[] = [];
    const walk = (index: number, fileLine: number, similar: number, missing: number) => {
      comparisons += 1;
      if (comparisons > MAX_COMPARISONS) return;
      if (index === old.length) {
        if (similar + missing === 0) return;
        const matching = steps.filter((step) => step.old >= 0 && !step.similar);
        const telling = matching.some((step) => (wanted[step.old] ?? "").trim().length >= 3);
        if (matching.length < minMatching || !telling) return;
        const alignment = align(table, hunkLines, old, start, steps);
        if (!accept(alignment.lines, start)) return;
        // Alignments that remove and add the same lines at the same places are one; the one
        // with the fewest slips tells about them.
        const key = effect(alignment);
        const known = found.get(key);
        if (known === undefined || slips(alignment) < slips(known)) found.set(key, alignment);
        return;
      }
      const fileKey = keys[fileLine];
      if (fileKey === undefined) return;
      if (fileKey === wanted[index]) {
        steps.push({ old: index, fileLine, similar: false });
        walk(index + 1, fileLine + 1, similar, missing);
        steps.pop();
      } else if (
        similar < maxSimilar &&
        isSmallEdit(old[index] ?? "", table.lines[fileLine] ?? "")
      ) {
        steps.push({ old: index, fileLine, similar: true });
        walk(index + 1, fileLine + 1, similar + 1, missing);
        steps.pop();
      }
      if (index > 0 && missing < MAX_MISSING && mayMissBefore[index]) {
        steps.push({ old: -1, fileLine, similar: false });
        walk(index, fileLine + 1, similar, missing + 1);
        steps.pop();
      }
    };
    walk(0, start, 0, 0);
  }

  if (comparisons > MAX_COMPARISONS) return { status: "none" };
  const alignments = [...found.values()];
  const [only] = alignments;
  if (only === undefined) return { status: "none" };
  if (alignments.length === 1) return { status: "unique", alignment: only, chosenByHint: false };
  const distinct = [...new Set(alignments.map((alignment) => alignment.start))];
  const chosen = chooseByHint(distinct, hint);
  const atChosen = alignments.filter((alignment) => alignment.start === chosen);
  const [picked] = atChosen;
  if (picked !== undefined && atChosen.length === 1) {
    return { status: "unique", alignment: picked, chosenByHint: true };
  }
  return { status: "ambiguous", starts: distinct };
}

const slips = (alignment: FuzzyAlignment) =>
  alignment.similarLines.length +
  alignment.missingLines.length +
  alignment.blankLinesRemoved.length;

/** What an alignment does to the file: the lines it removes and the lines it adds where. */
function effect({ start, lines }: FuzzyAlignment): string {
  const parts: string[] = [];
  let fileLine = start;
  for (const line of lines) {
    if (line.kind === "add") parts.push(`+${fileLine}:${line.text}`);
    else {
      if (line.kind === "remove") parts.push(`-${fileLine}`);
      fileLine += 1;
    }
  }
  return parts.join("\u0000");
}

/** The alignment `steps` describe: the file lines the diff left out become context lines. */
function align(
  table: LineTable,
  hunkLines: readonly HunkLine[],
  old: readonly string[],
  start: number,
  steps: readonly Step[],
): FuzzyAlignment {
  const lines: HunkLine[] = [];
  const similarLines: number[] = [];
  const missingLines: number[] = [];
  const blankLinesRemoved: number[] = [];
  let tolerance = 0;
  let oldIndex = 0;
  let step = 0;
  for (const line of hunkLines) {
    if (line.kind === "add") {
      lines.push(line);
      continue;
    }
    // A line the diff left out goes right before the old line that follows it (see mayMissBefore);
    // a blank one amid removed lines goes with them (a model drops blank lines inside a block).
    const removing =
      line.kind === "remove" && lines.findLast((kept) => kept.kind !== "add")?.kind === "remove";
    while (steps[step]?.old === -1) {
      const fileLine = steps[step]?.fileLine ?? 0;
      const text = table.lines[fileLine] ?? "";
      const blank = removing && text.trim() === "";
      (blank ? blankLinesRemoved : missingLines).push(fileLine);
      lines.push({ kind: blank ? "remove" : "context", text, noNewlineAtEnd: false });
      step += 1;
    }
    const current = steps[step];
    step += 1;
    if (current?.similar) {
      similarLines.push(current.fileLine);
    } else if (current !== undefined) {
      const fileText = table.lines[current.fileLine] ?? "";
      const needed = MATCHING.findIndex(
        (level) => normalizeLine(old[oldIndex] ?? "", level) === normalizeLine(fileText, level),
      );
      tolerance = Math.max(tolerance, needed);
    }
    lines.push(line);
    oldIndex += 1;
  }
  return {
    start,
    lines,
    similarLines,
    missingLines,
    blankLinesRemoved,
    tolerance: MATCHING[tolerance] ?? "exact",
  };
}
