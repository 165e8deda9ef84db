import Anthropic from "@anthropic-ai/sdk";
import { generateText, stepCountIs } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool } from "../define-tool.js";
import { ToolError } from "../errors.js";
import { toAISDKTools } from "./ai-sdk.js";
import { runAnthropicToolUse, toAnthropicTools } from "./anthropic.js";
import {
  runOpenAIApplyPatchCall,
  runOpenAIChatToolCall,
  runOpenAIResponsesToolCall,
  runOpenAIShellCall,
  toOpenAIChatTools,
  toOpenAIResponsesNativeTools,
  toOpenAIResponsesTools,
} from "./openai.js";

const notes = new Map([["a.md", "line 1\nline 2\nline 3"]]);
const seen: unknown[] = [];

const readNote = defineTool({
  name: "read_note",
  description: "Read a note.",
  inputSchema: z.strictObject({
    path: z.string().min(1).describe("the note"),
    limit: z.number().int().min(1).optional().describe("lines to read"),
    from: z.enum(["head", "tail"]).default("head"),
  }),
  outputSchema: z.object({ text: z.string() }),
  annotations: { title: "Read note", readOnlyHint: true },
  execute: async (input) => {
    seen.push(input);
    const note = notes.get(input.path);
    if (note === undefined) throw new ToolError("NOT_FOUND", `no such note: ${input.path}`);
    const lines = note.split("\n");
    const limit = input.limit ?? lines.length;
    const picked = input.from === "head" ? lines.slice(0, limit) : lines.slice(-limit);
    return { text: picked.join("\n") };
  },
  toModelOutput: (output) => ({ output: output.text, error: false }),
});
const tools = [readNote];

/** A `fetch` that answers each request with the next canned JSON body and records the requests. */
function cannedFetch(bodies: unknown[]) {
  const requests: Array<{ url: string; body: Record<string, unknown> }> = [];
  const fetch = async (url: string | URL | Request, init?: RequestInit) => {
    requests.push({ url: String(url), body: JSON.parse(String(init?.body)) });
    const next = bodies.shift();
    return new Response(JSON.stringify(next), {
      status: 200,
      headers: { "content-type": "application/json" },
    });
  };
  return { fetch, requests };
}

describe("AI SDK adapter", () => {
  it("runs a tool call end to end with the AI SDK's mock model", async () => {
    const usage = {
      inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
      outputTokens: { total: 1, text: 1, reasoning: 0 },
    };
    const model = new MockLanguageModelV3({
      doGenerate: [
        {
          content: [
            {
              type: "tool-call",
              toolCallId: "call-1",
              toolName: "read_note",
              input: JSON.stringify({ path: "a.md", limit: 2 }),
            },
          ],
          finishReason: { unified: "tool-calls", raw: "tool_calls" },
          usage,
          warnings: [],
        },
        {
          content: [
            {
              type: "tool-call",
              toolCallId: "call-2",
              toolName: "read_note",
              input: JSON.stringify({ path: "missing.md" }),
            },
          ],
          finishReason: { unified: "tool-calls", raw: "tool_calls" },
          usage,
          warnings: [],
        },
        {
          content: [{ type: "text", text: "done" }],
          finishReason: { unified: "stop", raw: "stop" },
          usage,
          warnings: [],
        },
      ],
    });
    const result = await generateText({
      model,
      tools: toAISDKTools(tools),
      prompt: "read a.md",
      stopWhen: stepCountIs(5),
    });
    expect(result.text).toBe("done");
    expect(result.steps[0]?.toolResults).toEqual([
      expect.objectContaining({ toolCallId: "call-1", output: { text: "line 1\nline 2" } }),
    ]);
    // What the model was shown: the tool's text rendering, and the ToolError's message.
    const lastPrompt = JSON.stringify(model.doGenerateCalls[2]?.prompt);
    expect(lastPrompt).toContain('"type":"text","value":"line 1\\nline 2"');
    expect(lastPrompt).toContain("no such note: missing.md");
    // The AI SDK offered the tool with pleach's JSON Schema.
    expect(model.doGenerateCalls[0]?.tools).toEqual([
      expect.objectContaining({
        type: "function",
        name: "read_note",
        inputSchema: expect.objectContaining({ required: ["path"] }),
      }),
    ]);
  });
});

describe("OpenAI adapter", () => {
  it("defines strict Chat Completions tools and maps nulls back to absent", async () => {
    const [definition] = toOpenAIChatTools(tools, { strict: true });
    expect(definition).toMatchInlineSnapshot(`
      {
        "function": {
          "description": "Read a note.",
          "name": "read_note",
          "parameters": {
            "additionalProperties": false,
            "properties": {
              "from": {
                "description": "(default: "head")",
                "enum": [
                  "head",
                  "tail",
                  null,
                ],
                "type": [
                  "string",
                  "null",
                ],
              },
              "limit": {
                "description": "lines to read",
                "minimum": 1,
                "type": [
                  "integer",
                  "null",
                ],
              },
              "path": {
                "description": "the note",
                "type": "string",
              },
            },
            "required": [
              "path",
              "limit",
              "from",
            ],
            "type": "object",
          },
          "strict": true,
        },
        "type": "function",
      }
    `);
    const { fetch, requests } = cannedFetch([
      {
        id: "chatcmpl-1",
        object: "chat.completion",
        created: 1,
        model: "gpt-test",
        choices: [
          {
            index: 0,
            finish_reason: "tool_calls",
            message: {
              role: "assistant",
              content: null,
              tool_calls: [
                {
                  id: "call_1",
                  type: "function",
                  function: {
                    name: "read_note",
                    arguments: '{"path":"a.md","limit":null,"from":null}',
                  },
                },
              ],
            },
          },
        ],
      },
      {
        id: "chatcmpl-2",
        object: "chat.completion",
        created: 2,
        model: "gpt-test",
        choices: [
          { index: 0, finish_reason: "stop", message: { role: "assistant", content: "ok" } },
        ],
      },
    ]);
    const client = new OpenAI({ apiKey: "sk-test", fetch, maxRetries: 0 });
    const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [
      { role: "user", content: "read a.md" },
    ];
    const first = await client.chat.completions.create({
      model: "gpt-test",
      messages,
      tools: toOpenAIChatTools(tools, { strict: true }),
    });
    const message = first.choices[0]?.message;
    if (message === undefined) throw new Error("no message");
    messages.push(message);
    seen.length = 0;
    for (const toolCall of message.tool_calls ?? []) {
      if (toolCall.type !== "function") continue;
      messages.push(await runOpenAIChatToolCall({ tools, toolCall, strict: true }));
    }
    // The nulls were read as absent: the default applied, no limit.
    expect(seen).toEqual([{ path: "a.md", from: "head" }]);
    await client.chat.completions.create({ model: "gpt-test", messages });
    expect(requests[0]?.body.tools).toEqual(toOpenAIChatTools(tools, { strict: true }));
    expect(requests[1]?.body.messages).toContainEqual({
      role: "tool",
      tool_call_id: "call_1",
      content: "line 1\nline 2\nline 3",
    });
  });

  it("runs a Responses API function call and reports failures as output", async () => {
    const { fetch, requests } = cannedFetch([
      {
        id: "resp_1",
        object: "response",
        created_at: 1,
        model: "gpt-test",
        status: "completed",
        output: [
          {
            type: "function_call",
            id: "fc_1",
            call_id: "call_9",
            name: "read_note",
            arguments: '{"path":"nope.md","limit":null,"from":"tail"}',
            status: "completed",
          },
        ],
      },
    ]);
    const client = new OpenAI({ apiKey: "sk-test", fetch, maxRetries: 0 });
    const response = await client.responses.create({
      model: "gpt-test",
      input: "read nope.md",
      tools: toOpenAIResponsesTools(tools, { strict: true }),
    });
    expect(requests[0]?.body.tools).toEqual([
      expect.objectContaining({ type: "function", name: "read_note", strict: true }),
    ]);
    const call = response.output.find((item) => item.type === "function_call");
    if (call?.type !== "function_call") throw new Error("no function call");
    expect(await runOpenAIResponsesToolCall({ tools, call, strict: true })).toEqual({
      type: "function_call_output",
      call_id: "call_9",
      output: "no such note: nope.md",
    });
  });

  it("without strict, a null is refused by validation, and bad JSON is an error result", async () => {
    const [plain] = toOpenAIResponsesTools(tools);
    expect(plain).toMatchObject({ strict: false, parameters: { required: ["path"] } });
    const withNull = await runOpenAIResponsesToolCall({
      tools,
      call: { type: "function_call", call_id: "c", name: "read_note", arguments: '{"path":null}' },
    });
    expect(withNull.output).toContain("read_note got invalid input");
    const broken = await runOpenAIResponsesToolCall({
      tools,
      call: { type: "function_call", call_id: "c", name: "read_note", arguments: "{path" },
    });
    expect(broken.output).toContain("the arguments of read_note are not valid JSON");
    const unknown = await runOpenAIResponsesToolCall({
      tools,
      call: { type: "function_call", call_id: "c", name: "nope", arguments: "{}" },
    });
    expect(unknown.output).toBe('there is no tool named "nope"; the tools are: read_note');
  });
});

describe("Anthropic adapter", () => {
  it("defines input_schema tools and answers tool_use with tool_result blocks", async () => {
    expect(toAnthropicTools(tools)).toEqual([
      {
        name: "read_note",
        description: "Read a note.",
        input_schema: expect.objectContaining({ type: "object", required: ["path"] }),
      },
    ]);
    const { fetch, requests } = cannedFetch([
      {
        id: "msg_1",
        type: "message",
        role: "assistant",
        model: "claude-test",
        stop_reason: "tool_use",
        stop_sequence: null,
        usage: { input_tokens: 1, output_tokens: 1 },
        content: [
          { type: "tool_use", id: "toolu_1", name: "read_note", input: { path: "a.md", limit: 1 } },
          { type: "tool_use", id: "toolu_2", name: "read_note", input: { path: "../x" } },
        ],
      },
      {
        id: "msg_2",
        type: "message",
        role: "assistant",
        model: "claude-test",
        stop_reason: "end_turn",
        stop_sequence: null,
        usage: { input_tokens: 1, output_tokens: 1 },
        content: [{ type: "text", text: "ok" }],
      },
    ]);
    const client = new Anthropic({ apiKey: "test", fetch, maxRetries: 0 });
    const messages: Anthropic.Messages.MessageParam[] = [{ role: "user", content: "read a.md" }];
    const first = await client.messages.create({
      model: "claude-test",
      max_tokens: 100,
      messages,
      tools: toAnthropicTools(tools),
    });
    messages.push({ role: "assistant", content: first.content });
    const results: Anthropic.Messages.ToolResultBlockParam[] = [];
    for (const block of first.content) {
      if (block.type === "tool_use")
        results.push(await runAnthropicToolUse({ tools, toolUse: block }));
    }
    messages.push({ role: "user", content: results });
    await client.messages.create({ model: "claude-test", max_tokens: 100, messages });
    expect(requests[0]?.body.tools).toEqual(toAnthropicTools(tools));
    expect((requests[1]?.body.messages as unknown[] | undefined)?.[2]).toEqual({
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: "toolu_1", content: "line 1", is_error: false },
        {
          type: "tool_result",
          tool_use_id: "toolu_2",
          content: "no such note: ../x",
          is_error: true,
        },
      ],
    });
  });
});

describe("OpenAI Responses built-in tools", () => {
  const patches: string[] = [];
  const applyDiff = defineTool({
    name: "apply_diff",
    description: "Apply a diff.",
    inputSchema: z.strictObject({ path: z.string(), diff: z.string() }),
    outputSchema: z.object({ ok: z.boolean() }),
    execute: async ({ diff }) => {
      patches.push(diff);
      if (diff.includes("missing.txt"))
        throw new ToolError("NOT_FOUND", "missing.txt: no such file");
      return { ok: true };
    },
    toModelOutput: () => ({ output: "applied 1 hunk(s)", error: false }),
  });
  const bash = defineTool({
    name: "bash",
    description: "Run a command.",
    inputSchema: z.strictObject({ command: z.string().min(1), timeout: z.number().optional() }),
    outputSchema: z.object({
      output: z.string(),
      exitCode: z.number().nullable(),
      timedOut: z.boolean(),
    }),
    execute: async ({ command, timeout }) =>
      command === "sleep 9"
        ? { output: `[timed out after ${timeout} ms]`, exitCode: null, timedOut: true }
        : {
            output: `ran ${command}${command === "false" ? "\n[exit 1]" : ""}`,
            exitCode: command === "false" ? 1 : 0,
            timedOut: false,
          },
    toModelOutput: (output) => ({ output: output.output, error: output.exitCode !== 0 }),
  });
  const native = [applyDiff, bash, readNote];

  it("offers apply_diff and bash as apply_patch and shell, the others as functions", async () => {
    const { fetch, requests } = cannedFetch([
      {
        id: "resp_1",
        object: "response",
        created_at: 1,
        model: "gpt-test",
        status: "completed",
        output: [
          {
            type: "apply_patch_call",
            id: "apc_1",
            call_id: "call_p",
            status: "completed",
            operation: {
              type: "update_file",
              path: "src/a.ts",
              diff: "@@ function a() {\n-  return 1;\n+  return 2;\n",
            },
          },
          {
            type: "shell_call",
            id: "sh_1",
            call_id: "call_s",
            status: "completed",
            environment: null,
            action: {
              commands: ["ls", "false", "sleep 9"],
              timeout_ms: 500,
              max_output_length: 1000,
            },
          },
        ],
      },
    ]);
    const client = new OpenAI({ apiKey: "sk-test", fetch, maxRetries: 0 });
    const response = await client.responses.create({
      model: "gpt-test",
      input: "fix a",
      tools: toOpenAIResponsesNativeTools(native),
    });
    expect(requests[0]?.body.tools).toEqual([
      { type: "apply_patch" },
      { type: "shell", environment: { type: "local" } },
      expect.objectContaining({ type: "function", name: "read_note" }),
    ]);
    const [patchCall, shellCall] = response.output;
    if (patchCall?.type !== "apply_patch_call" || shellCall?.type !== "shell_call") {
      throw new Error("unexpected output");
    }
    expect(await runOpenAIApplyPatchCall({ tools: native, call: patchCall })).toEqual({
      type: "apply_patch_call_output",
      call_id: "call_p",
      status: "completed",
      output: "applied 1 hunk(s)",
    });
    expect(patches.at(-1)).toBe(
      "*** Begin Patch\n*** Update File: src/a.ts\n@@ function a() {\n-  return 1;\n+  return 2;\n*** End Patch\n",
    );
    expect(await runOpenAIShellCall({ tools: native, call: shellCall })).toEqual({
      type: "shell_call_output",
      call_id: "call_s",
      max_output_length: 1000,
      output: [
        { stdout: "ran ls", stderr: "", outcome: { type: "exit", exit_code: 0 } },
        { stdout: "ran false\n[exit 1]", stderr: "", outcome: { type: "exit", exit_code: 1 } },
        { stdout: "[timed out after 500 ms]", stderr: "", outcome: { type: "timeout" } },
      ],
    });
  });

  it("maps create and delete operations to V4A, and a refusal to status failed", async () => {
    await runOpenAIApplyPatchCall({
      tools: native,
      call: {
        call_id: "c1",
        operation: { type: "create_file", path: "n.txt", diff: "+one\ntwo\n" },
      },
    });
    expect(patches.at(-1)).toBe(
      "*** Begin Patch\n*** Add File: n.txt\n+one\n+two\n*** End Patch\n",
    );
    const failed = await runOpenAIApplyPatchCall({
      tools: native,
      call: { call_id: "c2", operation: { type: "delete_file", path: "missing.txt" } },
    });
    expect(patches.at(-1)).toBe("*** Begin Patch\n*** Delete File: missing.txt\n*** End Patch\n");
    expect(failed).toEqual({
      type: "apply_patch_call_output",
      call_id: "c2",
      status: "failed",
      output: "missing.txt: no such file",
    });
    const noShell = await runOpenAIShellCall({
      tools: [readNote],
      call: {
        call_id: "c3",
        action: { commands: ["ls"], timeout_ms: null, max_output_length: null },
      },
    });
    expect(noShell.output).toEqual([
      {
        stdout: "",
        stderr: 'there is no tool named "bash"; the tools are: read_note',
        outcome: { type: "exit", exit_code: 1 },
      },
    ]);
  });
});
