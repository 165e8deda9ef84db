import { Buffer } from "node:buffer";
import { defineTool, MODEL_OUTPUT_LIMIT, type PluginToolDefinition } from "@pleach/core";
import { z } from "zod";
import type { SandboxClient } from "../../sandbox/index.js";
import {
  fullOutputNoteLines,
  keptOutputSchema,
  sandboxNoteLines,
} from "../shared/sandbox-hints.js";
import { parseTestRunnerOutput } from "../test-output/parse.js";
import { COUNT_CATEGORIES, type CountCategory } from "../test-output/tally.js";

/** The longest `timeout` a call may ask for, in milliseconds (one hour). */
const RUN_TESTS_MAX_TIMEOUT_MS = 3_600_000;

/** Input of `run_tests`. */
export const runTestsInputSchema = z
  .object({
    command: z
      .string()
      .min(1)
      .optional()
      .describe(
        "The shell command that runs the tests, e.g. `npx vitest run src/x.test.ts` or " +
          "`pytest -x tests/test_y.py`. Default: `npm test`.",
      ),
    cwd: z
      .string()
      .optional()
      .describe("Folder to run in, relative to the workspace root. Default: the root."),
    timeout: z
      .number()
      .int()
      .positive()
      .max(RUN_TESTS_MAX_TIMEOUT_MS)
      .optional()
      .describe(
        "Time limit in milliseconds; the command and everything it started are killed after it. " +
          "Default: 600000 (10 minutes).",
      ),
  })
  .strict();

const count = z.number().int().nonnegative();

/** Output of `run_tests`. */
export const runTestsOutputSchema = z.object({
  exitCode: z
    .number()
    .int()
    .nullable()
    .describe("The command's exit code; null when a signal ended it (a timeout, say)."),
  stdout: z
    .string()
    .describe("Standard output; when longer than the bound, its head and tail with a marker."),
  stderr: z
    .string()
    .describe("Standard error; when longer than the bound, its head and tail with a marker."),
  durationMs: z.number().nonnegative().describe("Wall-clock time of the command."),
  passed: count.optional().describe("Tests that passed; absent when the output shows no count."),
  failed: count.optional().describe("Tests that failed; absent when the output shows no count."),
  skipped: count.optional().describe("Tests skipped; absent when the output shows no count."),
  todo: count
    .optional()
    .describe(
      "Tests marked todo, where the runner counts them apart from skipped (jest, vitest, node --test); absent unless it counts some.",
    ),
  xfailed: count
    .optional()
    .describe(
      "Expected failures that failed (pytest's xfailed); absent unless the runner counts some.",
    ),
  xpassed: count
    .optional()
    .describe(
      "Expected failures that passed (pytest's xpassed); absent unless the runner counts some.",
    ),
  errors: count
    .optional()
    .describe(
      "Tests that errored, where the runner counts them apart from failures (pytest, unittest); absent unless some did.",
    ),
  deselected: count
    .optional()
    .describe(
      "Tests the selection left out (pytest's deselected, cargo's filtered out); absent unless some were.",
    ),
  failures: z
    .array(z.string())
    .optional()
    .describe("Names of failing tests as the runner printed them, when recognised."),
  runner: z.string().optional().describe("The test runner recognised in the output."),
  timedOut: z.boolean().describe("The command ran past the time limit and was killed."),
  truncated: z.boolean().describe("stdout or stderr was longer than the bound and was cut."),
  signal: z.string().optional().describe("The signal that ended the command, if one did."),
  sandboxNotes: z
    .array(z.string())
    .optional()
    .describe(
      "The sandbox's notes: each ties a failure to one of its rules (a protected or read-only path, a hidden file, the network off) and says the way out.",
    ),
  fullOutput: keptOutputSchema.optional(),
});

/** Input of `run_tests`. */
export type RunTestsInput = z.input<typeof runTestsInputSchema>;
/** Output of `run_tests`. */
export type RunTestsOutput = z.output<typeof runTestsOutputSchema>;

/** Options of {@link createRunTestsTool}. */
export interface RunTestsToolOptions {
  /**
   * The command run when a call gives none.
   * @default "npm test"
   */
  defaultCommand?: string;
  /**
   * The time limit when a call gives none, in milliseconds.
   * @default 600_000
   */
  defaultTimeoutMs?: number;
  /**
   * Bytes kept of each of stdout and stderr in the output (head and tail, the middle cut with a
   * marker), so a runaway test cannot exhaust memory; the counts are parsed from what is kept.
   * @default 1_048_576
   */
  maxOutputBytes?: number;
}

const DESCRIPTION = `Run the project's tests with a shell command (default \`npm test\`) and report the exit code, the passed/failed/skipped counts and the names of failing tests, parsed from the output of jest, vitest, pytest, cargo test, nextest, go test, node --test, mocha, uvu and TAP.

Counts are absent when no runner summary was recognised (that means "unknown", not "no tests"). A non-zero exit is reported, not thrown. The text shows the summary first, then the END of stdout and stderr (where failures usually are), at most 50,000 characters; stdout and stderr each keep at most about 1 MB (head and tail).

Prefer running only the relevant tests (a file, a -t/-k filter) for fast feedback; commands that watch for changes never finish, so pass their run-once flag (\`vitest run\`, \`jest --watchAll=false\`). Default time limit: 10 minutes.`;

/** mocha's words for its three categories, as its summary prints them. */
const MOCHA_WORDS: Partial<Record<CountCategory, string>> = {
  passed: "passing",
  failed: "failing",
  skipped: "pending",
};

/** How many failing test names the model text lists before "and N more". */
const LISTED_FAILURES = 20;

/**
 * Create the `run_tests` tool: runs a test command through the client (in `cwd`, which the
 * client confines to the workspace) and parses `stdout + "\n" + stderr` with
 * {@link parseTestRunnerOutput}. Counts the parser did not find are omitted, never zero.
 */
export function createRunTestsTool(
  client: SandboxClient,
  {
    defaultCommand = "npm test",
    defaultTimeoutMs = 600_000,
    maxOutputBytes = 1024 * 1024,
  }: RunTestsToolOptions = {},
): PluginToolDefinition<typeof runTestsInputSchema, typeof runTestsOutputSchema> {
  return defineTool({
    name: "run_tests",
    description: DESCRIPTION,
    inputSchema: runTestsInputSchema,
    outputSchema: runTestsOutputSchema,
    // Tests write (snapshots, caches, build output) but stay in the workspace.
    annotations: { title: "Run tests", readOnlyHint: false, openWorldHint: false },
    async execute(
      { command = defaultCommand, cwd, timeout = defaultTimeoutMs },
      { abortSignal },
    ): Promise<RunTestsOutput> {
      const result = await client.exec(command, {
        ...(cwd === undefined ? {} : { cwd }),
        timeoutMs: timeout,
        abortSignal,
        maxOutputBytes,
        // Under the room the model text gives stdout and stderr beside the summary.
        fullOutputOverBytes: MODEL_OUTPUT_LIMIT - 10_000,
      });
      const { failures, runner, ...counts } = parseTestRunnerOutput(
        `${result.stdout}\n${result.stderr}`,
      );
      const output: RunTestsOutput = {
        exitCode: result.exitCode,
        stdout: result.stdout,
        stderr: result.stderr,
        durationMs: result.durationMs,
        timedOut: result.timedOut,
        truncated: result.truncated,
      };
      // Only what the parser found: an absent count means "no signal", not zero.
      for (const category of COUNT_CATEGORIES) {
        const value = counts[category];
        if (value !== undefined) output[category] = value;
      }
      if (failures !== undefined && failures.length > 0) output.failures = failures;
      if (runner !== undefined) output.runner = runner;
      if (result.signal !== undefined) output.signal = result.signal;
      if (result.sandboxNotes !== undefined) output.sandboxNotes = result.sandboxNotes;
      if (result.fullOutput !== undefined) output.fullOutput = result.fullOutput;
      return output;
    },
    toModelOutput(output) {
      // A stream that fills the bound was cut by the client: the command printed more than that.
      const printedMore = (text: string) =>
        output.truncated && Buffer.byteLength(text, "utf8") >= maxOutputBytes;
      const summary = summarize(output, maxOutputBytes);
      const fullNote = fullOutputNoteLines({ cut: true, fullOutput: output.fullOutput });
      // Reserve room for the section labels and cut markers below, and the full output's note.
      const reserved = summary.length + 400 + fullNote.join("").length;
      const budget = Math.max(0, MODEL_OUTPUT_LIMIT - reserved);
      const { stdout, stderr } = output;
      // stderr gets what stdout leaves, and at least a quarter of the room when both are long.
      const stderrBudget = Math.min(
        stderr.length,
        Math.max(Math.floor(budget / 4), budget - stdout.length),
      );
      const sections = [summary];
      let cut = output.truncated;
      for (const [label, text, maxChars] of [
        ["stdout", stdout, budget - stderrBudget],
        ["stderr", stderr, stderrBudget],
      ] as const) {
        if (text === "") continue;
        if (text.length > maxChars) cut = true;
        const bound = printedMore(text) ? maxOutputBytes : undefined;
        sections.push(section({ label, fullText: text, maxChars, bound }));
      }
      sections.splice(1, 0, ...fullOutputNoteLines({ cut, fullOutput: output.fullOutput }));
      return {
        output: sections.join("\n"),
        error: output.exitCode !== 0 || output.timedOut,
      };
    },
  });
}

function summarize(output: RunTestsOutput, maxOutputBytes: number): string {
  const seconds = (output.durationMs / 1000).toFixed(1);
  const status = output.timedOut
    ? `timed out after ${seconds} s; the command was killed`
    : output.exitCode === null
      ? `ended by signal ${output.signal ?? "?"} after ${seconds} s`
      : `exit code ${output.exitCode} after ${seconds} s`;
  // In the runner's own words and categories: `24 skipped, 1 xfailed, 3 deselected`, mocha's
  // `3 passing, 1 failing, 2 pending`.
  const words = output.runner === "mocha" ? MOCHA_WORDS : {};
  const counts = COUNT_CATEGORIES.filter((key) => output[key] !== undefined).map(
    (key) =>
      `${output[key]} ${key === "errors" && output[key] === 1 ? "error" : (words[key] ?? key)}`,
  );
  const tally =
    counts.length === 0
      ? "no test counts recognised in the output"
      : `${output.runner === undefined ? "" : `${output.runner}: `}${counts.join(", ")}`;
  const lines = [`${status} · ${tally}`, ...sandboxNoteLines(output)];
  if (output.truncated) {
    lines.push(
      `[output cut: the command printed more than the ${bytes(maxOutputBytes)} kept of stdout or stderr; the middle was dropped and the counts come from the start and end that were kept]`,
    );
  }
  const failures = output.failures ?? [];
  if (failures.length > 0) {
    lines.push("failing tests:");
    for (const name of failures.slice(0, LISTED_FAILURES)) lines.push(`- ${name}`);
    if (failures.length > LISTED_FAILURES) {
      lines.push(`- ... and ${failures.length - LISTED_FAILURES} more`);
    }
  }
  return lines.join("\n");
}

/** What {@link section} shows. */
interface SectionRequest {
  label: "stdout" | "stderr";
  fullText: string;
  /** The most characters of the stream shown: its last ones. */
  maxChars: number;
  /** Set when the client cut the stream at this many bytes: the command printed more. */
  bound: number | undefined;
}

/**
 * A labelled section holding the last `maxChars` characters of `fullText`; a cut says in its
 * label what is shown and, when the client had cut the stream already, that the command printed
 * more than the bound (the client does not say how much more).
 */
function section({ label, fullText, maxChars, bound }: SectionRequest): string {
  // The next label starts a line of its own anyway.
  const text = fullText.endsWith("\n") ? fullText.slice(0, -1) : fullText;
  const printed =
    bound === undefined ? "" : `; the command printed more than ${bytes(bound)} to ${label}`;
  if (text.length <= maxChars) {
    const note = bound === undefined ? "" : ` [output cut: its middle was dropped${printed}]`;
    return `--- ${label}${note} ---\n${text}`;
  }
  let start = text.length - maxChars;
  // Never start on the second half of a surrogate pair.
  const code = text.charCodeAt(start);
  if (code >= 0xdc00 && code <= 0xdfff) start++;
  const shown = (text.length - start).toLocaleString("en-US");
  const of = bound === undefined ? ` of ${text.length.toLocaleString("en-US")}` : "";
  return `--- ${label} [output cut: showing the last ${shown}${of} characters${printed}] ---\n${text.slice(start)}`;
}

function bytes(count: number): string {
  return `${count.toLocaleString("en-US")} bytes`;
}
