import { describe, expect, it } from "vitest";
import { compareDiagnostics } from "./compare.js";

const error = (line: number, message = "Type 'number' is not assignable to type 'string'.") => ({
  line,
  message,
  code: "TS2322",
});

describe("compareDiagnostics", () => {
  it("keeps an error whose line moved with an edit above it as an old one", () => {
    const before = { text: "a\nconst x: string = 1;\n", diagnostics: [error(2)] };
    const after = { text: "new line\na\nconst x: string = 1;\n", diagnostics: [error(3)] };
    expect(compareDiagnostics(before, after)).toEqual({ introduced: [], fixed: [], kept: 1 });
  });

  it("keeps an error of an edited line that still has it", () => {
    const before = { text: "const x: string = 1;\n", diagnostics: [error(1)] };
    const after = { text: "const x: string = 2;\n", diagnostics: [error(1)] };
    expect(compareDiagnostics(before, after)).toEqual({ introduced: [], fixed: [], kept: 1 });
  });

  it("tells an error the edit made from an identical one elsewhere that was there", () => {
    const before = { text: "const a: string = 1;\nok\n", diagnostics: [error(1)] };
    const after = {
      text: "const a: string = 1;\nconst b: string = 2;\n",
      diagnostics: [error(1), error(2)],
    };
    expect(compareDiagnostics(before, after)).toEqual({
      introduced: [error(2)],
      fixed: [],
      kept: 1,
    });
  });

  it("reports the errors gone after the edit as fixed, at their line before", () => {
    const before = { text: "a\nconst x: string = 1;\n", diagnostics: [error(2)] };
    const after = { text: "a\nconst x: number = 1;\n", diagnostics: [] };
    expect(compareDiagnostics(before, after)).toEqual({
      introduced: [],
      fixed: [error(2)],
      kept: 0,
    });
  });

  it("reports a changed message on the edited line as one introduced and one fixed", () => {
    const before = { text: "const x: string = 1;\n", diagnostics: [error(1)] };
    const changed = error(1, "Type 'boolean' is not assignable to type 'string'.");
    const after = { text: "const x: string = true;\n", diagnostics: [changed] };
    expect(compareDiagnostics(before, after)).toEqual({
      introduced: [changed],
      fixed: [error(1)],
      kept: 0,
    });
  });
});
