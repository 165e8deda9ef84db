// What opencode, the real CLI, hands its model from `pleach mcp`: `opencode run` runs offline
// against a scripted model behind the Anthropic Messages API on 127.0.0.1 (a provider of its config
// with `@ai-sdk/anthropic`, which opencode bundles, and a `baseURL`), with the built `pleach mcp`
// configured exactly as docs/mcp-clients.md gives it. The script makes the calls of ./fixture.ts
// and records each tool_result: it must be pleach's text, whole, with its hints, not JSON.
//
// Out of the default run: `bash scripts/real-clients.sh`. opencode comes from the npm registry
// (`opencode-ai`) at a pinned version, its native binary included (an optional dependency), into
// a cache folder; PLEACH_OPENCODE names an installed `opencode` instead.
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { createToolset, type Toolset } from "@pleach/coding-agent/runtime";
import { createCodingAgentTools } from "@pleach/coding-agent/tools";
import { makeTempDir } from "@pleach/core/testing";
import { createLocalSandbox } from "@pleach/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { documentedConfig, localServer } from "./documented-config.js";
import {
  expectHints,
  expectRuntimeText,
  extraFlags,
  installedClient,
  launcher,
  makeWorkspace,
  STEPS,
} from "./fixture.js";
import {
  type RecordedResult,
  type ScriptedCall,
  startScriptedAnthropic,
} from "./scripted-anthropic.js";

const run = promisify(execFile);
const OPENCODE_VERSION = "1.18.33";
/** opencode's `opencode`, installed once per version into a cache folder; or why it is not. */
const opencode = () =>
  installedClient({
    name: "opencode",
    packageName: "opencode-ai",
    version: OPENCODE_VERSION,
    entry: "bin/opencode.exe",
    native: true,
    override: process.env.PLEACH_OPENCODE,
  });

/** The documented server entry, as `opencode.json` gives it. */
const DOCUMENTED = (
  documentedConfig("opencode", "json") as {
    mcp: { pleach: { command: string[] } & Record<string, unknown> };
  }
).mcp.pleach;

/** opencode offers an MCP server's tools as `<server>_<tool>`. */
const SCRIPT: Array<ScriptedCall & { name: string }> = STEPS.map((step) => ({
  ...step,
  tool: `pleach_${step.name}`,
}));

/**
 * Run `opencode run` on `script` in `root` with the documented server; what it sent its model,
 * per step.
 */
async function runOpencode({
  command,
  root,
  script,
}: {
  command: string[];
  root: string;
  script: Array<ScriptedCall & { name: string }>;
}): Promise<RecordedResult[]> {
  const model = await startScriptedAnthropic(script);
  const home = await makeTempDir("pleach-opencode-home-");
  const [program = "npx", ...args] = DOCUMENTED.command;
  const server = localServer({ command: program, args }, root);
  const config = path.join(home.dir, "opencode.json");
  await writeFile(
    config,
    JSON.stringify({
      mcp: {
        pleach: { ...DOCUMENTED, command: [server.command, ...server.args, ...extraFlags] },
      },
      provider: {
        scripted: {
          npm: "@ai-sdk/anthropic",
          name: "scripted",
          options: { baseURL: `${model.url}/v1`, apiKey: "sk-ant-scripted" },
          models: { "claude-sonnet-4-5": { name: "scripted" } },
        },
      },
      model: "scripted/claude-sonnet-4-5",
      small_model: "scripted/claude-sonnet-4-5",
      autoupdate: false,
      share: "disabled",
    }),
  );
  try {
    const exec = run(
      command[0] ?? "opencode",
      [...command.slice(1), "run", "Run the scripted checks.", "--print-logs"],
      {
        cwd: root,
        timeout: 240_000,
        maxBuffer: 64 * 1024 * 1024,
        env: {
          PATH: process.env.PATH,
          HOME: home.dir,
          XDG_CONFIG_HOME: path.join(home.dir, ".config"),
          XDG_DATA_HOME: path.join(home.dir, ".local/share"),
          XDG_CACHE_HOME: path.join(home.dir, ".cache"),
          XDG_STATE_HOME: path.join(home.dir, ".local/state"),
          OPENCODE_CONFIG: config,
          // Only the scripted model: no model list, update, share or plugin download.
          OPENCODE_DISABLE_MODELS_FETCH: "1",
          OPENCODE_DISABLE_AUTOUPDATE: "1",
          OPENCODE_DISABLE_SHARE: "1",
          OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
          OPENCODE_DISABLE_DEFAULT_PLUGINS: "1",
          // No external plugins: otherwise opencode installs its plugin package from npm first
          // (offline, that blocked the run for 100 s before any model request).
          OPENCODE_PURE: "1",
          OPENCODE_DISABLE_CLAUDE_CODE: "1",
        },
      },
    );
    // `opencode run` reads more of the message from stdin until it ends.
    exec.child.stdin?.end();
    await exec;
    return model.results;
  } finally {
    await model.close();
    await home.cleanup();
  }
}

describe("opencode hands its model pleach's text", () => {
  let root: string;
  let cleanup: () => Promise<void>;
  let toolset: Toolset;
  let results: RecordedResult[] = [];
  let skip: string | undefined;

  beforeAll(async () => {
    if (!existsSync(launcher))
      throw new Error(`no pleach at ${launcher}: run \`npx tsc -b\` first`);
    const client = await opencode();
    if ("skip" in client) {
      skip = client.skip;
      return;
    }
    ({ dir: root, cleanup } = await makeTempDir("pleach-opencode-"));
    await makeWorkspace(root);
    const sandbox = await createLocalSandbox({ root, mode: "workspace-write" });
    toolset = createToolset(createCodingAgentTools(sandbox));
    results = await runOpencode({ command: client.command, root, script: SCRIPT });
    const record = process.env.PLEACH_REAL_CLIENTS_RECORD_OPENCODE;
    if (record !== undefined) await writeFile(record, JSON.stringify(results, null, 1));
  }, 420_000);

  afterAll(async () => {
    await cleanup?.();
  });

  it.for(STEPS.map((step, index) => [`${index + 1}. ${step.name}`, index] as const))(
    "%s: the runtime's text, whole, not JSON",
    async ([, index], context) => {
      if (skip !== undefined) context.skip(skip);
      const recorded = results[index];
      await expectRuntimeText({
        client: "opencode",
        recorded,
        index,
        toolset,
        root,
        budget: 50_000,
      });
      expect(recorded?.isError).toBe(false);
    },
  );

  it("kept the hints: read_file's offset, the test counts and failing names", (context) => {
    if (skip !== undefined) context.skip(skip);
    expectHints(results.map((result) => result.text));
  });
});
