import { createPatch } from "diff";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { applyFilePatch } from "./apply.js";
import { parseUnifiedDiff } from "./parse.js";

type Endings = "lf" | "crlf" | "mixed";

/** Line contents from a small alphabet, so that repeated lines and blocks are common. */
const lineContent = fc.constantFrom(
  "",
  "a",
  "b",
  "c",
  "}",
  "  return x;",
  "\tif (y) {",
  "const z = 1;",
  "// ‘quoted’ — text",
  "trailing  ",
);

const sample = fc.record({
  lines: fc.array(lineContent, { maxLength: 40 }),
  newlines: fc.array(fc.boolean(), { minLength: 41, maxLength: 41 }),
});

/** Join lines with endings chosen by `endings` (per line from `newlines` when mixed). */
function render(
  lines: readonly string[],
  endings: Endings,
  choice: readonly boolean[],
  bom: boolean,
  finalNewline: boolean,
): string {
  const text = lines
    .map((line, index) => {
      const last = index === lines.length - 1;
      if (last && !finalNewline) return line;
      const crlf = endings === "crlf" || (endings === "mixed" && (choice[index] ?? false));
      return `${line}${crlf ? "\r\n" : "\n"}`;
    })
    .join("");
  return (bom ? "\uFEFF" : "") + text;
}

/** A random change: each old line kept, dropped or replaced, with lines inserted between. */
const change = fc.array(
  fc.record({
    action: fc.constantFrom("keep", "keep", "keep", "keep", "drop", "replace"),
    insert: fc.array(lineContent, { maxLength: 3 }),
    replacement: lineContent,
  }),
  { minLength: 41, maxLength: 41 },
);

function changed(
  lines: readonly string[],
  steps: ReadonlyArray<{ action: string; insert: string[]; replacement: string }>,
): string[] {
  const result: string[] = [];
  lines.forEach((line, index) => {
    const step = steps[index];
    if (step === undefined) {
      result.push(line);
      return;
    }
    result.push(...step.insert);
    if (step.action === "keep") result.push(line);
    else if (step.action === "replace") result.push(step.replacement);
  });
  result.push(...(steps[lines.length]?.insert ?? []));
  return result;
}

function roundTrip(oldText: string, newText: string, context = 3): string {
  const diff = createPatch("file.txt", oldText, newText, "", "", { context });
  const patches = parseUnifiedDiff(diff);
  if (oldText === newText) {
    expect(patches).toEqual([]);
    return oldText;
  }
  expect(patches).toHaveLength(1);
  const [patch] = patches;
  if (patch === undefined) throw new Error("no patch");
  const result = applyFilePatch(oldText, patch);
  // A hunk that only adds lines, whose new text already stands elsewhere in the file beside its
  // old text, is refused: applied already or not, nothing tells (refused, never misapplied). The
  // refusal must be that one, and true: every added line of the hunk already stands in the file.
  const oldLines = oldText.split(/\r?\n/);
  const excused = (conflict: string) => {
    const number = /^Hunk #(\d+) FAILED.*it may be applied already/.exec(conflict)?.[1];
    const hunk = number === undefined ? undefined : patch.hunks[Number(number) - 1];
    if (hunk === undefined || hunk.lines.some((line) => line.kind === "remove")) return false;
    return hunk.lines
      .filter((line) => line.kind === "add")
      .every((line) => oldLines.includes(line.text.replace(/\r$/, "")));
  };
  if (result.conflicts.length > 0 && result.conflicts.every(excused)) return newText;
  expect(result.conflicts).toEqual([]);
  return result.text ?? "";
}

describe("applyFilePatch on generated diffs", () => {
  it("inserts a line at the top of a file without a final newline that holds only that line", () => {
    // A counterexample the property found (on Node 22's seed): `-0,0 +1 @@ +a` against `a` with no
    // final newline was taken for a diff to an empty file, applied already.
    expect(roundTrip("a", "a\na", 0)).toBe("a\na");
    expect(roundTrip("\tif (y) {", "\tif (y) {\n\tif (y) {", 0)).toBe("\tif (y) {\n\tif (y) {");
    expect(roundTrip("", "a\n", 0)).toBe("a\n");
  });

  it("turns old into new exactly, for LF, CRLF and mixed endings, BOM and no final newline", () => {
    fc.assert(
      fc.property(
        sample,
        change,
        fc.constantFrom<Endings>("lf", "crlf", "mixed"),
        fc.boolean(),
        fc.boolean(),
        fc.boolean(),
        fc.array(fc.boolean(), { minLength: 80, maxLength: 80 }),
        fc.integer({ min: 0, max: 4 }),
        (old, steps, endings, bom, oldFinal, newFinal, newChoice, context) => {
          const oldText = render(old.lines, endings, old.newlines, bom, oldFinal);
          const newLines = changed(old.lines, steps);
          const newText = render(newLines, endings, newChoice, bom, newFinal);
          // Without context, an LF line inserted into a file of mixed endings could be meant
          // either way; the engine gives it the file's dominant ending.
          if (endings === "mixed" && context === 0) return;
          expect(
            roundTrip(oldText, newText, context),
            JSON.stringify([oldText, newText, context]),
          ).toBe(newText);
        },
      ),
      // A fixed seed keeps CI's verdict the same run to run; PLEACH_FC_SEED explores others.
      { numRuns: 1500, seed: Number(process.env.PLEACH_FC_SEED ?? 20261202) },
    );
  });

  /** Distinct lines, so every run of them occurs once in a file made of them. */
  const uniqueLines = fc.uniqueArray(
    fc.string({ minLength: 1, maxLength: 8 }).filter((line) => !/[\r\n]/.test(line)),
    { minLength: 1, maxLength: 30 },
  );

  /**
   * Old and new text of a change to unique lines. New lines are taken from outside the old ones'
   * alphabet (a leading `+`) so the old text stays unique in the new file too.
   */
  function uniqueChange(lines: string[], steps: Parameters<typeof changed>[1]) {
    const newLines = changed(
      lines,
      steps.map((step) => ({
        ...step,
        insert: step.insert.map((line) => `+${line}`),
        replacement: `+${step.replacement}`,
      })),
    );
    return { oldText: `${lines.join("\n")}\n`, newText: `${newLines.join("\n")}\n` };
  }

  it("gives the same result when the @@ line numbers are shifted and the context is unique", () => {
    fc.assert(
      fc.property(uniqueLines, change, fc.integer({ min: -50, max: 50 }), (lines, steps, shift) => {
        const { oldText, newText } = uniqueChange(lines, steps);
        if (oldText === newText) return;
        const diff = createPatch("f", oldText, newText).replace(
          /^@@ -(\d+)/gm,
          (_, start: string) => `@@ -${Math.max(1, Number(start) + shift)}`,
        );
        const [patch] = parseUnifiedDiff(diff);
        if (patch === undefined) throw new Error("no patch");
        const result = applyFilePatch(oldText, patch);
        // A hunk with no context lines has nothing to place it but its number.
        const contextless = patch.hunks.some((hunk) =>
          hunk.lines.every((line) => line.kind !== "context"),
        );
        if (!contextless) {
          expect(result.conflicts).toEqual([]);
          expect(result.text).toBe(newText);
        } else if (result.conflicts.length === 0) {
          // Refused at a wrong number, or placed right: never placed elsewhere.
          expect(result.text).toBe(newText);
        }
      }),
      { numRuns: 500 },
    );
  });

  it("never adds lines twice where the hunk's old text is left over beside its new text", () => {
    // Found by the property below (seed 128033371): the old text `+`, ` ` stands again at line 3
    // once the hunk is applied, so it was found there and the lines added a second time.
    const oldText = "+\n \n";
    const newText = "+\n+}\n+\n \n";
    const [patch] = parseUnifiedDiff(createPatch("f", oldText, newText));
    if (patch === undefined) throw new Error("no patch");
    const second = applyFilePatch(newText, patch);
    expect(second.text === newText || second.conflicts.length > 0).toBe(true);
    expect(applyFilePatch(oldText, patch).text).toBe(newText);
  });

  it("reports every hunk already applied when the diff is applied twice", () => {
    fc.assert(
      fc.property(uniqueLines, change, (lines, steps) => {
        const { oldText, newText } = uniqueChange(lines, steps);
        if (oldText === newText) return;
        const [patch] = parseUnifiedDiff(createPatch("f", oldText, newText));
        if (patch === undefined) throw new Error("no patch");
        const second = applyFilePatch(newText, patch);
        // Never applied twice: either recognised as applied, or refused; never a changed file.
        expect(second.text === newText || second.conflicts.length > 0).toBe(true);
        if (second.conflicts.length === 0) {
          expect(second.hunks.every((hunk) => hunk.status === "already-applied")).toBe(true);
        }
      }),
      { numRuns: 500 },
    );
  });
});
