import { BYTE_ORDER_MARK } from "../shared/text-format.js";
import { assemble, dominantNewline, splitSource } from "./assemble.js";
import type { HunkReport, Placement } from "./hunk-report.js";
import { diffTabWidth } from "./indent-style.js";
import { intentViolation } from "./intent.js";
import { LineTable, normalizeLine } from "./locate.js";
import type { FilePatch, HunkLine } from "./parse.js";
import { placeHunk } from "./place-hunk.js";

export type { HunkReport } from "./hunk-report.js";

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
  /**
   * The patch is a search/replace edit read as a hunk, which replaces its whole region (see
   * `LocateFuzzyOptions.region`).
   * @default false
   */
  region?: boolean;
}

/**
 * Apply one file's hunks to `original` (`undefined` when the file does not exist). Pure: no I/O.
 * Each hunk is located by its old text (see {@link placeHunk}), the `@@` line number serving only
 * to choose among several matches; failing that, outer context lines are dropped one at a time
 * (never the changed lines' immediate neighbours). A hunk whose new text is there and old text is
 * not is reported `already-applied`. Every line outside the changed lines keeps its own bytes; added
 * lines take the file's line ending; the byte order mark and the final newline stay as they were
 * unless a `\ No newline at end of file` marker changes the last line.
 */
export function applyFilePatch(
  original: string | undefined,
  patch: FilePatch,
  { label, region = false }: ApplyFilePatchOptions = {},
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
  const hunkLines = patch.hunks.map((hunk) => bomFree(hunk.lines));
  const tabWidth = diffTabWidth(table.lines, hunkLines);
  patch.hunks.forEach((hunk, index) => {
    const number = index + 1;
    const outcome = placeHunk(table, hunk, number, drift, placements, hunkLines[index] ?? [], {
      tabWidth,
      region,
      finalNewline: lines.at(-1)?.newline !== false,
    });
    if (outcome.kind === "placed") {
      const { placement, report } = outcome;
      placements.push(placement);
      reports.push(report);
      if (report.offset !== undefined) drift = report.offset;
    } else if (outcome.kind === "already-applied") {
      reports.push(outcome.report);
      if (outcome.drift !== undefined) drift = outcome.drift;
    } else {
      const line = outcome.line;
      conflicts.push(failed(number, line, outcome.reason));
      reports.push({ hunk: number, status: "conflict", line, message: outcome.reason });
    }
  });

  const carriesCr = patch.hunks.some((hunk) => hunk.lines.some((line) => line.text.endsWith("\r")));
  const options = { newline, bom, source, carriesCr };
  let assembled = assemble(lines, placements, options);
  // A hunk whose result is not what the diff says becomes a conflict, and the rest is put together
  // again without it.
  const wrong = placements.filter((placement) => {
    const start = assembled.coreStarts.get(placement) ?? 0;
    const violation = intentViolation(lines, assembled.lines, placement, start);
    if (violation === undefined) return false;
    const line = placement.start + 1;
    const reason = `placed at line ${line}, ${violation}; nothing was applied there. Read the lines around ${line} and send the hunk with their exact text and indentation`;
    conflicts.push(failed(placement.number, line, reason));
    const index = reports.findIndex((report) => report.hunk === placement.number);
    reports[index] = { hunk: placement.number, status: "conflict", line, message: reason };
    return true;
  });
  if (wrong.length > 0) {
    assembled = assemble(
      lines,
      placements.filter((placement) => !wrong.includes(placement)),
      options,
    );
  }
  const text = assembled.text;
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
