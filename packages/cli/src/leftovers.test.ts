// End to end: `pleach call`, `pleach mcp` and `pleach run` (the built bin, as child processes)
// put nothing in the workspace while a sandboxed command runs, and, stopped by SIGINT or SIGTERM,
// still move aside what the command made at a protected path before they exit; after SIGKILL the
// command dies with them. A folder of the user's with a protected name is never touched. Needs the
// build (`npm test` builds first) and a working bubblewrap.
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, readdirSync } from "node:fs";
import { mkdir, rm, writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { hostCommandLines, hostState, makeTempDir } from "@pleach/core/testing";
import { probeSandboxBackend } from "@pleach/sandbox";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { servedUrl } from "./test-support/served-url.js";

const launcher = path.resolve(import.meta.dirname, "../bin/pleach.js");
const built = existsSync(path.resolve(import.meta.dirname, "../dist/main.js"));

const noBubblewrap =
  process.platform !== "linux"
    ? "bubblewrap runs on Linux only"
    : await probeSandboxBackend({ backend: "bubblewrap" }).then((probe) =>
        probe.available ? undefined : `no working bubblewrap: ${probe.reason}`,
      );

let workspace: string;
let runtime: string;
let before: Record<string, string>;
const cleanups: Array<() => Promise<void>> = [];
const children: ChildProcess[] = [];

beforeEach(async () => {
  if (!built) throw new Error("packages/cli is not built: run `npx tsc -b` first");
  const made = await makeTempDir("pleach-leftovers-");
  const registry = await makeTempDir("pleach-leftovers-runtime-");
  cleanups.push(made.cleanup, registry.cleanup);
  workspace = made.dir;
  runtime = registry.dir;
  await writeFile(path.join(workspace, "README.md"), "# app\n");
  // The user's own folder with a protected name, empty and read-only.
  await mkdir(path.join(workspace, ".idea"), { mode: 0o555 });
  before = await hostState([workspace]);
});
afterEach(async () => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** The environment of every pleach started here: a registry folder of the case's own. */
function environment(): NodeJS.ProcessEnv {
  return { ...process.env, XDG_RUNTIME_DIR: runtime };
}

/**
 * A command that makes `.envrc` (a protected path) and then sleeps, with a marker in its argv to
 * find it among the host's processes.
 */
function sleepCommand(): { command: string; marker: string } {
  const marker = `29.${String(Math.random()).slice(2, 10)}`;
  return { command: `echo 'echo pwned' > .envrc; sleep ${marker}`, marker };
}

async function hostProcessesWith(marker: string): Promise<string[]> {
  return hostCommandLines().filter((line) => line.includes(marker));
}

async function waitFor(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let waited = 0; !(await condition()); waited += 20) {
    if (waited > 20_000) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A local OpenAI-compatible model that asks for `command` once, then answers. */
async function scriptedModel(command: string): Promise<string> {
  let calls = 0;
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    request.resume();
    request.on("end", () => {
      calls += 1;
      const message =
        calls === 1
          ? {
              role: "assistant",
              content: null,
              tool_calls: [
                {
                  id: "call_1",
                  type: "function",
                  function: { name: "bash", arguments: JSON.stringify({ command }) },
                },
              ],
            }
          : { role: "assistant", content: "done" };
      response.writeHead(200, { "content-type": "application/json" });
      response.end(
        JSON.stringify({
          choices: [{ message, finish_reason: calls === 1 ? "tool_calls" : "stop" }],
          usage: { prompt_tokens: 1, completion_tokens: 1 },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(() => new Promise((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
}

/** Start `pleach <kind>` on the workspace, running `command` in its sandbox. */
async function start(kind: "call" | "mcp" | "run", command: string): Promise<ChildProcess> {
  const args =
    kind === "call"
      ? ["call", "bash", JSON.stringify({ command }), "--workspace", workspace]
      : kind === "mcp"
        ? ["mcp", "--workspace", workspace]
        : [
            "run",
            "wait a while",
            "--workspace",
            workspace,
            "--model",
            await scriptedModel(command),
            "--model-name",
            "scripted",
          ];
  const child = spawn(process.execPath, [launcher, ...args], {
    env: environment(),
    stdio: ["pipe", "pipe", "pipe"],
  });
  children.push(child);
  child.stdout?.resume();
  child.stderr?.resume();
  if (kind === "mcp") {
    const messages = [
      {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-06-18",
          capabilities: {},
          clientInfo: { name: "leftovers-test", version: "1" },
        },
      },
      { jsonrpc: "2.0", method: "notifications/initialized" },
      {
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: "bash", arguments: { command } },
      },
    ];
    for (const message of messages) child.stdin?.write(`${JSON.stringify(message)}\n`);
  } else {
    child.stdin?.end();
  }
  return child;
}

/** What is in the workspace now that was not before. */
function addedNow(): string[] {
  return readdirSync(workspace)
    .filter((name) => !["README.md", ".idea"].includes(name))
    .sort();
}

const cases = (["call", "mcp", "run"] as const).flatMap((kind) =>
  (["SIGINT", "SIGTERM", "SIGKILL"] as const).map((signal) => [kind, signal] as const),
);

describe.skipIf(noBubblewrap !== undefined)(
  `nothing of the sandbox's in the workspace${noBubblewrap === undefined ? "" : ` (skipped: ${noBubblewrap})`}`,
  () => {
    it.each(cases)(
      "pleach %s stopped by %s while a command runs",
      async (kind, signal) => {
        const { command, marker } = sleepCommand();
        const child = await start(kind, command);
        const exited = once(child, "exit") as Promise<[number | null, NodeJS.Signals | null]>;
        await waitFor(
          async () => (await hostProcessesWith(marker)).some((line) => line.startsWith("sleep ")),
          "the command to run in its sandbox",
        );
        // While it runs, the workspace holds what it made and nothing else.
        expect(addedNow()).toEqual([".envrc"]);
        child.kill(signal);
        const [code, by] = await exited;
        // The command died with it (at once, or as its sandbox follows its parent).
        await waitFor(
          async () => (await hostProcessesWith(marker)).length === 0,
          "the command to end",
        );
        if (signal === "SIGKILL") {
          // No look after the command: what it made stays (docs/security-limitations.md).
          expect(by).toBe("SIGKILL");
          expect(addedNow()).toEqual([".envrc"]);
          await rm(path.join(workspace, ".envrc"));
        } else {
          expect([code, by]).toEqual([signal === "SIGINT" ? 130 : 143, null]);
          expect(addedNow()).toEqual([".envrc.made-by-command"]);
          await rm(path.join(workspace, ".envrc.made-by-command"));
        }
        expect(await hostState([workspace])).toEqual(before);
      },
      60_000,
    );

    it.each(["SIGINT", "SIGTERM"] as const)(
      "pleach mcp --http stopped by %s while a tool call's command runs",
      async (signal) => {
        const token = "leftovers-token-0123456789abcdef";
        const child = spawn(
          process.execPath,
          [launcher, "mcp", "--workspace", workspace, "--http", "127.0.0.1:0"],
          {
            env: { ...environment(), PLEACH_MCP_TOKEN: token },
            stdio: ["ignore", "ignore", "pipe"],
          },
        );
        children.push(child);
        const exited = once(child, "exit") as Promise<[number | null, NodeJS.Signals | null]>;
        const url = await servedUrl(child);
        const client = new Client({ name: "leftovers-test", version: "1" });
        await client.connect(
          new StreamableHTTPClientTransport(url, {
            requestInit: { headers: { authorization: `Bearer ${token}` } },
          }),
        );
        const { command, marker } = sleepCommand();
        const call = client
          .callTool({ name: "bash", arguments: { command } })
          .catch((error: unknown) => error);
        await waitFor(
          async () => (await hostProcessesWith(marker)).some((line) => line.startsWith("sleep ")),
          "the command to run in its sandbox",
        );
        child.kill(signal);
        const [code, by] = await exited;
        expect([code, by]).toEqual([signal === "SIGINT" ? 130 : 143, null]);
        expect(addedNow()).toEqual([".envrc.made-by-command"]);
        await rm(path.join(workspace, ".envrc.made-by-command"));
        expect(await hostState([workspace])).toEqual(before);
        expect(await hostProcessesWith(marker)).toEqual([]);
        await call;
        await client.close().catch(() => {});
      },
      60_000,
    );
  },
);
