// End to end: `pleach call`, `pleach mcp` and `pleach run` (the built bin, as child processes)
// stopped by SIGINT, SIGTERM or SIGKILL while a sandboxed command runs leave no placeholder folder
// in the workspace: at once for the first two, at the next start for SIGKILL. A folder of the
// user's with a protected name is never removed. Needs the build (`npm test` builds first) and a
// working bubblewrap.
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, readdirSync } from "node:fs";
import { mkdir, rm, writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { promisify } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { forceRemove, hostCommandLines, hostState, makeTempDir } from "@pleach/core/testing";
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
  // The user's own folder with a protected name: empty and read-only, like a placeholder.
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

/** A marker in the command's argv, to find it among the host's processes. */
function sleepCommand(): { command: string; marker: string } {
  const marker = `29.${String(Math.random()).slice(2, 10)}`;
  return { command: `sleep ${marker}`, marker };
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

/** Placeholders now in the workspace: what is there that was not before. */
function placeholdersNow(): string[] {
  return readdirSync(workspace).filter((name) => !["README.md", ".idea"].includes(name));
}

const cases = (["call", "mcp", "run"] as const).flatMap((kind) =>
  (["SIGINT", "SIGTERM", "SIGKILL"] as const).map((signal) => [kind, signal] as const),
);

describe.skipIf(noBubblewrap !== undefined)(
  `no placeholder left in the workspace${noBubblewrap === undefined ? "" : ` (skipped: ${noBubblewrap})`}`,
  () => {
    it.each(cases)(
      "pleach %s stopped by %s while a command runs",
      async (kind, signal) => {
        const { command, marker } = sleepCommand();
        const child = await start(kind, command);
        const exited = once(child, "exit") as Promise<[number | null, NodeJS.Signals | null]>;
        await waitFor(
          async () =>
            existsSync(path.join(workspace, ".mcp.json")) &&
            (await hostProcessesWith(marker)).some((line) => line.startsWith("sleep ")),
          "the command to run in its sandbox",
        );
        expect(placeholdersNow().length).toBeGreaterThan(5);
        child.kill(signal);
        const [code, by] = await exited;
        // Right after exit: nothing of ours is left but after SIGKILL.
        const after = await hostState([workspace]);
        if (signal === "SIGKILL") {
          expect(by).toBe("SIGKILL");
          expect(placeholdersNow().length).toBeGreaterThan(5);
        } else {
          expect([code, by]).toEqual([signal === "SIGINT" ? 130 : 143, null]);
          expect(after).toEqual(before);
        }
        // The command died with it (at once, or as its sandbox follows its parent).
        await waitFor(
          async () => (await hostProcessesWith(marker)).length === 0,
          "the command to end",
        );

        // The next start removes what a killed run left, and the workspace is as it was.
        const next = await promisify(execFile)(
          process.execPath,
          [launcher, "call", "bash", JSON.stringify({ command: "true" }), "--workspace", workspace],
          { env: environment() },
        );
        expect(JSON.parse(next.stdout)).toMatchObject({ exitCode: 0 });
        expect(await hostState([workspace])).toEqual(before);
        expect(
          readdirSync(path.join(runtime, `pleach-${process.getuid?.()}`, "placeholders")),
        ).toEqual([]);
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
          async () =>
            existsSync(path.join(workspace, ".mcp.json")) &&
            (await hostProcessesWith(marker)).some((line) => line.startsWith("sleep ")),
          "the command to run in its sandbox",
        );
        child.kill(signal);
        const [code, by] = await exited;
        expect([code, by]).toEqual([signal === "SIGINT" ? 130 : 143, null]);
        expect(await hostState([workspace])).toEqual(before);
        expect(await hostProcessesWith(marker)).toEqual([]);
        await call;
        await client.close().catch(() => {});
      },
      60_000,
    );

    it("never removes the user's folder where a killed run's placeholder stood", async () => {
      const { command, marker } = sleepCommand();
      const child = await start("call", command);
      const exited = once(child, "exit");
      const envrc = path.join(workspace, ".envrc");
      // Killed while its command runs, as a real kill lands: every placeholder is made and
      // recorded by then. (One landing in the microseconds between making a placeholder and
      // marking it leaves that folder, since nothing would tell it from a folder of the user's.)
      await waitFor(
        async () =>
          existsSync(envrc) &&
          (await hostProcessesWith(marker)).some((line) => line.startsWith("sleep ")),
        "the command to run",
      );
      child.kill("SIGKILL");
      await exited;
      await waitFor(
        async () => (await hostProcessesWith(marker)).length === 0,
        "the command to end",
      );
      // The user removes the placeholder left behind and makes a folder of their own there,
      // empty and read-only like it (some time later: file times are coarse).
      await new Promise((resolve) => setTimeout(resolve, 50));
      await forceRemove(envrc);
      await mkdir(envrc, { mode: 0o555 });
      const user = await hostState([envrc]);

      const run = promisify(execFile);
      const listing = await run(
        process.execPath,
        [
          launcher,
          "call",
          "list_files",
          // Empty folders are listed when ignored files are too.
          JSON.stringify({ dir: ".", includeIgnored: true }),
          "--workspace",
          workspace,
        ],
        { env: environment() },
      );
      // That first start removed the other leftovers, and lists the user's folders, not ours.
      expect(JSON.parse(listing.stdout)).toEqual([
        { path: ".envrc", kind: "dir" },
        { path: ".idea", kind: "dir" },
        { path: "README.md", kind: "file", size: 6 },
      ]);
      expect(placeholdersNow()).toEqual([".envrc"]);
      expect(await hostState([envrc])).toEqual(user);
      await run(
        process.execPath,
        [launcher, "call", "bash", JSON.stringify({ command: "true" }), "--workspace", workspace],
        { env: environment() },
      );
      expect(await hostState([envrc])).toEqual(user);
      await rm(envrc, { recursive: true });
      expect(await hostState([workspace])).toEqual(before);
    }, 60_000);
  },
);
