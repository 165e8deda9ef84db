import { commonEnds } from "../shared/common-ends.js";

/** What an edit changed that can break the syntax, for the model beside where the parser noticed. */
export interface EditCause {
  /** 1-based first and last line of the new text that the edit changed (one line for a removal). */
  startLine: number;
  endLine: number;
  /** What the edit did to the balance of brackets and quotes, or to indentation, one phrase each. */
  changes: string[];
}

const PAIRS = [
  { open: "{", close: "}", name: "braces" },
  { open: "(", close: ")", name: "parentheses" },
  { open: "[", close: "]", name: "square brackets" },
] as const;

const QUOTES = ['"', "'", "`"] as const;

/** Languages whose blocks are their indentation. */
const INDENTED = new Set(["python", "yaml"]);

const count = (text: string, character: string) => text.split(character).length - 1;
const indentOf = (line: string) => /^[ \t]*/.exec(line)?.[0] ?? "";

/**
 * Where `before` became `after` (the lines between their common first and last lines) and what
 * that changed of the bracket and quote balance, and of indentation in `language`s whose blocks
 * are indented: "removed a "}"", "the braces no longer balance". `undefined` when the texts are
 * equal. Counts are of characters, strings and comments included: a hint, not a parse.
 */
export function editCause(before: string, after: string, language: string): EditCause | undefined {
  if (before === after) return undefined;
  const old = before.split("\n");
  const now = after.split("\n");
  const { head, tail } = commonEnds(old, now);
  const removed = old.slice(head, old.length - tail);
  const added = now.slice(head, now.length - tail);
  const removedText = removed.join("\n");
  const addedText = added.join("\n");
  const changes: string[] = [];
  for (const { open, close, name } of PAIRS) {
    const balance = (text: string) => count(text, open) - count(text, close);
    if (balance(removedText) === balance(addedText)) continue;
    const parts: string[] = [];
    for (const character of [open, close]) {
      const difference = count(addedText, character) - count(removedText, character);
      if (difference < 0) parts.push(`removed ${amount(-difference, character)}`);
      if (difference > 0) parts.push(`added ${amount(difference, character)}`);
    }
    changes.push(`${parts.join(" and ")}, so the ${name} no longer balance`);
  }
  for (const quote of QUOTES) {
    const odd = (lines: readonly string[]) => lines.filter((line) => count(line, quote) % 2 === 1);
    const unclosed = odd(added).length - odd(removed).length;
    if (unclosed > 0)
      changes.push(
        `left ${amount(unclosed, quote, "line")} with an odd number of ${quote} (a string not closed?)`,
      );
  }
  if (INDENTED.has(language)) {
    const reindented =
      removed.length === added.length &&
      removed.some((line, index) => indentOf(line) !== indentOf(added[index] ?? "")) &&
      removed.every((line, index) => line.trim() === (added[index] ?? "").trim());
    if (reindented)
      changes.push("changed only the indentation, which moves lines into or out of a block");
    else {
      const previous = old.slice(0, head).findLast((line) => line.trim() !== "") ?? "";
      const first = added.find((line) => line.trim() !== "");
      const opens = /[:{[(]\s*(#.*)?$/.test(previous);
      if (first !== undefined && indentOf(first).length > indentOf(previous).length && !opens) {
        changes.push(
          "indented its first line deeper than the line before it, which opens no block",
        );
      }
    }
  }
  const startLine = head + 1;
  return { startLine, endLine: Math.max(startLine, head + added.length), changes };
}

function amount(how: number, character: string, unit?: string): string {
  if (unit !== undefined) return `${how} ${unit}${how === 1 ? "" : "s"}`;
  return how === 1 ? `a "${character}"` : `${how} "${character}"`;
}
