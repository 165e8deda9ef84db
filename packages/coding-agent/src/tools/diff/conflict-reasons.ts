import { findClosestRegion } from "../shared/closest-region.js";
import { lineSpan } from "../shared/line-span.js";
import type { LineTable } from "./locate.js";

/** Why a hunk whose old lines match at several 0-based `starts` was not applied. */
export function ambiguousReason(starts: readonly number[]): string {
  const lines = [...new Set(starts)].sort((left, right) => left - right).map((start) => start + 1);
  const listed =
    lines.length <= 2
      ? lines.join(" and ")
      : `${lines.slice(0, 5).join(", ")}${lines.length > 5 ? ` and ${lines.length - 5} more` : ""}`;
  return `the hunk's old lines match at lines ${listed} and its @@ line number does not single one out; add context lines that occur only at the place you mean, or correct the @@ line number`;
}

/** Why a hunk whose old lines (`before`) are nowhere in the file was not applied: the closest region. */
export function notFoundReason(table: LineTable, before: readonly string[]): string {
  const text = table.lines.join("\n");
  const region = findClosestRegion(text, before.join("\n"), { maxComparisons: 20_000 });
  if (region === undefined) {
    return "the hunk's old lines are not in the file; read the file and send a diff of its current content";
  }
  const span = lineSpan(region.startLine, region.endLine);
  const difference = region.firstDifference;
  const detail =
    difference === undefined
      ? ""
      : `, where line ${difference.line} reads ${JSON.stringify(difference.inText.slice(0, 120))} and the diff has ${JSON.stringify(difference.inNeedle.slice(0, 120))}`;
  return `the hunk's old lines are not in the file; the closest region is ${span}${detail}. Read those lines and send a diff of the current content`;
}
