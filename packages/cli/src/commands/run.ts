import {
  createAnthropicModel,
  createCodingAgentRuntime,
  createOpenAIChatModel,
  type ModelAdapter,
} from "@pleach/coding-agent/runtime";
import type { SandboxProvider } from "@pleach/coding-agent/sandbox";
import { showControlCharacters } from "@pleach/coding-agent/tools";
import { createE2BSandboxProvider, createLocalSandboxProvider } from "@pleach/sandbox";
import {
  type CommandInput,
  domainOptionsHelp,
  parseCommandLine,
  parseMode,
  parseNetworkFlags,
  UsageError,
  WORKSPACE_OPTIONS,
} from "../cli-support.js";
import { openWorkspace } from "../open-workspace.js";
import { parseReadFlags, readOptionsHelp } from "../read-flags.js";
import { onTermination } from "../termination.js";
import { printAgentRun } from "./demo.js";
import { undoLastStep } from "./undo-last.js";

/** The options `pleach run` takes. */
export const RUN_OPTIONS = {
  ...WORKSPACE_OPTIONS,
  model: { type: "string" },
  "model-name": { type: "string" },
  "max-steps": { type: "string" },
  sandbox: { type: "string" },
  template: { type: "string" },
  json: { type: "boolean" },
  "undo-last": { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

/** How `pleach run` is used: the first line of its help and its line in `pleach help`. */
export const RUN_USAGE = `pleach run "<task>" [--workspace DIR] [--model SPEC] [--model-name NAME]
    [--mode MODE] [--network] [--allow-domain HOST]... [--deny-domain HOST]...
    [--max-steps N] [--json] [--hide-read PATH]... [--allow-read PATH]...
    [--sandbox local|e2b] [--template NAME] [--no-caches] [--allow-git-writes] [--allow-write DIR]...
pleach run --undo-last [--workspace DIR] [--json]`;

/** `pleach run --help`. */
export const RUN_HELP = `Usage: ${RUN_USAGE}

Run the agent on a workspace: the model gets the task and the tools, and works until it
gives a final answer or a limit is reached. Every tool call and a short result is printed.
Commands run sandboxed (workspace-write) unless --mode says otherwise.

Options:
  --model SPEC        openai:<name>       OpenAI Chat Completions (OPENAI_API_KEY;
                                          OPENAI_BASE_URL for another endpoint)
                      anthropic:<name>    Anthropic Messages (ANTHROPIC_API_KEY)
                      <base-url>          any OpenAI-compatible server, such as
                                          http://127.0.0.1:8080/v1 (with --model-name)
                      (default: $PLEACH_MODEL)
  --model-name NAME   the model name to send to a <base-url> server (default: "default")
  --workspace DIR     the workspace folder (default: the current folder)
  --mode MODE         read-only | workspace-write | danger-full-access
                      (default: workspace-write)
  --network           let sandboxed commands reach the network
${domainOptionsHelp(22)}
  --max-steps N       the most model calls (default: 50)
  --sandbox KIND      local: a sandbox over --workspace on this machine (the default);
                      e2b: an E2B sandbox (E2B_API_KEY; E2B_API_URL and E2B_SANDBOX_URL
                      for self-hosted E2B or \`pleach sandbox serve --protocol e2b\`),
                      whose workspace, mode and network its template and server set
  --template NAME     the E2B template the sandbox starts from (default: base)
  --json              print each event as one JSON line instead of the transcript
  --undo-last         take no task: bring the workspace back as it was before the last
                      step of the last run (a checkpoint is taken before each step, outside
                      the workspace; files the step made are removed, .gitignore'd ones
                      left as they are) and say what changed
${readOptionsHelp(22)}
  -h, --help          show this help

Exit codes: 0 the model gave a final answer; 1 the run stopped otherwise (step limit,
model error); 2 the command line was wrong; 130 or 143 stopped by SIGINT (Ctrl-C) or
SIGTERM, after stopping the command that was running; 141 stdout or stderr was closed
early (pleach run ... | head), which ends the run at once, as SIGPIPE would.

Example:
  OPENAI_API_KEY=... pleach run "make the failing test in test/cart.test.js pass" --model openai:gpt-4.1
`;

/** Environment variables the model specs read. */
type Environment = Readonly<Record<string, string | undefined>>;

/**
 * Make the model a `--model` spec names: `openai:<name>`, `anthropic:<name>` or the base URL of an
 * OpenAI-compatible server. Keys come from the environment.
 */
export function modelFromSpec({
  spec,
  env,
  modelName,
  command,
}: {
  spec: string | undefined;
  env: Environment;
  /** The model name sent to a base-URL server. */
  modelName?: string | undefined;
  command: string;
}): ModelAdapter {
  if (spec === undefined || spec === "") {
    throw new UsageError(
      "no model: pass --model openai:<name>, anthropic:<name> or an OpenAI-compatible base URL (or set PLEACH_MODEL); to watch without a key, run 'pleach demo'",
      { command },
    );
  }
  if (/^https?:\/\//.test(spec)) {
    const apiKey = env.OPENAI_API_KEY;
    return createOpenAIChatModel({
      baseURL: spec,
      model: modelName ?? env.PLEACH_MODEL_NAME ?? "default",
      ...(apiKey === undefined ? {} : { apiKey }),
    });
  }
  const separator = spec.indexOf(":");
  const provider = separator === -1 ? spec : spec.slice(0, separator);
  const name = separator === -1 ? "" : spec.slice(separator + 1);
  if (name === "" && (provider === "openai" || provider === "anthropic")) {
    throw new UsageError(`--model ${spec} names no model; write ${provider}:<model name>`, {
      command,
    });
  }
  if (provider === "openai") {
    const apiKey = env.OPENAI_API_KEY;
    const baseURL = env.OPENAI_BASE_URL;
    if (apiKey === undefined && baseURL === undefined) {
      throw new UsageError("--model openai:... needs OPENAI_API_KEY in the environment", {
        command,
      });
    }
    return createOpenAIChatModel({
      model: name,
      ...(apiKey === undefined ? {} : { apiKey }),
      ...(baseURL === undefined ? {} : { baseURL }),
    });
  }
  if (provider === "anthropic") {
    const apiKey = env.ANTHROPIC_API_KEY;
    if (apiKey === undefined) {
      throw new UsageError("--model anthropic:... needs ANTHROPIC_API_KEY in the environment", {
        command,
      });
    }
    const baseURL = env.ANTHROPIC_BASE_URL;
    return createAnthropicModel({
      model: name,
      apiKey,
      ...(baseURL === undefined ? {} : { baseURL }),
    });
  }
  throw new UsageError(
    `unknown model ${JSON.stringify(spec)}: write openai:<name>, anthropic:<name> or an http(s) base URL`,
    { command },
  );
}

/** Parse a positive whole number option. */
export function parseCount({
  value,
  option,
  command,
  fallback,
}: {
  value: string | undefined;
  option: string;
  command: string;
  fallback: number;
}): number {
  if (value === undefined) return fallback;
  const count = Number(value);
  if (!Number.isInteger(count) || count < 1) {
    throw new UsageError(
      `${option} must be a whole number of at least 1, got ${JSON.stringify(value)}`,
      {
        command,
      },
    );
  }
  return count;
}

/** `pleach run "<task>"`: the agent on a workspace; resolves to the exit code. */
export async function runCommand({ args, io }: CommandInput): Promise<number> {
  const { values, positionals } = parseCommandLine({
    args,
    command: "run",
    options: RUN_OPTIONS,
  });
  if (values.help) {
    io.stdout(RUN_HELP);
    return 0;
  }
  const [task, ...extra] = positionals;
  if (values["undo-last"]) {
    if (positionals.length > 0) {
      throw new UsageError("--undo-last takes no task: pleach run --undo-last [--workspace DIR]", {
        command: "run",
      });
    }
    return undoLastStep({
      workspace: values.workspace,
      mode: parseMode({ mode: values.mode, command: "run" }),
      reads: parseReadFlags(values, io),
      io,
      json: values.json,
    });
  }
  if (task === undefined || task.trim() === "") {
    throw new UsageError('run needs a task: pleach run "<what to do>"', { command: "run" });
  }
  if (extra.length > 0) {
    throw new UsageError(
      `unexpected arguments: ${extra.join(" ")} (quote the task as one argument)`,
      {
        command: "run",
      },
    );
  }
  const env = io.env ?? {};
  const model = modelFromSpec({
    spec: values.model ?? env.PLEACH_MODEL,
    env,
    modelName: values["model-name"],
    command: "run",
  });
  const maxSteps = parseCount({
    value: values["max-steps"],
    option: "--max-steps",
    command: "run",
    fallback: 50,
  });
  const sandboxProvider = await runSandbox({ values, env, io, modelName: model.name });
  const runtime = createCodingAgentRuntime({ sandboxProvider, model, maxSteps });
  // SIGINT or SIGTERM aborts the run, which stops the command that runs and reports where it
  // stopped; the process then exits normally, having looked at what the command made.
  const termination = onTermination();
  try {
    const result = await printAgentRun({
      run: runtime.run({ task, abortSignal: termination.signal }),
      io,
      json: values.json,
    });
    if (!values.json) {
      if (result.error !== undefined) {
        io.stderr(`pleach: ${showControlCharacters(result.error.message, { multiline: true })}\n`);
      }
      if (result.stopReason === "final-answer" && result.finalText !== "") {
        io.stdout(`\n${showControlCharacters(result.finalText, { multiline: true })}\n`);
      }
    }
    return termination.exitStatus ?? (result.stopReason === "final-answer" ? 0 : 1);
  } finally {
    termination.dispose();
  }
}

/** The flags that set up a local sandbox, which an E2B sandbox's template and server set instead. */
const LOCAL_SANDBOX_FLAGS = [
  "workspace",
  "mode",
  "network",
  "allow-domain",
  "deny-domain",
  "hide-read",
  "allow-read",
] as const;

/** The sandbox `pleach run` works in: over --workspace on this machine, or an E2B sandbox. */
async function runSandbox({
  values,
  env,
  io,
  modelName,
}: {
  values: ReturnType<typeof parseCommandLine<typeof RUN_OPTIONS>>["values"];
  env: Environment;
  io: CommandInput["io"];
  modelName: string;
}): Promise<SandboxProvider> {
  const kind = values.sandbox ?? "local";
  if (kind === "e2b") {
    const local = LOCAL_SANDBOX_FLAGS.filter((flag) => values[flag] !== undefined);
    if (local.length > 0) {
      throw new UsageError(
        `--${local[0]} sets up a local sandbox; with --sandbox e2b the template and the E2B server decide the workspace, mode and network (drop --${local.join(", --")})`,
        { command: "run" },
      );
    }
    const apiKey = env.E2B_API_KEY;
    if (apiKey === undefined || apiKey === "") {
      throw new UsageError(
        "--sandbox e2b needs E2B_API_KEY in the environment (for `pleach sandbox serve --protocol e2b`, its token)",
        { command: "run" },
      );
    }
    const template = values.template ?? "base";
    if (!values.json)
      io.stdout(`pleach run: ${modelName} in an E2B sandbox (template ${template})\n`);
    return createE2BSandboxProvider({
      template,
      apiKey,
      ...(env.E2B_API_URL ? { apiUrl: env.E2B_API_URL } : {}),
      ...(env.E2B_SANDBOX_URL ? { sandboxUrl: env.E2B_SANDBOX_URL } : {}),
    });
  }
  if (kind !== "local") {
    throw new UsageError(`--sandbox must be local or e2b, got ${JSON.stringify(kind)}`, {
      command: "run",
    });
  }
  if (values.template !== undefined) {
    throw new UsageError("--template names an E2B template: use it with --sandbox e2b", {
      command: "run",
    });
  }
  // Opening the workspace first checks it exists and reports a wrong --workspace clearly.
  const reads = parseReadFlags(values, io);
  const network = parseNetworkFlags(values, "run");
  const mode = parseMode({ mode: values.mode, command: "run" });
  const client = await openWorkspace({
    workspace: values.workspace,
    mode,
    network,
    reads,
    io,
    command: "run",
  });
  if (!values.json) {
    io.stdout(`pleach run: ${modelName} on ${client.root} (sandbox mode ${mode})\n`);
  }
  return createLocalSandboxProvider({ root: client.root, mode, network, ...reads });
}
