import type { HunkReport } from "./hunk-report.js";

const TOLERANCE_WORDS: Record<string, string> = {
  "line-endings": "line endings ignored",
  "trailing-whitespace": "whitespace at line ends ignored",
  "unicode-punctuation": "Unicode quotes/dashes/spaces read as ASCII",
  indentation: "indentation ignored, added lines re-indented",
};

function lineList(lines: readonly number[]): string {
  return `${lines.length === 1 ? "line" : "lines"} ${lines.join(", ")}`;
}

/**
 * What was tolerated to place a hunk (or an edit read as one, `source` naming it: "\`old\`"), one
 * phrase each, for the model:
 * the offset from its `@@` line, the tolerance, outer context left out and the slips taken. Empty
 * when it matched exactly where it said.
 */
export function placementNotes(
  report: HunkReport,
  { source = "the diff" }: { source?: string } = {},
): string[] {
  const details: string[] = [];
  if (report.offset !== undefined && report.offset !== 0) {
    details.push(`offset ${report.offset > 0 ? "+" : ""}${report.offset} lines`);
  }
  if (report.tolerance !== undefined && report.tolerance !== "exact") {
    details.push(TOLERANCE_WORDS[report.tolerance] ?? report.tolerance);
  }
  if (report.contextDropped !== undefined) {
    details.push(`${report.contextDropped} outer context line(s) not matched`);
  }
  if (report.similarLines !== undefined) {
    details.push(
      `${lineList(report.similarLines)} ${report.similarLines.length === 1 ? "differs" : "differ"} by a small edit from ${source}'s, taken as meant`,
    );
  }
  if (report.missingLines !== undefined) {
    const verb = report.missingLines.length === 1 ? "is" : "are";
    details.push(`${lineList(report.missingLines)} ${verb} missing from ${source}'s context, kept`);
  }
  if (report.unmatchedContext !== undefined) {
    details.push(
      `${report.unmatchedContext} context line(s) of ${source} not in the file (an older version?), left out`,
    );
  }
  if (report.appliedLines !== undefined) {
    details.push(`${lineList(report.appliedLines)} already read as ${source} changes them, kept`);
  }
  if (report.blankLinesRemoved !== undefined) {
    details.push(
      `blank ${lineList(report.blankLinesRemoved)} between removed lines, missing from ${source}, removed with them`,
    );
  }
  if (report.chosenByHint) details.push("chosen among several matches by its line number");
  return details;
}
