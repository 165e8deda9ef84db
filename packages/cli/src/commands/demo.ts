import { rmSync } from "node:fs";
import { cp, mkdtemp, realpath, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import {
  type AgentEvent,
  type AgentResult,
  type AgentRun,
  createCodingAgentRuntime,
  createScriptedModel,
  type ScriptedStep,
} from "@pleach/coding-agent/runtime";
import { showControlCharacters } from "@pleach/coding-agent/tools";
import { createLocalSandboxProvider } from "@pleach/sandbox";
import {
  type CliIo,
  type CommandInput,
  counted,
  parseCommandLine,
  parseMode,
} from "../cli-support.js";

/** The options `pleach demo` takes. */
export const DEMO_OPTIONS = {
  mode: { type: "string" },
  keep: { type: "boolean" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

/** How `pleach demo` is used: the first line of its help and its line in `pleach help`. */
export const DEMO_USAGE = "pleach demo [--mode MODE] [--keep] [--json]";

/** `pleach demo --help`. */
export const DEMO_HELP = `Usage: ${DEMO_USAGE}

Watch an agent fix a bug, with no API key: a scripted model works on a small sample project
(a shop cart whose tests fail) in a sandboxed temporary copy. It lists and searches the
files, reads them, runs the tests (red), fixes one bug with edit_file and one with
apply_diff, and runs the tests again (green). Each tool call and a short result is printed.

Options:
  --mode MODE   read-only | workspace-write | danger-full-access (default: workspace-write)
  --keep        keep the temporary copy and print where it is
  --json        print each event as one JSON line instead of the transcript
  -h, --help    show this help

Exit codes: 0 the tests went from red to green; 1 they did not.
`;

/** The sample project, committed beside the package and found relative to this module. */
function demoProjectPath(): string {
  return fileURLToPath(new URL("../../assets/demo-project/", import.meta.url));
}

const CART_FIX_OLD = "for (let index = 1; index < items.length; index += 1) {";
const CART_FIX_NEW = "for (let index = 0; index < items.length; index += 1) {";

const FORMAT_DIFF = `--- a/src/format.js
+++ b/src/format.js
@@ -1,5 +1,5 @@
 /** Cents as dollars with two decimals: 1250 → \`$12.50\`. */
 export function formatPrice(cents) {
   const dollars = cents / 100;
-  return \`$\${dollars.toFixed(1)}\`;
+  return \`$\${dollars.toFixed(2)}\`;
 }
`;

/** The demo's script: what a careful model does with this project, one step per model turn. */
function demoScript(): ScriptedStep[] {
  return [
    {
      text: "Let me look at the project first.",
      toolCalls: [{ name: "list_files", input: { dir: ".", recursive: true } }],
    },
    {
      text: "Run the tests to see what fails.",
      toolCalls: [{ name: "run_tests", input: { command: "node --test" } }],
    },
    {
      text: "subtotal and formatPrice look wrong. Where are they defined?",
      toolCalls: [
        { name: "search_files", input: { pattern: "export function (subtotal|formatPrice)" } },
      ],
    },
    {
      toolCalls: [{ name: "read_file", input: { path: "src/cart.js" } }],
    },
    {
      text: "The loop starts at index 1 and skips the first item. Fix it.",
      toolCalls: [
        { name: "edit_file", input: { path: "src/cart.js", old: CART_FIX_OLD, new: CART_FIX_NEW } },
      ],
    },
    {
      toolCalls: [{ name: "read_file", input: { path: "src/format.js" } }],
    },
    {
      text: "toFixed(1) drops the second decimal; patch it with a diff.",
      toolCalls: [{ name: "apply_diff", input: { path: "src/format.js", diff: FORMAT_DIFF } }],
    },
    {
      text: "Run the tests again.",
      toolCalls: [{ name: "run_tests", input: { command: "node --test" } }],
    },
    {
      text: "Fixed both bugs: subtotal skipped the first item (the loop started at 1), and formatPrice printed one decimal instead of two. All tests pass.",
    },
  ];
}

/**
 * One short line per event, for a person watching. What the model and the tools said is shown
 * with its control characters made visible, so none of it can drive the terminal.
 */
export function formatAgentEvent(event: AgentEvent): string | undefined {
  switch (event.type) {
    case "step-start":
      return `\nstep ${event.step}`;
    case "text":
      return `  model: ${showControlCharacters(event.text, { multiline: true })}`;
    case "tool-call":
      return `  → ${showControlCharacters(event.toolName)} ${oneLine(showControlCharacters(JSON.stringify(event.input)), 160)}`;
    case "tool-result": {
      const status = event.error
        ? `error${event.code === undefined ? "" : ` ${showControlCharacters(event.code)}`}`
        : "ok";
      return `  ← ${status}: ${summarize(showControlCharacters(event.output, { multiline: true }))}`;
    }
    case "usage":
      return undefined;
    case "done": {
      const { stopReason, steps, toolCalls, usage } = event.result;
      return `\ndone (${stopReason}) after ${counted(steps, "step")} and ${counted(toolCalls, "tool call")}; ${counted(usage.totalTokens, "token")}`;
    }
  }
}

function oneLine(text: string, maxChars: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > maxChars ? `${flat.slice(0, maxChars - 1)}…` : flat;
}

/** The first lines of a result, and how many more there were. */
function summarize(output: string, maxLines = 4): string {
  const lines = output.replace(/\n+$/, "").split("\n");
  const shown = lines.slice(0, maxLines).map((line) => oneLine(line, 120));
  const more = lines.length - shown.length;
  const body = shown.join("\n      ");
  return more > 0 ? `${body}\n      … ${counted(more, "more line")}` : body;
}

/** Print a run's events as they come (a transcript, or JSON lines), and return its result. */
export async function printAgentRun({
  run,
  io,
  json = false,
}: {
  run: AgentRun;
  io: CliIo;
  /** @default false */
  json?: boolean;
}): Promise<AgentResult> {
  for await (const event of run) {
    if (json) {
      io.stdout(
        `${showControlCharacters(JSON.stringify(event.type === "done" ? { type: "done", result: summaryOf(event.result) } : event))}\n`,
      );
      continue;
    }
    const line = formatAgentEvent(event);
    if (line !== undefined) io.stdout(`${line}\n`);
  }
  return run.result;
}

function summaryOf(result: AgentResult) {
  const { transcript: _transcript, ...rest } = result;
  return rest;
}

/** `pleach demo`: a scripted agent fixes the sample project; resolves to the exit code. */
export async function demoCommand({ args, io }: CommandInput): Promise<number> {
  const { values } = parseCommandLine({
    args,
    command: "demo",
    options: DEMO_OPTIONS,
  });
  if (values.help) {
    io.stdout(DEMO_HELP);
    return 0;
  }
  const mode = parseMode({ mode: values.mode, command: "demo" });
  const workspace = await realpath(await mkdtemp(path.join(os.tmpdir(), "pleach-demo-")));
  // Output closed early (pleach demo | head) ends the process at once: the copy goes with it.
  const removeAtExit = () => rmSync(workspace, { recursive: true, force: true });
  if (!values.keep) process.once("exit", removeAtExit);
  try {
    await cp(demoProjectPath(), workspace, { recursive: true });
    if (!values.json) {
      io.stdout(
        `pleach demo: a scripted model fixes a sample project (no API key needed)\nworkspace: ${workspace} (a copy of the sample, sandbox mode ${mode})\n`,
      );
    }
    const runtime = createCodingAgentRuntime({
      sandboxProvider: createLocalSandboxProvider({ root: workspace, mode }),
      model: createScriptedModel({ steps: demoScript(), name: "scripted:demo" }),
      maxSteps: 20,
    });
    const testRuns: boolean[] = [];
    let noSandbox = false;
    const run = runtime.run({
      task: "The tests of this shop cart fail. Find the bugs, fix them, and make the tests pass.",
    });
    const watched: AgentRun = {
      result: run.result,
      async *[Symbol.asyncIterator]() {
        for await (const event of run) {
          if (event.type === "tool-result" && event.toolName === "run_tests") {
            testRuns.push(!event.error);
          }
          if (event.type === "tool-result" && event.code === "NO_SANDBOX") noSandbox = true;
          yield event;
        }
      },
    };
    const result = await printAgentRun({ run: watched, io, json: values.json });
    const wentGreen =
      result.stopReason === "final-answer" && testRuns[0] === false && testRuns.at(-1) === true;
    if (!values.json) {
      io.stdout(
        wentGreen
          ? '\nThe tests went from red to green. Try it on your own code: pleach run "<task>" --model ...\n'
          : `\nThe demo did not end green (test runs: ${testRuns.map((green) => (green ? "green" : "red")).join(", ") || "none"}).\n`,
      );
      if (noSandbox) {
        io.stdout(
          "Commands could not run: this host has no working OS sandbox. Install bubblewrap (apt-get install bubblewrap), or run 'pleach demo --mode danger-full-access' to run them unconfined.\n",
        );
      }
      if (values.keep) io.stdout(`kept the workspace: ${workspace}\n`);
    }
    return wentGreen ? 0 : 1;
  } finally {
    process.off("exit", removeAtExit);
    if (!values.keep) await rm(workspace, { recursive: true, force: true });
  }
}
