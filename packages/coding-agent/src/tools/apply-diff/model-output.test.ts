import { describe, expect, it } from "vitest";
import { applyDiffModelOutput } from "./model-output.js";

describe("applyDiffModelOutput", () => {
  it("tells the model about lines taken despite a slip and context lines the diff left out", () => {
    const { output, error } = applyDiffModelOutput({
      hunksApplied: 2,
      conflicts: [],
      files: [{ path: "a.ts", action: "modified" }],
      hunks: [
        {
          file: "a.ts",
          hunk: 1,
          status: "applied",
          line: 12,
          offset: 0,
          tolerance: "exact",
          similarLines: [14],
        },
        {
          file: "a.ts",
          hunk: 2,
          status: "applied",
          line: 40,
          offset: 3,
          tolerance: "indentation",
          similarLines: [41, 44],
          missingLines: [42],
        },
      ],
    });
    expect(error).toBe(false);
    expect(output).toMatchInlineSnapshot(`
      "applied 2 hunk(s)
      Hunk #1 applied at line 12 (line 14 differs by a small edit from the diff's, taken as meant).
      Hunk #2 applied at line 40 (offset +3 lines; indentation ignored, added lines re-indented; lines 41, 44 differ by a small edit from the diff's, taken as meant; line 42 is missing from the diff's context, kept)."
    `);
  });
});
