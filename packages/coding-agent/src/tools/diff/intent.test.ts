import { describe, expect, it } from "vitest";
import { splitSource } from "./assemble.js";
import type { Placement } from "./hunk-report.js";
import { intentViolation } from "./intent.js";

const lines = (...rows: string[]) => `${rows.join("\n")}\n`;

/** A hunk that indents `b();` one level deeper, placed at line 1 of a file indented by two. */
function deeperHunk(reindented: string[]): Placement {
  return {
    number: 1,
    lines: [
      { kind: "context", text: "if (a) {", noNewlineAtEnd: false },
      { kind: "remove", text: "b();", noNewlineAtEnd: false },
      { kind: "add", text: "  b();", noNewlineAtEnd: false },
      { kind: "context", text: "}", noNewlineAtEnd: false },
    ],
    fullLines: [],
    start: 0,
    tolerance: "indentation",
    reindented,
    coreStart: 1,
    coreEnd: 2,
  };
}

describe("the intent check", () => {
  const original = splitSource(lines("  if (a) {", "  b();", "  }"));

  it("passes a re-indented hunk that keeps its own indentation change", () => {
    const output = splitSource(lines("  if (a) {", "    b();", "  }"));
    expect(intentViolation(original, output, deeperHunk(["    b();"]), 1)).toBeUndefined();
  });

  it("refuses a re-indentation that undoes a hunk whose only change is indentation", () => {
    const output = splitSource(lines("  if (a) {", "  b();", "  }"));
    expect(intentViolation(original, output, deeperHunk(["  b();"]), 1)).toBe(
      "the lines it changes would read as they did before, so its change would be lost",
    );
  });

  it("refuses a re-indentation that moves a line the other way", () => {
    const output = splitSource(lines("  if (a) {", "b();", "  }"));
    expect(intentViolation(original, output, deeperHunk(["b();"]), 1)).toBe(
      'the diff indents "b();" deeper, and in the file it would not be',
    );
  });

  it("refuses an added line that does not read as the diff gives it", () => {
    const output = splitSource(lines("  if (a) {", "    c();", "  }"));
    expect(intentViolation(original, output, deeperHunk(["    c();"]), 1)).toBe(
      'its added line 1 would read "    c();", not "  b();"',
    );
  });
});
