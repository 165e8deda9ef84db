import type Parser from "web-tree-sitter";
import { errorLinesOf, type SyntaxErrorLine, syntaxErrorLines } from "./syntax-errors.js";

/**
 * How many files' trees are kept for the next edit of the same file; the texts checked are at
 * most 1 MiB, so they hold tens of MB of WebAssembly memory at worst.
 */
const KEPT_FILES = 4;

interface KeptTree {
  text: string;
  tree: Parser.Tree;
}

/** The trees of the last files checked, most recent last, by language and path. */
const kept = new Map<string, KeptTree>();

/** The syntax errors of a file before and after an edit, when it has any after. */
export interface ErrorsAcrossEdit {
  before: SyntaxErrorLine[];
  after: SyntaxErrorLine[];
}

/**
 * The errors of `after`, the text of `key`'s file after an edit of `before`, with those of
 * `before`; `"clean"` when `after` has none, `undefined` when a parse gave up. When the last check
 * of the file kept the tree of exactly `before`, and it had no error, tree-sitter re-parses only
 * what the edit touched (a few milliseconds instead of tens for a 2,000-line file), the way
 * editors do. Errors are always read from whole parses, as a re-parse may recover from them
 * differently, so only trees without errors come from re-parses. The tree of `after` is kept for
 * the next edit of the file.
 */
export function errorsAcrossEdit(
  parser: Parser,
  key: string,
  before: string,
  after: string,
): ErrorsAcrossEdit | "clean" | undefined {
  const previous = kept.get(key);
  const reusable = previous !== undefined && previous.text === before ? previous.tree : undefined;
  try {
    if (reusable !== undefined && !reusable.rootNode.hasError()) {
      const edited = reusable.copy();
      let reparsed: Parser.Tree | null | undefined;
      try {
        edited.edit(editBetween(before, after));
        reparsed = parser.parse(after, edited);
      } finally {
        edited.delete();
      }
      if (reparsed === null || reparsed === undefined) return undefined;
      if (!reparsed.rootNode.hasError()) {
        keep(key, after, reparsed);
        return "clean";
      }
      reparsed.delete();
      return errorsAfter(parser, key, after, () => []);
    }
    return errorsAfter(parser, key, after, () =>
      reusable === undefined ? syntaxErrorLines(parser, before) : errorLinesOf(reusable),
    );
  } catch {
    return undefined;
  }
}

/**
 * Parse `after` whole and keep its tree; its errors with those `errorsBefore` gives (read before
 * the tree it may read is replaced), or `"clean"`.
 */
function errorsAfter(
  parser: Parser,
  key: string,
  after: string,
  errorsBefore: () => SyntaxErrorLine[] | undefined,
): ErrorsAcrossEdit | "clean" | undefined {
  const tree = parser.parse(after);
  if (tree === null || tree === undefined) return undefined;
  const before = tree.rootNode.hasError() ? errorsBefore() : [];
  keep(key, after, tree);
  if (before === undefined) return undefined;
  return tree.rootNode.hasError() ? { before, after: errorLinesOf(tree) } : "clean";
}

function keep(key: string, text: string, tree: Parser.Tree): void {
  const previous = kept.get(key);
  if (previous !== undefined) {
    kept.delete(key);
    previous.tree.delete();
  }
  kept.set(key, { text, tree });
  for (const [oldest, entry] of kept) {
    if (kept.size <= KEPT_FILES) break;
    kept.delete(oldest);
    entry.tree.delete();
  }
}

/** The edit that turns `before` into `after`: the span between their common start and end. */
function editBetween(before: string, after: string): Parser.Edit {
  const shorter = Math.min(before.length, after.length);
  let start = 0;
  while (start < shorter && before.charCodeAt(start) === after.charCodeAt(start)) start += 1;
  let end = 0;
  while (
    end < shorter - start &&
    before.charCodeAt(before.length - 1 - end) === after.charCodeAt(after.length - 1 - end)
  ) {
    end += 1;
  }
  const oldEnd = before.length - end;
  const newEnd = after.length - end;
  return {
    startIndex: start,
    oldEndIndex: oldEnd,
    newEndIndex: newEnd,
    startPosition: pointAt(before, start),
    oldEndPosition: pointAt(before, oldEnd),
    newEndPosition: pointAt(after, newEnd),
  };
}

/** The row and column (in UTF-16 units, as web-tree-sitter counts them) of `index` in `text`. */
function pointAt(text: string, index: number): Parser.Point {
  let row = 0;
  let lineStart = 0;
  for (let at = text.indexOf("\n"); at !== -1 && at < index; at = text.indexOf("\n", at + 1)) {
    row += 1;
    lineStart = at + 1;
  }
  return { row, column: index - lineStart };
}
