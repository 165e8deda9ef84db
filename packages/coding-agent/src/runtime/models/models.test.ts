import { readFile, writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { useTempDir } from "@pleach/core/testing";
import { createLocalSandboxProvider } from "@pleach/sandbox";
import { MockLanguageModelV3 } from "ai/test";
import { afterEach, describe, expect, it } from "vitest";
import { createCodingAgentRuntime } from "../agent-runtime.js";
import type { ModelRequest } from "../model.js";
import { createAISDKModel } from "./ai-sdk.js";
import { createAnthropicModel } from "./anthropic.js";
import { createOpenAIChatModel } from "./openai-chat.js";
import { createOpenAIResponsesModel } from "./openai-responses.js";

interface Recorded {
  path: string;
  headers: IncomingMessage["headers"];
  body: Record<string, unknown>;
}

type Reply = { status: number; body: unknown; headers?: Record<string, string> };

const servers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of servers.splice(0)) await close();
});

/** A local server that answers each request with the next reply, recording what it got. */
async function fakeProvider(replies: Reply[]) {
  const requests: Recorded[] = [];
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    let text = "";
    request.on("data", (chunk) => {
      text += chunk;
    });
    request.on("end", () => {
      requests.push({ path: request.url ?? "", headers: request.headers, body: JSON.parse(text) });
      const reply = replies.shift() ?? { status: 500, body: { error: { message: "no reply" } } };
      response.writeHead(reply.status, { "content-type": "application/json", ...reply.headers });
      response.end(JSON.stringify(reply.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  servers.push(() => new Promise((resolve) => server.close(() => resolve())));
  const { port } = server.address() as AddressInfo;
  return { baseURL: `http://127.0.0.1:${port}`, requests };
}

const request: ModelRequest = {
  system: "You are a coding agent.",
  tools: [
    {
      name: "read_file",
      description: "Read a file.",
      parameters: {
        $schema: "https://json-schema.org/draft/2020-12/schema",
        type: "object",
        properties: { path: { type: "string" } },
        required: ["path"],
      },
    },
  ],
  messages: [
    { role: "user", content: "Fix the bug." },
    {
      role: "assistant",
      content: "Reading.",
      toolCalls: [{ id: "call_1", name: "read_file", input: { path: "a.js" } }],
    },
    {
      role: "tool",
      toolCallId: "call_1",
      toolName: "read_file",
      content: '<tool_output tool="read_file">\nx\n</tool_output>',
      isError: false,
    },
  ],
};

describe("createOpenAIChatModel", () => {
  const toolCallReply: Reply = {
    status: 200,
    body: {
      id: "chatcmpl-1",
      object: "chat.completion",
      choices: [
        {
          index: 0,
          message: {
            role: "assistant",
            content: null,
            tool_calls: [
              {
                id: "call_2",
                type: "function",
                function: { name: "edit_file", arguments: '{"path":"a.js","old":"x","new":"y"}' },
              },
              { id: "call_3", type: "function", function: { name: "bash", arguments: "{oops" } },
            ],
          },
          finish_reason: "tool_calls",
        },
      ],
      usage: { prompt_tokens: 120, completion_tokens: 30, total_tokens: 150 },
    },
  };

  it("sends messages and tools in the Chat Completions format and reads tool calls back", async () => {
    const { baseURL, requests } = await fakeProvider([toolCallReply]);
    const model = createOpenAIChatModel({
      baseURL: `${baseURL}/v1`,
      apiKey: "sk-test",
      model: "gpt-test",
    });
    const response = await model.generate(request);
    expect(response).toEqual({
      text: "",
      toolCalls: [
        { id: "call_2", name: "edit_file", input: { path: "a.js", old: "x", new: "y" } },
        { id: "call_3", name: "bash", input: "{oops", inputError: expect.any(String) },
      ],
      usage: { inputTokens: 120, outputTokens: 30 },
      stopReason: "tool_calls",
    });
    const [sent] = requests;
    expect(sent?.path).toBe("/v1/chat/completions");
    expect(sent?.headers.authorization).toBe("Bearer sk-test");
    expect(sent?.body).toMatchObject({
      model: "gpt-test",
      messages: [
        { role: "system", content: "You are a coding agent." },
        { role: "user", content: "Fix the bug." },
        {
          role: "assistant",
          content: "Reading.",
          tool_calls: [
            {
              id: "call_1",
              type: "function",
              function: { name: "read_file", arguments: '{"path":"a.js"}' },
            },
          ],
        },
        { role: "tool", tool_call_id: "call_1", content: expect.stringContaining("<tool_output") },
      ],
      tools: [{ type: "function", function: { name: "read_file", description: "Read a file." } }],
    });
    const tools = sent?.body.tools as Array<{ function: { parameters: object } }>;
    expect(tools[0]?.function.parameters).not.toHaveProperty("$schema");
  });

  it("retries 429 and 5xx, honouring retry-after", async () => {
    const { baseURL, requests } = await fakeProvider([
      { status: 429, body: { error: { message: "slow down" } }, headers: { "retry-after": "0" } },
      { status: 500, body: { error: { message: "oops" } } },
      { status: 503, body: "unavailable" },
      {
        status: 200,
        body: { choices: [{ message: { content: "All done." }, finish_reason: "stop" }] },
      },
    ]);
    const model = createOpenAIChatModel({
      baseURL,
      model: "local",
      initialBackoffMs: 1,
    });
    await expect(model.generate(request)).resolves.toMatchObject({
      text: "All done.",
      toolCalls: [],
    });
    expect(requests).toHaveLength(4);
    expect(requests[0]?.headers.authorization).toBeUndefined();
  });

  it("says to check the key on 401 and the model name on 404, without retrying", async () => {
    const { baseURL, requests } = await fakeProvider([
      {
        status: 401,
        body: {
          error: {
            message: "Incorrect API key provided: sk-bad.",
            type: "invalid_request_error",
            code: "invalid_api_key",
          },
        },
      },
      {
        status: 404,
        body: {
          error: {
            message: "The model `gpt-nope` does not exist or you do not have access to it.",
            type: "invalid_request_error",
            code: "model_not_found",
          },
        },
      },
    ]);
    const bad = createOpenAIChatModel({ baseURL, apiKey: "sk-bad", model: "gpt-nope" });
    await expect(bad.generate(request)).rejects.toMatchObject({
      kind: "authentication",
      status: 401,
      message: expect.stringContaining("Check OPENAI_API_KEY"),
    });
    await expect(bad.generate(request)).rejects.toMatchObject({
      kind: "unknown-model",
      message: expect.stringMatching(/does not know the model "gpt-nope".*does not exist/),
    });
    expect(requests).toHaveLength(2);
  });

  it("gives up after the retries with the provider's message", async () => {
    const { baseURL } = await fakeProvider([
      { status: 500, body: { error: { message: "boom" } } },
      { status: 500, body: { error: { message: "boom" } } },
    ]);
    const model = createOpenAIChatModel({
      baseURL,
      model: "m",
      maxRetries: 1,
      initialBackoffMs: 1,
    });
    await expect(model.generate(request)).rejects.toMatchObject({
      kind: "server",
      message: "openai failed with HTTP 500 after 2 attempts: boom. Try again later.",
    });
  });
});

describe("createAnthropicModel", () => {
  it("sends the Messages format with tool results in a user turn and reads tool_use back", async () => {
    const { baseURL, requests } = await fakeProvider([
      {
        status: 529,
        body: { type: "error", error: { type: "overloaded_error", message: "Overloaded" } },
      },
      {
        status: 200,
        body: {
          id: "msg_1",
          type: "message",
          role: "assistant",
          model: "claude-test",
          content: [
            { type: "text", text: "Editing." },
            {
              type: "tool_use",
              id: "toolu_1",
              name: "edit_file",
              input: { path: "a.js", old: "x", new: "y" },
            },
          ],
          stop_reason: "tool_use",
          usage: { input_tokens: 200, output_tokens: 40 },
        },
      },
    ]);
    const model = createAnthropicModel({
      baseURL,
      apiKey: "sk-ant-test",
      model: "claude-test",
      initialBackoffMs: 1,
    });
    const response = await model.generate(request);
    expect(response).toEqual({
      text: "Editing.",
      toolCalls: [
        { id: "toolu_1", name: "edit_file", input: { path: "a.js", old: "x", new: "y" } },
      ],
      usage: { inputTokens: 200, outputTokens: 40 },
      stopReason: "tool_use",
    });
    expect(requests).toHaveLength(2);
    const sent = requests[1];
    expect(sent?.path).toBe("/v1/messages");
    expect(sent?.headers["x-api-key"]).toBe("sk-ant-test");
    expect(sent?.headers["anthropic-version"]).toBe("2023-06-01");
    expect(sent?.body).toMatchObject({
      model: "claude-test",
      system: "You are a coding agent.",
      max_tokens: 4096,
      messages: [
        { role: "user", content: [{ type: "text", text: "Fix the bug." }] },
        {
          role: "assistant",
          content: [
            { type: "text", text: "Reading." },
            { type: "tool_use", id: "call_1", name: "read_file", input: { path: "a.js" } },
          ],
        },
        {
          role: "user",
          content: [{ type: "tool_result", tool_use_id: "call_1", content: expect.any(String) }],
        },
      ],
      tools: [{ name: "read_file", description: "Read a file.", input_schema: { type: "object" } }],
    });
  });

  it("says to check the key on 401 and the model on 404", async () => {
    const { baseURL } = await fakeProvider([
      {
        status: 401,
        body: {
          type: "error",
          error: { type: "authentication_error", message: "invalid x-api-key" },
        },
      },
      {
        status: 404,
        body: { type: "error", error: { type: "not_found_error", message: "model: claude-nope" } },
      },
    ]);
    const model = createAnthropicModel({ baseURL, apiKey: "bad", model: "claude-nope" });
    await expect(model.generate(request)).rejects.toMatchObject({
      kind: "authentication",
      message:
        "anthropic refused the API key (HTTP 401: invalid x-api-key). Check ANTHROPIC_API_KEY.",
    });
    await expect(model.generate(request)).rejects.toMatchObject({
      kind: "unknown-model",
      message: expect.stringContaining("model: claude-nope"),
    });
  });
});

describe("an HTTP model's answer without its body", () => {
  it("is an invalid-response error naming the provider, what is missing and the answer", async () => {
    const { baseURL } = await fakeProvider([
      { status: 200, body: { id: "chat-1" } },
      { status: 200, body: { id: "msg-1" } },
      { status: 200, body: { id: "resp-1" } },
    ]);
    const models = [
      createOpenAIChatModel({ baseURL, model: "m" }),
      createAnthropicModel({ baseURL, apiKey: "k", model: "m" }),
      createOpenAIResponsesModel({ baseURL, model: "m" }),
    ];
    const expected = [
      'openai answered without a message: {"id":"chat-1"}',
      'anthropic answered without content: {"id":"msg-1"}',
      'openai answered without output: {"id":"resp-1"}',
    ];
    for (const [index, model] of models.entries()) {
      await expect(model.generate(request)).rejects.toMatchObject({
        kind: "invalid-response",
        message: expected[index],
      });
    }
  });
});

describe("createAISDKModel", () => {
  it("drives any AI SDK language model through doGenerate", async () => {
    const mock = new MockLanguageModelV3({
      doGenerate: async () => ({
        content: [
          { type: "text", text: "Reading." },
          {
            type: "tool-call",
            toolCallId: "tc_1",
            toolName: "read_file",
            input: '{"path":"b.js"}',
          },
        ],
        finishReason: { unified: "tool-calls", raw: "tool_calls" },
        usage: {
          inputTokens: { total: 11, noCache: 11, cacheRead: 0, cacheWrite: 0 },
          outputTokens: { total: 7, text: 7, reasoning: 0 },
        },
        warnings: [],
      }),
    });
    const model = createAISDKModel({ model: mock });
    const response = await model.generate(request);
    expect(response).toEqual({
      text: "Reading.",
      toolCalls: [{ id: "tc_1", name: "read_file", input: { path: "b.js" } }],
      usage: { inputTokens: 11, outputTokens: 7 },
      stopReason: "tool-calls",
    });
    const [call] = mock.doGenerateCalls;
    expect(call?.prompt).toMatchObject([
      { role: "system", content: "You are a coding agent." },
      { role: "user", content: [{ type: "text", text: "Fix the bug." }] },
      {
        role: "assistant",
        content: [
          { type: "text", text: "Reading." },
          {
            type: "tool-call",
            toolCallId: "call_1",
            toolName: "read_file",
            input: { path: "a.js" },
          },
        ],
      },
      {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: "call_1",
            output: { type: "text", value: expect.stringContaining("x") },
          },
        ],
      },
    ]);
    expect(call?.tools).toMatchObject([{ type: "function", name: "read_file" }]);
  });
});

describe("native tools in the runtime", () => {
  it("an Anthropic model with nativeTools offers bash and the text editor and runs their calls", async () => {
    const root = await useTempDir("pleach-native-runtime-");
    await writeFile(path.join(root, "app.py"), "def main():\n    return 41\n");
    const usage = { input_tokens: 1, output_tokens: 1 };
    const { baseURL, requests } = await fakeProvider([
      {
        status: 200,
        body: {
          stop_reason: "tool_use",
          usage,
          content: [
            {
              type: "tool_use",
              id: "toolu_edit",
              name: "str_replace_based_edit_tool",
              input: {
                command: "str_replace",
                path: "app.py",
                old_str: "return 41",
                new_str: "return 42",
              },
            },
            {
              type: "tool_use",
              id: "toolu_view",
              name: "str_replace_based_edit_tool",
              input: { command: "view", path: "app.py", view_range: [2, -1] },
            },
            {
              type: "tool_use",
              id: "toolu_bash",
              name: "bash",
              input: { command: "grep -c return app.py" },
            },
          ],
        },
      },
      {
        status: 200,
        body: { stop_reason: "end_turn", usage, content: [{ type: "text", text: "done" }] },
      },
    ]);
    const model = createAnthropicModel({
      model: "claude-test",
      apiKey: "k",
      baseURL,
      fetch,
      nativeTools: true,
    });
    const result = await createCodingAgentRuntime({
      sandboxProvider: createLocalSandboxProvider({ root }),
      model,
    }).run({ task: "make main return 42" }).result;
    expect(result.stopReason).toBe("final-answer");
    expect(await readFile(path.join(root, "app.py"), "utf8")).toBe("def main():\n    return 42\n");
    const declared = requests[0]?.body.tools as Array<{ name: string; type?: string }> | undefined;
    const offered = (declared ?? []).map((tool) => tool.type ?? tool.name);
    expect(offered).toContain("bash_20250124");
    expect(offered).toContain("text_editor_20250728");
    for (const covered of ["bash", "read_file", "write_file", "edit_file", "list_files"]) {
      expect(offered).not.toContain(covered);
    }
    expect(offered).toContain("apply_diff");
    const answers = JSON.stringify(requests[1]?.body.messages);
    expect(answers).toContain("Successfully replaced text at exactly one location.");
    expect(answers).toContain("2:     return 42");
    const turns = requests[1]?.body.messages as
      | Array<{ content: Array<Record<string, unknown>> }>
      | undefined;
    const bash = (turns ?? [])
      .flatMap((message) => message.content)
      .find((block) => block.tool_use_id === "toolu_bash");
    expect(bash?.content).toBe('<tool_output tool="bash">\n1\n\n</tool_output>');
  });

  it("an OpenAI Responses model with nativeTools offers apply_patch and shell and runs their calls", async () => {
    const root = await useTempDir("pleach-native-runtime-");
    await writeFile(path.join(root, "app.js"), "export const answer = 41;\n");
    const { baseURL, requests } = await fakeProvider([
      {
        // The session's file state wants a file read before a patch changes it.
        status: 200,
        body: {
          status: "completed",
          output: [
            {
              type: "function_call",
              call_id: "call_read",
              name: "read_file",
              arguments: '{"path":"app.js"}',
            },
          ],
        },
      },
      {
        status: 200,
        body: {
          status: "completed",
          output: [
            {
              type: "apply_patch_call",
              id: "apc_1",
              call_id: "call_patch",
              status: "completed",
              operation: {
                type: "update_file",
                path: "app.js",
                diff: "@@\n-export const answer = 41;\n+export const answer = 42;\n",
              },
            },
            {
              type: "shell_call",
              id: "sh_1",
              call_id: "call_shell",
              status: "completed",
              action: {
                commands: ["cat app.js", "exit 3"],
                timeout_ms: 10_000,
                max_output_length: null,
              },
            },
          ],
        },
      },
      {
        status: 200,
        body: {
          status: "completed",
          output: [
            {
              type: "message",
              role: "assistant",
              content: [{ type: "output_text", text: "done" }],
            },
          ],
        },
      },
    ]);
    const model = createOpenAIResponsesModel({
      model: "gpt-test",
      apiKey: "k",
      baseURL,
      fetch,
      nativeTools: true,
    });
    const result = await createCodingAgentRuntime({
      sandboxProvider: createLocalSandboxProvider({ root }),
      model,
    }).run({ task: "make answer 42" }).result;
    expect(result.stopReason).toBe("final-answer");
    expect(await readFile(path.join(root, "app.js"), "utf8")).toBe("export const answer = 42;\n");
    expect(requests[0]?.path).toBe("/responses");
    const offered = requests[0]?.body.tools as Array<{ type: string; name?: string }>;
    expect(offered).toContainEqual({ type: "apply_patch" });
    expect(offered).toContainEqual({ type: "shell", environment: { type: "local" } });
    expect(offered.map((tool) => tool.name)).not.toContain("bash");
    const input = requests[2]?.body.input as Array<Record<string, unknown>>;
    expect(input).toContainEqual(
      expect.objectContaining({ type: "function_call_output", call_id: "call_read" }),
    );
    expect(input).toContainEqual(
      expect.objectContaining({ type: "apply_patch_call", call_id: "call_patch" }),
    );
    expect(input).toContainEqual(
      expect.objectContaining({
        type: "apply_patch_call_output",
        call_id: "call_patch",
        status: "completed",
      }),
    );
    expect(input).toContainEqual({
      type: "shell_call_output",
      call_id: "call_shell",
      output: [
        {
          stdout: expect.stringContaining("export const answer = 42;"),
          stderr: "",
          outcome: { type: "exit", exit_code: 3 },
        },
      ],
    });
  });
});
