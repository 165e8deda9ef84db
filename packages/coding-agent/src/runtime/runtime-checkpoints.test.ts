import { lstatSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { useTempDir } from "@pleach/core/testing";
import { createLocalSandbox, createLocalSandboxProvider } from "@pleach/sandbox";
import { describe, expect, it } from "vitest";
import type { AgentEvent } from "./agent-events.js";
import { createCodingAgentRuntime } from "./agent-runtime.js";
import { createScriptedModel } from "./models/scripted.js";

const probe = await createLocalSandbox({ root: process.cwd() });
const commands = probe.backend !== "none";
await probe.close();

/** Every file under `root` (not `.git`), with its bytes. */
function files(root: string): Record<string, string> {
  const found: Record<string, string> = {};
  const walk = (folder: string) => {
    for (const name of readdirSync(folder)) {
      const full = path.join(folder, name);
      if (name === ".git") continue;
      if (lstatSync(full).isDirectory()) walk(full);
      else found[path.relative(root, full)] = readFileSync(full).toString("base64");
    }
  };
  walk(root);
  return found;
}

describe.skipIf(!commands)(
  `a run's checkpoints${commands ? "" : " (skipped: no OS sandbox here to run the step's command)"}`,
  () => {
    it("take one before each step's tool calls, and restore the workspace after a step that deleted, edited and made files, byte for byte", async () => {
      const root = await useTempDir();
      mkdirSync(path.join(root, "src"));
      writeFileSync(path.join(root, "src/app.ts"), "export const version = 1;\n");
      writeFileSync(path.join(root, "notes.md"), "# Notes\n\nkeep me\n");
      writeFileSync(path.join(root, "data.bin"), Buffer.from([0, 1, 2, 255]));
      const before = files(root);
      const model = createScriptedModel({
        steps: [
          { toolCalls: [{ name: "read_file", input: { path: "src/app.ts" } }] },
          {
            toolCalls: [
              {
                name: "bash",
                input: {
                  command:
                    "rm notes.md data.bin && mkdir -p gen/out && echo made > gen/out/new.txt",
                },
              },
              {
                name: "edit_file",
                input: {
                  path: "src/app.ts",
                  old: "export const version = 1;",
                  new: "export const version = 2;",
                },
              },
            ],
          },
          { text: "Done." },
        ],
      });
      const runtime = createCodingAgentRuntime({
        sandboxProvider: createLocalSandboxProvider({ root }),
        model,
      });
      const events: AgentEvent[] = [];
      const run = runtime.run({ task: "Change the version" });
      for await (const event of run) events.push(event);
      await expect(run.result).resolves.toMatchObject({ stopReason: "final-answer" });
      const taken = events.filter((event) => event.type === "checkpoint");
      expect(taken.map((event) => event.step)).toEqual([1, 2]);
      for (const event of taken)
        expect(event).toMatchObject({ checkpointId: expect.stringMatching(/^[0-9a-f]{40}$/) });
      const results = events.filter((event) => event.type === "tool-result");
      expect(results.map((event) => [event.toolName, event.error])).toEqual([
        ["read_file", false],
        ["bash", false],
        ["edit_file", false],
      ]);
      const after = files(root);
      expect(readFileSync(path.join(root, "src/app.ts"), "utf8")).toBe(
        "export const version = 2;\n",
      );
      expect(after["gen/out/new.txt"]).toBeDefined();
      expect(after["notes.md"]).toBeUndefined();
      // Undo step 2 from another client of the same workspace, as `pleach run --undo-last` does.
      const client = await createLocalSandbox({ root });
      try {
        const step2 = taken[1]?.checkpointId as string;
        const restored = await client.checkpoints.restore(step2);
        expect(files(root)).toEqual(before);
        expect(restored.removed).toEqual(["gen/out/new.txt"]);
        expect(restored.written.sort()).toEqual(["data.bin", "notes.md", "src/app.ts"]);
        expect(readdirSync(root).sort()).not.toContain("gen");
      } finally {
        await client.close();
      }
    }, 120_000);

    it("give the model undo_step, which rolls back its own step and every later one", async () => {
      const root = await useTempDir();
      writeFileSync(path.join(root, "b.txt"), "before\n");
      const before = files(root);
      const model = createScriptedModel({
        steps: [
          { toolCalls: [{ name: "read_file", input: { path: "b.txt" } }] },
          {
            toolCalls: [
              { name: "write_file", input: { path: "new/a.txt", content: "made\n" } },
              { name: "edit_file", input: { path: "b.txt", old: "before", new: "after" } },
            ],
          },
          { toolCalls: [{ name: "undo_step", input: { step: 9 } }] },
          { toolCalls: [{ name: "undo_step", input: { step: 2 } }] },
          { text: "Rolled back." },
        ],
      });
      const runtime = createCodingAgentRuntime({
        sandboxProvider: createLocalSandboxProvider({ root }),
        model,
        undoTool: true,
      });
      const events: AgentEvent[] = [];
      const run = runtime.run({ task: "Try, then roll back" });
      for await (const event of run) events.push(event);
      await expect(run.result).resolves.toMatchObject({ stopReason: "final-answer" });
      const undos = events.filter(
        (event) => event.type === "tool-result" && event.toolName === "undo_step",
      );
      expect(undos).toMatchObject([
        {
          error: true,
          code: "INVALID_INPUT",
          output: expect.stringContaining("steps that can be undone: 1, 2, 3"),
        },
        {
          error: false,
          output: expect.stringContaining("the workspace is back as it was before step 2"),
        },
      ]);
      expect(files(root)).toEqual(before);
    }, 120_000);

    it("take none when checkpoints are off", async () => {
      const root = await useTempDir();
      const runtime = createCodingAgentRuntime({
        sandboxProvider: createLocalSandboxProvider({ root }),
        model: createScriptedModel({
          steps: [{ toolCalls: [{ name: "list_files", input: {} }] }, { text: "Done." }],
        }),
        checkpoints: false,
      });
      const events: AgentEvent[] = [];
      for await (const event of runtime.run({ task: "Look" })) events.push(event);
      expect(events.some((event) => event.type === "checkpoint")).toBe(false);
    }, 60_000);
  },
);
