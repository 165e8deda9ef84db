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
import { makeTempDir } from "@pleach/core/testing";
import { createLocalSandbox } from "@pleach/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { documentedConfig, localServer } from "./documented-config.js";
import { expectRuntimeText, installedClient, launcher, makeWorkspace, STEPS } from "./fixture.js";
import type { RecordedResult } from "./scripted-anthropic.js";
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

describe("Copilot CLI hands its model pleach's text once, within its budget", () => {
  let root: string;
  let cleanup: () => Promise<void>;
  let cleanupHome: () => Promise<void>;
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
    const documented = documentedConfig("Copilot CLI", "json") as {
      mcpServers: { pleach: CopilotServer };
    };
    const server = {
      ...documented.mcpServers.pleach,
      ...localServer(documented.mcpServers.pleach, root),
    };
    const flag = server.args.indexOf("--max-result-chars");
    budget = flag === -1 ? 50_000 : Number(server.args[flag + 1]);
    const sandbox = await createLocalSandbox({ root, mode: "workspace-write" });
    toolset = createToolset(createCodingAgentTools(sandbox, { maxResultChars: budget }), {
      maxChars: budget,
    });

    const model = await startScriptedResponses(
      STEPS.map((step) => ({ tool: step.name, input: step.input })),
    );
    const homeDir = await makeTempDir("pleach-copilot-home-");
    cleanupHome = homeDir.cleanup;
    await mkdir(path.join(homeDir.dir, ".copilot"));
    await writeFile(
      path.join(homeDir.dir, ".copilot", "mcp-config.json"),
      JSON.stringify({ mcpServers: { pleach: server } }),
    );
    try {
      await run(
        client.command[0] ?? "copilot",
        [
          ...client.command.slice(1),
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
            HOME: homeDir.dir,
            // No GitHub login, telemetry or update check: only the scripted provider.
            COPILOT_OFFLINE: "true",
            COPILOT_PROVIDER_BASE_URL: `${model.url}/v1`,
            COPILOT_PROVIDER_WIRE_API: "responses",
            COPILOT_PROVIDER_API_KEY: "sk-scripted",
            COPILOT_MODEL: "gpt-5",
          },
        },
      );
    } finally {
      results = [...model.results].sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
      await model.close();
    }
    const record = process.env.PLEACH_REAL_CLIENTS_RECORD_COPILOT;
    if (record !== undefined) await writeFile(record, JSON.stringify(results, null, 1));
  }, 420_000);

  afterAll(async () => {
    await cleanup?.();
    await cleanupHome?.();
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
    const [read, failing, passing] = results.map((result) => result.text);
    expect(read).toMatch(/call read_file again with offset \d+ to continue\]$/);
    expect(failing).toMatch(/^exit code 1 after .*1 passed, 1 failed/);
    expect(failing).toContain("failing tests:\n- checks");
    expect(passing).toMatch(/2 passed/);
  });
});
