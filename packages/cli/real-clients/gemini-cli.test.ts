// What Gemini CLI, the real CLI, hands its model from `pleach mcp`: `gemini -p` runs against a
// scripted model behind the Gemini API on 127.0.0.1 (GOOGLE_GEMINI_BASE_URL), with the built
// `pleach mcp` configured in its settings.json exactly as docs/mcp-clients.md gives it
// (`--max-result-chars 40000`, since Gemini CLI spills a result past 40,000 characters to a file
// and shows its model a cut; `timeout` in ms; `trust: true` for headless approval). The script
// makes the calls of ./fixture.ts and records each functionResponse: it must be pleach's text for
// that budget, whole, with its hints; the failing test run included, which is no error.
//
// Out of the default run: `bash scripts/real-clients.sh`. Gemini CLI comes from the npm registry
// at a pinned version into a cache folder; PLEACH_GEMINI names an installed `gemini` instead.
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
import { startScriptedGemini } from "./scripted-gemini.js";

const run = promisify(execFile);
const GEMINI_VERSION = "0.61.0";
/** Gemini CLI's `gemini`, installed once per version into a cache folder; or why it is not. */
const gemini = () =>
  installedClient({
    name: "Gemini CLI",
    packageName: "@google/gemini-cli",
    version: GEMINI_VERSION,
    entry: "bundle/gemini.js",
    override: process.env.PLEACH_GEMINI,
  });

/** Gemini CLI spills a tool result longer than this to a file and shows its model a cut. */
const GEMINI_SPILL_CHARS = 40_000;

/**
 * The result without the tags Gemini CLI wraps every MCP result in for its model (it counts
 * them toward its spill threshold), which are the client's own and no cut of pleach's text.
 */
function withoutClientWrapper(text: string): string {
  return text.replace(/^<untrusted_context>\n([\s\S]*)\n<\/untrusted_context>$/, "$1");
}

interface GeminiServer {
  command: string;
  args: string[];
  timeout: number;
  trust: boolean;
}

/** The documented server entry, as `~/.gemini/settings.json` gives it. */
const DOCUMENTED = (
  documentedConfig("Gemini CLI", "json") as { mcpServers: { pleach: GeminiServer } }
).mcpServers.pleach;

/**
 * Run `gemini -p` on `script` in `root` with the documented server (its flags plus `flags`, its
 * settings with `settings` over them); what it sent its model, per step.
 */
async function runGemini({
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
  settings?: Partial<GeminiServer>;
}): Promise<RecordedResult[]> {
  const local = localServer(DOCUMENTED, root);
  const server = { ...DOCUMENTED, ...local, args: [...local.args, ...flags], ...settings };
  const model = await startScriptedGemini(script);
  const home = await makeTempDir("pleach-gemini-home-");
  await mkdir(path.join(home.dir, ".gemini"));
  await writeFile(
    path.join(home.dir, ".gemini", "settings.json"),
    JSON.stringify({
      mcpServers: { pleach: server },
      // Only the scripted model: no usage statistics or update checks leave the machine.
      privacy: { usageStatisticsEnabled: false },
      general: { disableAutoUpdate: true, disableUpdateNag: true },
      // An API key (the scripted one) at the base URL below, not a Google login.
      security: { auth: { selectedType: "gemini-api-key" } },
    }),
  );
  try {
    await run(
      command[0] ?? "gemini",
      [
        ...command.slice(1),
        "-p",
        "Run the scripted checks.",
        "-m",
        "gemini-2.5-pro",
        "--skip-trust",
      ],
      {
        cwd: root,
        timeout: 240_000,
        env: {
          PATH: process.env.PATH,
          HOME: home.dir,
          GOOGLE_GEMINI_BASE_URL: model.url,
          GEMINI_API_KEY: "scripted",
          GEMINI_CLI_NO_RELAUNCH: "true",
        },
      },
    );
    return [...model.results].sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
  } finally {
    await model.close();
    await home.cleanup();
  }
}

describe("Gemini CLI hands its model pleach's text, within its budget", () => {
  let root: string;
  let cleanup: () => Promise<void>;
  let toolset: Toolset;
  let budget: number;
  let results: RecordedResult[] = [];
  let skip: string | undefined;

  beforeAll(async () => {
    if (!existsSync(launcher))
      throw new Error(`no pleach at ${launcher}: run \`npx tsc -b\` first`);
    const client = await gemini();
    if ("skip" in client) {
      skip = client.skip;
      return;
    }
    ({ dir: root, cleanup } = await makeTempDir("pleach-gemini-"));
    await makeWorkspace(root);
    budget = Number(DOCUMENTED.args[DOCUMENTED.args.indexOf("--max-result-chars") + 1]);
    const sandbox = await createLocalSandbox({ root, mode: "workspace-write" });
    toolset = createToolset(createCodingAgentTools(sandbox, { maxResultChars: budget }), {
      maxChars: budget,
    });

    results = await runGemini({
      command: client.command,
      root,
      script: STEPS.map((step) => ({ tool: step.name, input: step.input })),
    });
    const record = process.env.PLEACH_REAL_CLIENTS_RECORD_GEMINI;
    if (record !== undefined) await writeFile(record, JSON.stringify(results, null, 1));
  }, 420_000);

  afterAll(async () => {
    await cleanup?.();
  });

  it.for(STEPS.map((step, index) => [`${index + 1}. ${step.name}`, index] as const))(
    "%s: the runtime's text for the budget, whole, not JSON",
    async ([, index], context) => {
      if (skip !== undefined) context.skip(skip);
      const recorded = results[index];
      await expectRuntimeText({
        client: "Gemini CLI",
        recorded,
        index,
        toolset,
        root,
        budget,
        shown: withoutClientWrapper,
      });
      // Gemini CLI spills past its limit counting its own wrapper, and shows isError as a JSON dump.
      expect(recorded?.text).not.toMatch(/^Output too large/);
      expect(recorded?.text.length).toBeLessThanOrEqual(GEMINI_SPILL_CHARS);
      expect(recorded?.isError).toBe(false);
    },
  );

  it("kept the hints: read_file's offset, the test counts and failing names", (context) => {
    if (skip !== undefined) context.skip(skip);
    expectHints(results.map((result) => withoutClientWrapper(result.text)));
  });
});

// Gemini CLI sends a progress token and gets progress every second, yet stops the call at its
// `timeout` (measured with 5000 ms, the same with no progress): docs/mcp-clients.md gives the
// timeout for long calls, and pleach's descriptions point at background jobs.
describe("Gemini CLI on a call past its timeout, with progress every second", () => {
  it("stops the call at its timeout and hands its model a dump of the SDK's error", async (context) => {
    const client = await gemini();
    if ("skip" in client) return context.skip(client.skip);
    const root = await useTempDir("pleach-gemini-long-");
    const [result, ...more] = await runGemini({
      command: client.command,
      root,
      script: [{ tool: LONG_CALL.call.name, input: LONG_CALL.call.input }],
      flags: [...LONG_CALL.progressFlags.on],
      settings: { timeout: LONG_CALL.clientTimeoutMs },
    });
    expect(more).toEqual([]);
    expect(result?.isError).toBe(true);
    expect(result?.text).toMatch(
      /^MCP tool 'bash' reported tool error for function call: .* with response: .*"MCP error -32001: Request timed out"/,
    );
  });
});
