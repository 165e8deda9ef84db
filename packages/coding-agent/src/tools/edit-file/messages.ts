import type { EditHunkMatch } from "../diff/edit-hunk.js";
import type { HunkReport } from "../diff/hunk-report.js";
import { TOLERANCE_PHRASES } from "../diff/locate.js";
import { placementNotes } from "../diff/placement-notes.js";
import type { ClosestRegion } from "../shared/closest-region.js";
import { formatNumberedLines } from "../shared/line-numbers.js";
import { lineSpan } from "../shared/line-span.js";
import { detectLineEnding, type LineEnding } from "../shared/text-format.js";

/** Why an `old` found `count` times (starting at `lines`) was refused, and how to single one out. */
export function describeAmbiguous(path: string, count: number, lines: readonly number[]): string {
  const distinct = [...new Set(lines)];
  const shown = distinct.slice(0, 20).join(", ");
  const more = distinct.length > 20 ? ` and ${distinct.length - 20} more lines` : "";
  const times = count >= 1_000 ? "1,000 or more times" : `${count} times`;
  return `\`old\` occurs ${times} in ${path}, starting at lines ${shown}${more}; it must occur exactly once. Add surrounding lines to \`old\` (from just before or after the place you mean) so that it matches only there.`;
}

const ENDING_NAMES: Record<LineEnding, string> = {
  lf: "LF (\\n)",
  crlf: "CRLF (\\r\\n)",
  mixed: "a mix of LF and CRLF",
  none: "no line breaks",
};

/** Why an `old` not found in `text` was refused: the closest `region`, quoted, and what to do. */
export function describeNoMatch(
  path: string,
  old: string,
  text: string,
  region: ClosestRegion | undefined,
  maxQuotedLines: number,
): string {
  const heading = `\`old\` was not found in ${path}.`;
  if (region === undefined) {
    return `${heading} Nothing in the file resembles it. Read the file with read_file and copy the text to replace exactly.`;
  }
  const lines = lineSpan(region.startLine, region.endLine);
  const quoted = quoteRegion(region, maxQuotedLines);
  switch (region.difference) {
    case "line-endings":
      return [
        `${heading} It matches ${lines} except for line endings: the file uses ${ENDING_NAMES[detectLineEnding(text)]}, \`old\` uses ${ENDING_NAMES[detectLineEnding(old)]}.`,
        quoted,
        "Send `old` (and `new`) with the file's line endings; the edit is not applied with different ones.",
      ].join("\n");
    case "whitespace":
      return [
        `${heading} It differs from ${lines} only in whitespace (indentation, spaces, tabs or line breaks):`,
        quoted,
        "Copy those lines exactly, with their whitespace, into `old`.",
      ].join("\n");
    case "similar": {
      const parts = [
        `${heading} The closest region is ${lines} (${Math.round(region.similarity * 100)}% similar):`,
        quoted,
      ];
      const difference = region.firstDifference;
      if (difference !== undefined) {
        parts.push(
          `First difference, line ${difference.line}:`,
          `  file: ${JSON.stringify(difference.inText.slice(0, 200))}`,
          `  old:  ${JSON.stringify(difference.inNeedle.slice(0, 200))}`,
        );
      }
      parts.push(
        `Read the file (read_file with offset ${region.startLine}) and copy the text to replace exactly.`,
      );
      return parts.join("\n");
    }
  }
}

/**
 * The line telling the model what placing `old` with tolerances found, or "" when nothing: with
 * `tolerant` off (`off`), where it would land; that it looks applied already.
 */
export function describeTolerantMatch(match: EditHunkMatch, off: boolean): string {
  if (match.status === "already-applied") {
    return `\`new\` already stands at line ${match.line}: the edit may be applied already; read the file to check.`;
  }
  if (match.status === "placed") {
    if (!off) return "";
    const { report, startLine, endLine } = match;
    const notes = placementNotes(report, { source: "`old`" }).join("; ");
    const how = onlyTolerance(report)
      ? TOLERANCE_PHRASES[report.tolerance ?? "exact"]
      : `with tolerances (${notes})`;
    return `It matches ${lineSpan(startLine, endLine)} uniquely ${how}: copy those lines exactly, or pass \`tolerant: true\` to replace them.`;
  }
  if (match.status === "ambiguous") {
    return `Even with tolerances, it matches several places (starting at lines ${match.lines.slice(0, 10).join(", ")}).`;
  }
  return "";
}

/** Whether `report` placed by a comparison alone (whitespace, line endings), without slips. */
export function onlyTolerance(report: HunkReport): boolean {
  const { tolerance } = report;
  return tolerance !== undefined && tolerance !== "exact" && placementNotes(report).length === 1;
}

function quoteRegion(region: ClosestRegion, maxQuotedLines: number): string {
  const shown = formatNumberedLines(region.lines.slice(0, maxQuotedLines), region.startLine);
  const rest = region.lines.length - maxQuotedLines;
  return rest > 0 ? `${shown}\n… (${rest} more lines)` : shown;
}
