import { makeTempDir } from "@pleach/core/testing";
import { createSandboxServer, type SandboxServer } from "@pleach/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fakeChatServer } from "../test-support/fake-chat-server.js";
import { runCli } from "../test-support/run-cli.js";

// `pleach run --sandbox e2b`: the agent's tools in an E2B sandbox, here one of
// `pleach sandbox serve --protocol e2b` on loopback, driven by a scripted OpenAI-compatible model.

const TOKEN = "run-e2b-token-0123456789abcdef";
let server: SandboxServer;
let root: { dir: string; cleanup(): Promise<void> };

beforeAll(async () => {
  root = await makeTempDir("pleach-run-e2b-");
  server = await createSandboxServer({ root: root.dir, token: TOKEN, protocol: "e2b" });
});
afterAll(async () => {
  await server?.close();
  await root?.cleanup();
});

function e2bEnvironment(): Record<string, string> {
  const url = server.url.href.replace(/\/$/, "");
  return { E2B_API_KEY: TOKEN, E2B_API_URL: url, E2B_SANDBOX_URL: url };
}

describe("pleach run --sandbox e2b", () => {
  it("runs the model's tool calls in an E2B sandbox until its final answer", async () => {
    const { port, received } = await fakeChatServer([
      {
        tool_calls: [
          { name: "write_file", arguments: { path: "note.txt", content: "made in e2b\n" } },
        ],
      },
      { tool_calls: [{ name: "bash", arguments: { command: "cat note.txt && pwd" } }] },
      { content: "Wrote the note." },
    ]);
    const { code, stdout, stderr } = await runCli(
      [
        ...["run", "Write a note", "--sandbox", "e2b"],
        ...["--model", `http://127.0.0.1:${port}/v1`, "--model-name", "local-model"],
      ],
      { env: e2bEnvironment() },
    );
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expect(stdout).toContain("pleach run: openai:local-model in an E2B sandbox (template base)");
    expect(stdout).toContain("→ write_file");
    expect(stdout).toContain("Wrote the note.");
    // The command ran in the sandbox the file was written to, and its output reached the model.
    expect(received).toHaveLength(3);
    expect(JSON.stringify(received[2]?.messages.at(-1))).toContain("made in e2b");
  });

  it("says what is wrong with the command line", async () => {
    const env = e2bEnvironment();
    const withWorkspace = await runCli(
      ["run", "x", "--sandbox", "e2b", "--workspace", ".", "--model", "http://127.0.0.1:9/v1"],
      { env },
    );
    expect(withWorkspace.code).toBe(2);
    expect(withWorkspace.stderr).toContain("--workspace sets up a local sandbox");
    const noKey = await runCli([
      "run",
      "x",
      "--sandbox",
      "e2b",
      "--model",
      "http://127.0.0.1:9/v1",
    ]);
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toContain("--sandbox e2b needs E2B_API_KEY");
    const other = await runCli(["run", "x", "--sandbox", "vm", "--model", "http://127.0.0.1:9/v1"]);
    expect(other.code).toBe(2);
    expect(other.stderr).toContain('--sandbox must be local or e2b, got "vm"');
    const template = await runCli([
      "run",
      "x",
      "--template",
      "t",
      "--model",
      "http://127.0.0.1:9/v1",
    ]);
    expect(template.code).toBe(2);
    expect(template.stderr).toContain("--template names an E2B template");
  });
});
