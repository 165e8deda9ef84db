// What Copilot CLI, the real CLI, hands its model from `pleach mcp`: `copilot -p` runs offline
// against a scripted model behind the Responses API on 127.0.0.1 (its BYOK provider,
// COPILOT_PROVIDER_BASE_URL with COPILOT_PROVIDER_WIRE_API=responses), with the built
// `pleach mcp` in its ~/.copilot/mcp-config.json exactly as docs/mcp-clients.md gives it. The
// script makes the calls of ./fixture.ts and records each function_call_output: it must be
// pleach's text once (Copilot CLI appends the JSON when a result carries structuredContent, which
// pleach sends only with --structured-output), whole, with its hints, not spilled to a file.
//
// Out of the default run: `bash scripts/real-clients.sh`. Copilot CLI comes from the npm registry
// at a pinned version, its native binary included (an optional dependency), into a cache folder;
// PLEACH_COPILOT names an installed `copilot` instead.
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { createToolset, type Toolset } from "@pleach/coding-agent/runtime";
import { createCodingAgentTools } from "@pleach/coding-agent/tools";
import { makeTempDir, useTempDir } from "@pleach/core/testing";
import { createLocalSandbox } from "@pleach/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { documentedConfig, localServer } from "./documented-config.js";
import {
  expectHints,
  expectRuntimeText,
  installedClient,
  LONG_CALL,
  launcher,
  makeWorkspace,
  STEPS,
} from "./fixture.js";
import type { RecordedResult, ScriptedCall } from "./scripted-anthropic.js";
import { startScriptedResponses } from "./scripted-responses.js";

const run = promisify(execFile);
const COPILOT_VERSION = "1.0.102";
/** Copilot CLI's `copilot`, installed once per version into a cache folder; or why it is not. */
const copilot = () =>
  installedClient({
    name: "Copilot CLI",
    packageName: "@github/copilot",
    version: COPILOT_VERSION,
    entry: "npm-loader.js",
    override: process.env.PLEACH_COPILOT,
  });

interface CopilotServer {
  command: string;
  args: string[];
}

/** The documented server entry, as `~/.copilot/mcp-config.json` gives it. */
const DOCUMENTED = (
  documentedConfig("Copilot CLI", "json") as { mcpServers: { pleach: CopilotServer } }
).mcpServers.pleach;

/**
 * Run `copilot -p` on `script` in `root` with the documented server (its flags plus `flags`, its
 * settings with `settings` over them); what it sent its model, per step.
 */
async function runCopilot({
  command,
  root,
  script,
  flags = [],
  settings = {},
}: {
  command: string[];
  root: string;
  script: ScriptedCall[];
  flags?: string[];
  settings?: Record<string, unknown>;
}): Promise<RecordedResult[]> {
  const local = localServer(DOCUMENTED, root);
  const server = { ...DOCUMENTED, ...local, args: [...local.args, ...flags], ...settings };
  const model = await startScriptedResponses(script);
  const home = await makeTempDir("pleach-copilot-home-");
  await mkdir(path.join(home.dir, ".copilot"));
  await writeFile(
    path.join(home.dir, ".copilot", "mcp-config.json"),
    JSON.stringify({ mcpServers: { pleach: server } }),
  );
  try {
    await run(
      command[0] ?? "copilot",
      [
        ...command.slice(1),
        "-p",
        "Run the scripted checks.",
        "--allow-all-tools",
        "--disable-builtin-mcps",
        "--disable-client-telemetry",
      ],
      {
        cwd: root,
        timeout: 240_000,
        env: {
          PATH: process.env.PATH,
          HOME: home.dir,
          // No GitHub login, telemetry or update check: only the scripted provider.
          COPILOT_OFFLINE: "true",
          COPILOT_PROVIDER_BASE_URL: `${model.url}/v1`,
          COPILOT_PROVIDER_WIRE_API: "responses",
          COPILOT_PROVIDER_API_KEY: "sk-scripted",
          COPILOT_MODEL: "gpt-5",
        },
      },
    );
    return [...model.results].sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
  } finally {
    await model.close();
    await home.cleanup();
  }
}

describe("Copilot CLI hands its model pleach's text once, within its budget", () => {
  let root: string;
  let cleanup: () => Promise<void>;
  let toolset: Toolset;
  let budget: number;
  let results: RecordedResult[] = [];
  let skip: string | undefined;

  beforeAll(async () => {
    if (!existsSync(launcher))
      throw new Error(`no pleach at ${launcher}: run \`npx tsc -b\` first`);
    const client = await copilot();
    if ("skip" in client) {
      skip = client.skip;
      return;
    }
    ({ dir: root, cleanup } = await makeTempDir("pleach-copilot-"));
    await makeWorkspace(root);
    const flag = DOCUMENTED.args.indexOf("--max-result-chars");
    budget = flag === -1 ? 50_000 : Number(DOCUMENTED.args[flag + 1]);
    const sandbox = await createLocalSandbox({ root, mode: "workspace-write" });
    toolset = createToolset(createCodingAgentTools(sandbox, { maxResultChars: budget }), {
      maxChars: budget,
    });

    results = await runCopilot({
      command: client.command,
      root,
      script: STEPS.map((step) => ({ tool: step.name, input: step.input })),
    });
    const record = process.env.PLEACH_REAL_CLIENTS_RECORD_COPILOT;
    if (record !== undefined) await writeFile(record, JSON.stringify(results, null, 1));
  }, 420_000);

  afterAll(async () => {
    await cleanup?.();
  });

  it.for(STEPS.map((step, index) => [`${index + 1}. ${step.name}`, index] as const))(
    "%s: the runtime's text for the budget, once, whole, not JSON",
    async ([, index], context) => {
      if (skip !== undefined) context.skip(skip);
      await expectRuntimeText({
        client: "Copilot CLI",
        recorded: results[index],
        index,
        toolset,
        root,
        budget,
      });
    },
  );

  it("kept the hints: read_file's offset, the test counts and failing names", (context) => {
    if (skip !== undefined) context.skip(skip);
    expectHints(results.map((result) => result.text));
  });
});

// Copilot CLI honours a server's `timeout` (ms) and restarts it on every progress notification:
// with progress every second a 12 s call outlives a 5 s timeout and the model reads its result;
// with none within the call, the same call stops at 5 s. (With no `timeout` set, a 75 s call
// without progress was waited for.)
describe("Copilot CLI on a call past its timeout", () => {
  const longCall = (progress: "on" | "off") => async () => {
    const client = await copilot();
    if ("skip" in client) return { skip: client.skip };
    const root = await useTempDir("pleach-copilot-long-");
    const [result, ...more] = await runCopilot({
      command: client.command,
      root,
      script: [{ tool: LONG_CALL.call.name, input: LONG_CALL.call.input }],
      flags: [...LONG_CALL.progressFlags[progress]],
      settings: { timeout: LONG_CALL.clientTimeoutMs },
    });
    expect(more).toEqual([]);
    return { text: result?.text };
  };

  it("waits for a call that reports progress, past its timeout", async (context) => {
    const outcome = await longCall("on")();
    if ("skip" in outcome) return context.skip(outcome.skip);
    expect(outcome.text).toBe("slept\n");
  });

  it("stops a call without progress at its timeout", async (context) => {
    const outcome = await longCall("off")();
    if ("skip" in outcome) return context.skip(outcome.skip);
    expect(outcome.text).toBe("MCP server 'pleach': McpError: MCP error -32001: Request timed out");
  });
});
