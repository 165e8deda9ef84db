import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { useTempDir } from "@pleach/core/testing";
import { createLocalSandboxProvider } from "@pleach/sandbox";
import { describe, expect, it } from "vitest";
import { monorepoTypeServers, typeCheckSkipReason } from "../test-support/type-servers.js";
import { createCodingAgentRuntime } from "./agent-runtime.js";
import { createScriptedModel } from "./models/scripted.js";

const bundled = monorepoTypeServers();
const skipReason = await typeCheckSkipReason();

describe("the runtime's diagnostics option", () => {
  it('refuses a value other than "syntax" or "types"', () => {
    expect(() =>
      createCodingAgentRuntime({
        sandboxProvider: createLocalSandboxProvider(),
        model: createScriptedModel({ steps: [] }),
        diagnostics: "lint" as "types",
      }),
    ).toThrow('diagnostics must be "syntax" or "types", got "lint"');
  });

  it.skipIf(skipReason !== undefined)(
    `with "types", an edit's result shows the model the type error it made${skipReason === undefined ? "" : ` (skipped: ${skipReason})`}`,
    async () => {
      const root = await useTempDir("pleach-runtime-types-");
      await writeFile(path.join(root, "count.ts"), "export const count: number = 1;\n");
      const model = createScriptedModel({
        steps: [
          { toolCalls: [{ name: "read_file", input: { path: "count.ts" } }] },
          {
            toolCalls: [
              {
                name: "edit_file",
                input: { path: "count.ts", old: "= 1;", new: '= "one";' },
              },
            ],
          },
          { text: "Done." },
        ],
      });
      const runtime = createCodingAgentRuntime({
        sandboxProvider: createLocalSandboxProvider({
          root,
          allowReads: bundled?.readFolders ?? [],
        }),
        model,
        diagnostics: "types",
        typeDiagnostics: { servers: bundled?.servers ?? {}, timeoutMs: 60_000 },
      });
      const result = await runtime.run({ task: "Break the count" }).result;
      expect(result.stopReason).toBe("final-answer");
      const edit = result.transcript.find(
        (message) => message.role === "tool" && message.content.includes("edited count.ts"),
      );
      expect(edit?.content).toContain(
        "Type check (TypeScript): the change introduced 1 type error in count.ts: line 1: Type 'string' is not assignable to type 'number'. (TS2322)",
      );
      expect(await readFile(path.join(root, "count.ts"), "utf8")).toBe(
        'export const count: number = "one";\n',
      );
    },
    120_000,
  );
});
