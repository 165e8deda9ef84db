import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parserFor } from "./grammars.js";
import { errorsAcrossEdit } from "./kept-trees.js";
import { syntaxErrorLines } from "./syntax-errors.js";

const SOURCE = [
  'export const greeting = "héllo 👋";',
  "",
  "export function total(items: number[]): number {",
  "  let sum = 0;",
  "  for (const item of items) {",
  "    sum += item; // ünïcode",
  "  }",
  "  return sum;",
  "}",
  "",
  "export class Box<T> {",
  "  constructor(readonly value: T) {}",
  "}",
  "",
].join("\n");

/** Pieces an edit puts in: valid and broken code, line breaks, characters of 2 and 4 bytes. */
const PIECES = [
  "",
  "x",
  "é",
  "👋",
  "\n",
  "  ",
  "(",
  ")",
  "{",
  "}",
  ";",
  '"',
  "let a = 1;\n",
  "// c\n",
];

describe("errorsAcrossEdit", () => {
  it("says a text is clean exactly when a whole parse finds no error, over chains of edits of one file", async () => {
    const parser = await parserFor("typescript");
    if (parser === undefined) throw new Error("the TypeScript grammar did not load");
    const edit = fc.record({
      at: fc.nat(),
      remove: fc.nat({ max: 12 }),
      insert: fc.constantFrom(...PIECES),
    });
    let run = 0;
    fc.assert(
      fc.property(fc.array(edit, { minLength: 1, maxLength: 12 }), (edits) => {
        // A fresh key per run: the first edit parses whole, the next ones re-parse the kept tree.
        run += 1;
        const key = `typescript:property-${run}.ts`;
        let text = SOURCE;
        for (const { at, remove, insert } of edits) {
          const start = at % (text.length + 1);
          const next = text.slice(0, start) + insert + text.slice(start + remove);
          const verdict = errorsAcrossEdit(parser, key, text, next);
          const whole = syntaxErrorLines(parser, next);
          expect(verdict === "clean").toBe(whole?.length === 0);
          if (verdict !== "clean") expect(verdict?.after).toEqual(whole);
          text = next;
        }
      }),
      { numRuns: 150 },
    );
  });
});
