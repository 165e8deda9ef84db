import { changedSpan } from "../syntax/syntax-errors.js";
import type { TypeDiagnostic } from "./language-server.js";

/** The errors a change made and the ones it removed. */
export interface DiagnosticChange {
  /** Errors after the change that were not there before, by line. */
  introduced: TypeDiagnostic[];
  /** Errors before the change that are gone after it, by their line before. */
  fixed: TypeDiagnostic[];
  /** Errors there before and still there after. */
  kept: number;
}

/**
 * Tell the errors a change made from those already there. An error after the change is the same
 * as one before when both have the same code and message and sit on a line with the same text
 * (the lines around an edit move, their text does not), or, failing that, when both sit in the
 * lines the change replaced (an edited line that still has its error). The rest after the change
 * are introduced; the rest before it are fixed.
 */
export function compareDiagnostics(
  before: { text: string; diagnostics: readonly TypeDiagnostic[] },
  after: { text: string; diagnostics: readonly TypeDiagnostic[] },
): DiagnosticChange {
  const beforeLines = before.text.split("\n");
  const afterLines = after.text.split("\n");
  const changed = changedRegion(before.text, after.text);
  const remaining = [...before.diagnostics];
  const unmatched: TypeDiagnostic[] = [];
  const take = (test: (old: TypeDiagnostic) => boolean) => {
    const index = remaining.findIndex(test);
    if (index === -1) return false;
    remaining.splice(index, 1);
    return true;
  };
  const same = (left: TypeDiagnostic, right: TypeDiagnostic) =>
    left.code === right.code && left.message === right.message;
  const lineText = (lines: readonly string[], line: number) => lines[line - 1]?.trim();
  for (const diagnostic of after.diagnostics) {
    const text = lineText(afterLines, diagnostic.line);
    if (!take((old) => same(old, diagnostic) && lineText(beforeLines, old.line) === text)) {
      unmatched.push(diagnostic);
    }
  }
  const introduced = unmatched.filter(
    (diagnostic) =>
      !(
        within(diagnostic.line, changed.after) &&
        take((old) => same(old, diagnostic) && within(old.line, changed.before))
      ),
  );
  const byLine = (left: TypeDiagnostic, right: TypeDiagnostic) => left.line - right.line;
  return {
    introduced: introduced.sort(byLine),
    fixed: remaining.sort(byLine),
    kept: after.diagnostics.length - introduced.length,
  };
}

/** 1-based inclusive line ranges, before and after, outside of which the texts are the same. */
function changedRegion(
  before: string,
  after: string,
): { before: [number, number]; after: [number, number] } {
  const { newStart, oldEnd, newEnd } = changedSpan(before, after);
  // An empty range still holds the line at the change, where an error about it is reported.
  return {
    before: [newStart, Math.max(newStart, oldEnd)],
    after: [newStart, Math.max(newStart, newEnd)],
  };
}

function within(line: number, [first, last]: [number, number]): boolean {
  return line >= first && line <= last;
}
