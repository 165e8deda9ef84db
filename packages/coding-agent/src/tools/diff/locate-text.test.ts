import { describe, expect, it } from "vitest";
import { locateTolerantly } from "./locate-text.js";

const lines = (...rows: string[]) => `${rows.join("\n")}\n`;

/** `text` with `old` replaced as a tolerant `edit_file` would, or the match's status. */
function edit(text: string, old: string, replacement: string): string {
  const match = locateTolerantly(text, old, replacement);
  if (match.status !== "unique") return match.status;
  return text.slice(0, match.start) + match.replacement + text.slice(match.end);
}

const FILE = lines(
  "class Cart {",
  "  total() {",
  "    let sum = 0;",
  "    for (const item of this.items) {",
  "      sum += item.price;",
  "    }",
  "    return sum;",
  "  }",
  "}",
);

describe("locateTolerantly with indentation drift (edit_file, tolerant: true)", () => {
  it("re-indents `new` like `old` was when both lost their common indentation", () => {
    const result = edit(
      FILE,
      lines("for (const item of this.items) {", "  sum += item.price;", "}"),
      lines("for (const item of this.items) {", "  sum += item.price * item.count;", "}"),
    );
    expect(result).toBe(FILE.replace("item.price;", "item.price * item.count;"));
  });

  it("re-indents `new` to the file's spaces when `old` and `new` came with tabs", () => {
    const result = edit(
      FILE,
      lines("\t\tfor (const item of this.items) {", "\t\t\tsum += item.price;", "\t\t}"),
      lines(
        "\t\tfor (const item of this.items) {",
        "\t\t\tif (item.price > 0) {",
        "\t\t\t\tsum += item.price;",
        "\t\t\t}",
        "\t\t}",
      ),
    );
    expect(result).toBe(
      FILE.replace(
        "      sum += item.price;\n",
        "      if (item.price > 0) {\n        sum += item.price;\n      }\n",
      ),
    );
  });

  it("keeps an edit whose change is the indentation", () => {
    const result = edit(
      FILE,
      lines("  sum += item.price;", "}"),
      lines("    sum += item.price;", "}"),
    );
    expect(result).toBe(FILE.replace("      sum += item.price;", "        sum += item.price;"));
  });

  it("refuses when `old`'s lines drifted unevenly, so `new`'s indentation is unclear", () => {
    const result = edit(
      FILE,
      lines("let sum = 0;", "      for (const item of this.items) {"),
      lines("let sum = 1;", "      for (const item of this.items) {"),
    );
    expect(result).toBe("none");
  });
});

describe("locateTolerantly in a file of mixed line endings", () => {
  it("gives the replacement the matched lines' line ending, not the file's most common", () => {
    const text = `# Title\n\nintro line\n${"crlf line\r\n".repeat(5)}`;
    const result = edit(text, "# Title  \n\nintro line\n", "# Title\n\nnew intro\n");
    expect(result).toBe(text.replace("intro line", "new intro"));
  });
});
