import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { editText } from "./locate-edit.js";

/** `shared/real-edits` beside the checkout or one of its parents, or `PLEACH_REAL_EDITS`. */
function realEditsFile(): string | undefined {
  const given = process.env.PLEACH_REAL_EDITS;
  if (given !== undefined) return path.join(given, "cases.jsonl");
  let folder = path.dirname(fileURLToPath(import.meta.url));
  while (path.dirname(folder) !== folder) {
    folder = path.dirname(folder);
    const candidate = path.join(folder, "shared/real-edits/cases.jsonl");
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
}

interface RealEdit {
  id: string;
  kind: "exact" | "slip" | "ambiguous";
  before: string;
  call: { old: string; new: string };
  intended?: string;
}

const file = realEditsFile();
const cases: RealEdit[] =
  file === undefined
    ? []
    : readFileSync(file, "utf8")
        .split("\n")
        .filter((line) => line.trim() !== "")
        .map((line) => JSON.parse(line) as RealEdit);

// The real edit calls are data kept outside the project (never copied into it).
describe.skipIf(file === undefined)("edit_file on real edit calls (shared/real-edits)", () => {
  it("never writes a file the model did not mean, in either mode", () => {
    const outcomes = { exact: 0, refused: 0, misapplied: [] as string[] };
    for (const item of cases) {
      for (const tolerant of [false, true]) {
        const text = editText(item.before, item.call, { tolerant });
        if (text === undefined) outcomes.refused += 1;
        else if (item.kind !== "ambiguous" && text === item.intended) outcomes.exact += 1;
        else outcomes.misapplied.push(`${item.id} (tolerant: ${tolerant})`);
      }
    }
    expect(outcomes.misapplied).toEqual([]);
  });

  it("lands every exact call, refuses every ambiguous one, and recovers slips only when tolerant", () => {
    const recovered = (tolerant: boolean) =>
      cases.filter(
        (item) =>
          item.kind === "slip" && editText(item.before, item.call, { tolerant }) === item.intended,
      ).length;
    for (const item of cases.filter((entry) => entry.kind === "exact")) {
      expect(editText(item.before, item.call, { tolerant: false }), item.id).toBe(item.intended);
    }
    for (const item of cases.filter((entry) => entry.kind === "ambiguous")) {
      expect(editText(item.before, item.call, { tolerant: true }), item.id).toBeUndefined();
    }
    expect(recovered(false)).toBe(0);
    // 10 of the 12 slips measured when this was written (bench/edits prints the figures).
    expect(recovered(true)).toBeGreaterThanOrEqual(10);
  });
});
