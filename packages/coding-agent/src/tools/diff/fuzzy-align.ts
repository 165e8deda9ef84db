import { type LineTable, normalizeLine, TOLERANCES, type Tolerance } from "./locate.js";
import type { HunkLine } from "./parse.js";

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
  /** Context lines of the diff the file does not have (remembered from an older version): left out. */
  unmatchedContext: string[];
  /** 0-based lines of the file that hold a change of the hunk already (its added lines): kept. */
  appliedLines: number[];
  /** The loosest tolerance the lines that do match needed. */
  tolerance: Tolerance;
}

/** The loosest comparison of lines that count as matching: no indentation. */
export const MATCHING: readonly Tolerance[] = TOLERANCES.slice(
  0,
  TOLERANCES.indexOf("indentation"),
);

/** One step of lining a hunk's old lines up with the file. */
export interface Step {
  /** The index among the hunk's old lines, or -1 for a file line the diff left out. */
  old: number;
  /** The file line it lines up with; -1 for a context line of the diff the file does not have. */
  fileLine: number;
  similar: boolean;
  /** A removed line of a change whose added lines the file holds already (changed since). */
  applied?: boolean;
}

/** The alignment `steps` describe: the file lines the diff left out become context lines. */
export function align(
  table: LineTable,
  hunkLines: readonly HunkLine[],
  old: readonly string[],
  start: number,
  steps: readonly Step[],
  region: boolean,
): FuzzyAlignment {
  const lines: HunkLine[] = [];
  const similarLines: number[] = [];
  const missingLines: number[] = [];
  const blankLinesRemoved: number[] = [];
  const unmatchedContext: string[] = [];
  const appliedLines: number[] = [];
  let tolerance = 0;
  let oldIndex = 0;
  let step = 0;
  // The file line holding the next added line of a change the file holds already, if in one.
  let appliedAt: number | undefined;
  for (const line of hunkLines) {
    if (line.kind === "add") {
      const next = steps[step];
      // Added lines the file holds already where they go: the file's lines are kept instead.
      if (next?.applied && next.old === -1) continue;
      if (appliedAt === undefined) lines.push(line);
      else {
        appliedLines.push(appliedAt);
        lines.push({ kind: "context", text: table.lines[appliedAt] ?? "", noNewlineAtEnd: false });
        appliedAt += 1;
      }
      continue;
    }
    // A line the diff left out goes right before the old line that follows it (see mayMissBefore);
    // a blank one amid removed lines goes with them (a model drops blank lines inside a block).
    const removing =
      region &&
      line.kind === "remove" &&
      lines.findLast((kept) => kept.kind !== "add")?.kind === "remove";
    while (steps[step]?.old === -1) {
      const fileLine = steps[step]?.fileLine ?? 0;
      const text = table.lines[fileLine] ?? "";
      if (steps[step]?.applied) {
        appliedLines.push(fileLine);
        lines.push({ kind: "context", text, noNewlineAtEnd: false });
        step += 1;
        continue;
      }
      const blank = removing && text.trim() === "";
      (blank ? blankLinesRemoved : missingLines).push(fileLine);
      lines.push({ kind: blank ? "remove" : "context", text, noNewlineAtEnd: false });
      step += 1;
    }
    const current = steps[step];
    step += 1;
    if (current?.applied) {
      if (current.fileLine >= 0) appliedAt = current.fileLine;
      oldIndex += 1;
      continue;
    }
    appliedAt = undefined;
    if (current !== undefined && current.fileLine < 0) {
      unmatchedContext.push(line.text);
      oldIndex += 1;
      continue;
    }
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
    unmatchedContext,
    appliedLines,
    tolerance: MATCHING[tolerance] ?? "exact",
  };
}
