import { describe, expect, it, vi } from "vitest";
import { localWorkspace } from "../../test-support/local-workspace.js";
import { createEditFileTool } from "../edit-file/tool.js";

// A grammar that cannot load (a missing or corrupt .wasm, a runtime that fails to start) makes
// the worker's `parserFor` answer undefined and the worker answer "no-grammar"; this file stands
// in for that, as the real grammars all load.
vi.mock("./syntax-worker-client.js", async (importOriginal) => ({
  ...(await importOriginal<typeof import("./syntax-worker-client.js")>()),
  checkInWorker: async () => ({ kind: "no-grammar" }),
}));

describe("a grammar that cannot load", () => {
  it("passes the file over: the edit is written, with nothing said and nothing refused", async () => {
    const { client, put, text } = await localWorkspace();
    await put("a.ts", "export const a = 1;\n");
    const tool = createEditFileTool(client);
    const output = await tool.execute({
      path: "a.ts",
      old: "= 1;",
      new: "= (1;",
      rejectSyntaxErrors: true,
    });
    expect(output.syntaxErrors).toBeUndefined();
    expect(tool.toModelOutput(output).output).toBe("edited a.ts (1 replacement at line 1)");
    expect(await text("a.ts")).toBe("export const a = (1;\n");
  });
});
