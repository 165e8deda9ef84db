import { describe, expect, it } from "vitest";
import { localWorkspace } from "../../test-support/local-workspace.js";
import { createEditFileTool } from "../edit-file/tool.js";

/**
 * A file that tree-sitter's TypeScript grammar cannot parse within its time limit: its parse
 * stops half-way, which left the process's one parser resuming that parse on the next file.
 * 60,000 lines (960 KB, under the check's 1 MiB): 15,000 parse within the limit on an idle
 * machine, so the test must not depend on the machine being busy.
 */
const SLOW = `// header\n${"a b c ; ) } ] \n".repeat(60_000)}`;

describe("syntax diagnostics off the event loop", () => {
  it("gives a file too slow to parse 'diagnostics unavailable' while timers run, and the next edit real diagnostics", async () => {
    const { client, put } = await localWorkspace();
    const tool = createEditFileTool(client);
    await put("slow.ts", SLOW);
    let ticks = 0;
    const ticking = setInterval(() => {
      ticks += 1;
    }, 10);
    let slow: Awaited<ReturnType<typeof tool.execute>>;
    try {
      slow = await tool.execute({ path: "slow.ts", old: "// header", new: "// headed" });
    } finally {
      clearInterval(ticking);
    }
    expect(slow.action).toBe("edited");
    expect(slow.syntaxErrors).toBeUndefined();
    expect(slow.syntaxCheckUnavailable).toEqual([
      { path: "slow.ts", reason: expect.stringMatching(/gave up|took longer/) },
    ]);
    expect(tool.toModelOutput(slow).output).toMatch(
      /\nSyntax diagnostics unavailable for slow\.ts: .+\. It was written unchecked\.$/,
    );
    // The host's event loop ran all along: the parse happened elsewhere.
    // (The check runs past the parser's 2 s limit: some hundred 10 ms ticks; blocked, a handful.)
    expect(ticks).toBeGreaterThan(20);
    await put("next.ts", "const a = 1;\nconst b = 2;\n");
    const next = await tool.execute({ path: "next.ts", old: "const b = 2;", new: "function(" });
    expect(next.syntaxCheckUnavailable).toBeUndefined();
    expect(next.syntaxErrors).toEqual([
      {
        path: "next.ts",
        count: 1,
        errors: [{ line: 2, message: 'unexpected "function("' }],
        edit: expect.any(Object),
      },
    ]);
  });
});
