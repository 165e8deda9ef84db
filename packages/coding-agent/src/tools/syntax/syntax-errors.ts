import type Parser from "web-tree-sitter";
import { commonEnds } from "../shared/common-ends.js";

/** A syntax error: its 1-based line and what the parser found there. */
export interface SyntaxErrorLine {
  line: number;
  message: string;
}

/**
 * The lines of `text` that hold a syntax error, one entry per line (the first error on it), in
 * order. Errors are the parser's MISSING nodes (a token it had to assume, such as a closing
 * brace) and its ERROR nodes (text it could not fit in the grammar), at the line they start. An
 * ERROR node that holds other errors is represented by them. `undefined` when the parse gave up.
 */
export function syntaxErrorLines(parser: Parser, text: string): SyntaxErrorLine[] | undefined {
  let tree: Parser.Tree | null | undefined;
  try {
    tree = parser.parse(text);
  } catch {
    return undefined;
  }
  if (tree === null || tree === undefined) return undefined;
  try {
    return errorLinesOf(tree);
  } finally {
    tree.delete();
  }
}

/** The error lines of a parsed tree (see {@link syntaxErrorLines}). */
export function errorLinesOf(tree: Parser.Tree): SyntaxErrorLine[] {
  const found = new Map<number, string>();
  collectErrors(tree.rootNode, found);
  return [...found].sort(([a], [b]) => a - b).map(([line, message]) => ({ line, message }));
}

function collectErrors(node: Parser.SyntaxNode, found: Map<number, string>): void {
  const add = (at: Parser.SyntaxNode, message: string) => {
    const line = at.startPosition.row + 1;
    if (!found.has(line)) found.set(line, message);
  };
  if (node.isMissing()) {
    add(node, `missing ${JSON.stringify(node.type)}`);
    return;
  }
  // Only subtrees that hold an error are entered, so a large clean file costs little.
  if (!node.hasError()) return;
  const inner = node.children.filter((child) => child.hasError());
  if (node.type === "ERROR" && inner.length === 0) {
    // An ERROR that is the whole file wraps everything parsed before the parser gave up: the
    // trouble is at its end. Any other starts where the unexpected text does.
    const at = (node.parent === null ? node.lastChild : null) ?? node;
    add(at, unexpected(at.text));
    return;
  }
  for (const child of inner) collectErrors(child, found);
}

function unexpected(text: string): string {
  const firstLine = text.trimStart().split("\n", 1)[0]?.trim() ?? "";
  if (firstLine === "") return "unexpected text";
  const shown = firstLine.length > 40 ? `${firstLine.slice(0, 40)}…` : firstLine;
  return `unexpected ${JSON.stringify(shown)}`;
}

/**
 * The errors of `after` that the change from `before` introduced. The rule, kept simple so that
 * an error already in the file is never blamed on the edit:
 *
 * - Count: nothing is introduced unless `after` has more error lines than `before` had. An edit
 *   that fixes one error and makes another elsewhere is therefore not reported.
 * - Position: when it has more, the ones reported are those no error of `before` accounts for,
 *   each line of `before` mapped through the change. The change is the span between the first and
 *   the last line that differ (the common leading and trailing lines stay, the trailing ones
 *   shifted by the number of lines added or removed); an error inside the old span accounts for
 *   one error inside the new span.
 *
 * A new file is an empty `before`: every error in it is introduced.
 */
export function introducedErrors(
  before: { text: string; errors: readonly SyntaxErrorLine[] },
  after: { text: string; errors: readonly SyntaxErrorLine[] },
): SyntaxErrorLine[] {
  if (after.errors.length <= before.errors.length) return [];
  const change = changedSpan(before.text, after.text);
  const unaccounted = new Map<string, number>();
  for (const { line } of before.errors) {
    const key = mappedKey(line, change);
    unaccounted.set(key, (unaccounted.get(key) ?? 0) + 1);
  }
  return after.errors.filter(({ line }) => {
    const key = line < change.newStart || line > change.newEnd ? `${line}` : "span";
    const left = unaccounted.get(key) ?? 0;
    if (left === 0) return true;
    unaccounted.set(key, left - 1);
    return false;
  });
}

/** Where two texts differ, by line (see {@link changedSpan}). */
export interface ChangedSpan {
  /** 1-based first changed line, the same in both texts. */
  newStart: number;
  /** Last changed line of the old text (`newStart - 1` when lines were only inserted). */
  oldEnd: number;
  /** Last changed line of the new text (`newStart - 1` when lines were only removed). */
  newEnd: number;
}

/** Where a line of the old text lands in the new one: the same line, or the changed span. */
function mappedKey(line: number, { newStart, oldEnd, newEnd }: ChangedSpan): string {
  if (line < newStart) return `${line}`;
  if (line > oldEnd) return `${line + newEnd - oldEnd}`;
  return "span";
}

/** The lines of `before` and `after` outside of which the two texts are the same. */
export function changedSpan(before: string, after: string): ChangedSpan {
  const oldLines = before.split("\n");
  const newLines = after.split("\n");
  const { head: prefix, tail: suffix } = commonEnds(oldLines, newLines);
  return {
    newStart: prefix + 1,
    oldEnd: oldLines.length - suffix,
    newEnd: newLines.length - suffix,
  };
}
