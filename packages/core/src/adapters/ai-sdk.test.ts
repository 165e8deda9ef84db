// pleach's tools and sandbox through the AI SDK. The same file runs against ai@6 (the suite) and
// ai@7 (vitest.node22.config.ts points `ai` at the ai@7 install, under Node 22).
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { createCodingAgentTools } from "@pleach/coding-agent/tools";
import { createLocalSandbox } from "@pleach/sandbox";
import { asSchema, generateText, stepCountIs } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toolOutputJSONSchema } from "../json-schema.js";
import type { SandboxClient } from "../sandbox/contract.js";
import { makeTempDir } from "../testing/temp-dir.js";
import { toAISDKSandboxSession, toAISDKTools } from "./ai-sdk.js";

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};
/** A model turn that calls one tool. */
const call = (toolCallId: string, toolName: string, input: unknown) => ({
  content: [{ type: "tool-call" as const, toolCallId, toolName, input: JSON.stringify(input) }],
  finishReason: { unified: "tool-calls" as const, raw: "tool_calls" },
  usage,
  warnings: [],
});
const answer = (text: string) => ({
  content: [{ type: "text" as const, text }],
  finishReason: { unified: "stop" as const, raw: "stop" },
  usage,
  warnings: [],
});
/** The smallest PNG: one transparent pixel. */
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
  "base64",
);

let root: string;
let client: SandboxClient;
let cleanup: () => Promise<void>;
beforeAll(async () => {
  ({ dir: root, cleanup } = await makeTempDir("pleach-ai-sdk-"));
  await writeFile(path.join(root, "pixel.png"), PNG);
  await writeFile(path.join(root, "notes.txt"), "one\ntwo\nthree\n");
  client = await createLocalSandbox({ root });
});
afterAll(() => cleanup());

describe("toAISDKTools", () => {
  it("runs pleach's tools in generateText: the model reads their text, and an image as an image", async () => {
    const model = new MockLanguageModelV3({
      doGenerate: [
        call("c1", "bash", { command: "printf 'hello from the sandbox'" }),
        call("c2", "read_file", { path: "pixel.png", encoding: "base64" }),
        call("c3", "read_file", { path: "absent.txt" }),
        answer("done"),
      ],
    });
    const result = await generateText({
      model,
      tools: toAISDKTools(createCodingAgentTools(client)),
      prompt: "look around",
      stopWhen: stepCountIs(6),
    });
    expect(result.text).toBe("done");
    const prompt = JSON.stringify(model.doGenerateCalls[3]?.prompt);
    // bash's text, as every face shows it (exit code first), not its JSON.
    expect(prompt).toContain("hello from the sandbox");
    expect(prompt).not.toContain('"stdout"');
    // The PNG reached the model as an image part, with its media type from its bytes.
    expect(prompt).toContain(PNG.toString("base64"));
    expect(prompt).toContain('"mediaType":"image/png"');
    expect(prompt).toContain("70 bytes of image/png, shown as an image");
    // A refusal is the model-readable error.
    expect(prompt).toMatch(/absent\.txt/);
    // execute's result is the structured output, described by the tool's output schema.
    expect(result.steps[1]?.toolResults[0]?.output).toMatchObject({
      encoding: "base64",
      bytes: 70,
    });
  });

  it("declares each tool's output schema", async () => {
    const tools = createCodingAgentTools(client);
    const readFile = tools.find((tool) => tool.name === "read_file");
    if (readFile === undefined) throw new Error("no read_file");
    const schema = toAISDKTools(tools).read_file?.outputSchema;
    if (schema === undefined) throw new Error("no outputSchema");
    expect(await asSchema(schema).jsonSchema).toEqual(toolOutputJSONSchema(readFile));
  });

  it('asks for approval before a destructive tool runs with needsApproval: "destructive", and only then', async () => {
    const tools = createCodingAgentTools(client);
    const approving = toAISDKTools(tools, { needsApproval: "destructive" });
    expect(
      Object.entries(approving)
        .filter(([, tool]) => tool.needsApproval === true)
        .map(([name]) => name)
        .sort(),
    ).toEqual(
      tools
        .filter((tool) => tool.annotations.destructiveHint && !tool.annotations.readOnlyHint)
        .map((tool) => tool.name)
        .sort(),
    );
    expect(Object.values(toAISDKTools(tools)).some((tool) => tool.needsApproval)).toBe(false);
    const model = new MockLanguageModelV3({
      doGenerate: [call("w1", "write_file", { path: "made.txt", content: "x" }), answer("no")],
    });
    const result = await generateText({
      model,
      tools: approving,
      prompt: "write",
      stopWhen: stepCountIs(3),
    });
    expect(result.content).toEqual(
      expect.arrayContaining([expect.objectContaining({ type: "tool-approval-request" })]),
    );
    // Nothing ran: the call waits for the application's answer.
    await expect(client.readFile("made.txt")).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});

describe("toAISDKSandboxSession", () => {
  it("reads, writes, lists, stats, deletes and runs through the client", async () => {
    const session = toAISDKSandboxSession(client);
    expect(await session.readTextFile({ path: "notes.txt" })).toBe("one\ntwo\nthree\n");
    expect(await session.readTextFile({ path: "notes.txt", startLine: 2, endLine: 9 })).toBe(
      "two\nthree\n",
    );
    expect(await session.readTextFile({ path: "missing.txt" })).toBeNull();
    expect(await session.readBinaryFile({ path: "pixel.png" })).toEqual(new Uint8Array(PNG));
    await session.writeTextFile({ path: "dir/new file.txt", content: "fresh" });
    await session.writeBinaryFile({ path: "dir/bytes.bin", content: new Uint8Array([0, 1, 2]) });
    await session.writeFile({
      path: "dir/streamed.txt",
      content: new Response("streamed").body as ReadableStream<Uint8Array>,
    });
    const stream = await session.readFile({ path: "dir/streamed.txt" });
    expect(await new Response(stream).text()).toBe("streamed");
    expect(await session.stat({ path: "dir/new file.txt" })).toEqual({ type: "file", size: 5 });
    expect(await session.stat({ path: "dir" })).toEqual({ type: "directory", size: 0 });
    expect(await session.stat({ path: "nowhere" })).toBeNull();
    const entries = await session.listDirectory({ path: "dir" });
    expect(entries?.sort((a, b) => a.name.localeCompare(b.name))).toEqual([
      { name: "bytes.bin", type: "file" },
      { name: "new file.txt", type: "file" },
      { name: "streamed.txt", type: "file" },
    ]);
    expect(await session.listDirectory({ path: "nowhere" })).toBeNull();
    expect(await session.deleteFile({ path: "dir/bytes.bin" })).toBe(true);
    expect(await session.deleteFile({ path: "dir/bytes.bin" })).toBe(false);
    await expect(session.deleteFile({ path: "dir" })).rejects.toThrow(/is a directory/);
    expect(
      await session.run({
        command: 'echo "$GREETING"; echo oops >&2; exit 3',
        env: { GREETING: "hi" },
      }),
    ).toEqual({ exitCode: 3, stdout: "hi\n", stderr: "oops\n" });
    expect(await session.run({ command: "pwd", workingDirectory: "dir" })).toMatchObject({
      stdout: `${path.join(root, "dir")}\n`,
    });
    const spawned = await session.spawn({ command: "echo spawned" });
    expect(await spawned.wait()).toEqual({ exitCode: 0 });
    expect(await new Response(spawned.stdout).text()).toBe("spawned\n");
    await expect(session.spawn({ command: "cat", stdin: true })).rejects.toThrow(/stdin/);
    // The sandbox's confinement holds: a path outside the workspace is refused.
    await expect(session.readTextFile({ path: "/etc/passwd" })).rejects.toMatchObject({
      code: "PATH_ESCAPE",
    });
  });
});
