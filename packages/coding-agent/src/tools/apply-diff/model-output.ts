import { placementNotes } from "../diff/placement-notes.js";
import { syntaxErrorNotes } from "../syntax/syntax-check.js";
import type { ApplyDiffHunkReport, ApplyDiffOutput } from "./schema.js";

/**
 * The text the model reads for an `apply_diff` result: how many hunks applied, each conflict
 * line and what to do about it; for the pleach engine also where hunks landed when not exactly
 * where their `@@` lines said, and how loosely they were matched.
 */
export function applyDiffModelOutput(output: ApplyDiffOutput): { output: string; error: boolean } {
  const result = output.hunks !== undefined ? engineModelOutput(output) : patchModelOutput(output);
  const notes = syntaxErrorNotes("The diff", output.syntaxErrors, output.syntaxCheckUnavailable);
  return notes.length === 0 ? result : { ...result, output: [result.output, ...notes].join("\n") };
}

function patchModelOutput(output: ApplyDiffOutput): { output: string; error: boolean } {
  // The patch engine reports only counts and `patch`'s own conflict lines.
  const { hunksApplied, conflicts } = output;
  const applied = `applied ${hunksApplied} hunk(s)`;
  if (conflicts.length === 0) return { output: applied, error: false };
  const hint = conflicts.some((line) => line.includes("previously applied"))
    ? "The diff looks already applied, so it was skipped. Read the file to check."
    : "Hunks that failed were not applied; the others were. Read the file again and send a " +
      "fresh diff for the failed hunks only, or use edit_file.";
  return {
    output: `${applied}; ${conflicts.length} conflict(s):\n${conflicts.join("\n")}\n${hint}`,
    error: true,
  };
}

function engineModelOutput(output: ApplyDiffOutput): { output: string; error: boolean } {
  const { hunksApplied, conflicts, hunks = [], files = [] } = output;
  const several = files.length > 1;
  const name = (report: ApplyDiffHunkReport) =>
    several ? `${report.file} hunk #${report.hunk}` : `Hunk #${report.hunk}`;
  const notes: string[] = [];
  for (const report of hunks) {
    if (report.status === "already-applied") {
      notes.push(`${name(report)} is already applied (at line ${report.line ?? "?"}); left as is.`);
      continue;
    }
    if (report.status !== "applied" && report.status !== "skipped") continue;
    const details = placementNotes(report);
    if (details.length > 0) {
      const verb = report.status === "applied" ? "applied" : "would apply";
      notes.push(`${name(report)} ${verb} at line ${report.line ?? "?"} (${details.join("; ")}).`);
    }
  }
  const changed = files.filter((file) => file.action !== "unchanged");
  const fileList = changed.map((file) => `${file.action} ${file.path}`).join(", ");
  const applied = `applied ${hunksApplied} hunk(s)${several && changed.length > 0 ? ` (${fileList})` : ""}`;
  if (conflicts.length === 0) {
    return { output: [applied, ...notes].join("\n"), error: false };
  }
  const written = hunksApplied > 0;
  const hint = written
    ? "The hunks that failed were not applied; the others were (partial). Read the file again and send a diff for the failed hunks only, or use edit_file."
    : "Nothing was written: apply_diff applies every hunk or none. Read the file again, fix the failed hunks and send the whole diff again (or pass partial: true to apply the others), or use edit_file.";
  return {
    output: `${applied}; ${conflicts.length} conflict(s):\n${conflicts.join("\n")}\n${[...notes, hint].join("\n")}`,
    error: true,
  };
}
