import { describe, expect, it } from "vitest";
import { boundStructuredContent } from "./mcp-structured.js";

describe("boundStructuredContent", () => {
  it("returns a value that fits as it is", () => {
    const value = { content: "short", nextOffset: 3 };
    expect(boundStructuredContent(value, 1_000)).toEqual({ value, cut: false });
  });

  it("cuts long strings with head and tail, and keeps numbers and short strings", () => {
    const value = {
      content: `${"a".repeat(30_000)}${"z".repeat(30_000)}`,
      stdout: "b".repeat(40_000),
      path: "src/app.ts",
      nextOffset: 1_930,
      totalLines: 7_728,
    };
    const { value: bounded, cut } = boundStructuredContent(value, 10_000);
    expect(cut).toBe(true);
    expect(JSON.stringify(bounded).length).toBeLessThanOrEqual(10_000);
    expect(bounded).toMatchObject({ path: "src/app.ts", nextOffset: 1_930, totalLines: 7_728 });
    expect(bounded.content).toMatch(
      /^a+\n\n\[\.\.\. [\d,]+ characters cut from the middle of this output \.\.\.\]\n\nz+$/,
    );
  });

  it("shortens long lists once the strings are all short, keeping their first entries", () => {
    const entries = Array.from({ length: 3_000 }, (_, index) => ({
      path: `src/file-${index}.ts`,
      kind: "file",
      size: index,
    }));
    const { value: bounded, cut } = boundStructuredContent({ result: entries }, 5_000);
    expect(cut).toBe(true);
    expect(JSON.stringify(bounded).length).toBeLessThanOrEqual(5_000);
    const kept = bounded.result as typeof entries;
    expect(kept.length).toBeGreaterThan(50);
    expect(kept).toEqual(entries.slice(0, kept.length));
  });
});
