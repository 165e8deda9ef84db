import {
  capText,
  defineTool,
  MODEL_OUTPUT_LIMIT,
  type PluginToolDefinition,
  ToolError,
} from "@pleach/core";
import type { ExecResult, SandboxClient } from "../../sandbox/index.js";
import { jobFailed, renderJobRead } from "../jobs/state.js";
import { fullOutputNoteLines, networkOffNoted, sandboxNoteLines } from "../shared/sandbox-hints.js";
import { runInBackground } from "./background.js";
import {
  BASH_MAX_TIMEOUT_MS,
  type BashOutput,
  bashInputSchema,
  bashOutputSchema,
} from "./schema.js";

/** Options of {@link createBashTool}. */
export interface BashToolOptions {
  /**
   * The time limit of a call that gives no `timeout`, in milliseconds.
   * @default 60_000
   */
  defaultTimeoutMs?: number;
  /**
   * The most characters of `output`, notes included.
   * @default 50_000
   */
  maxOutputChars?: number;
  /**
   * Bytes the client keeps of each of stdout and stderr (head and tail, with its own marker that
   * counts what it dropped), so a command that prints gigabytes costs bounded memory. Just under
   * `maxOutputChars`, so one noisy stream fills the budget and its marker's count survives the cap.
   * @default 49_000
   */
  maxOutputBytes?: number;
  /**
   * With `background`: how long to wait for a job's first output when the call gives no
   * `yieldMs`, in milliseconds.
   * @default 1_000
   */
  defaultYieldMs?: number;
}

/**
 * `bash`: run a shell command through the sandbox client and return what it printed.
 * A non-zero exit or a timeout is a result with `error: true` for the model, not an exception; a
 * client that refuses to run (`NO_SANDBOX`, say) throws its `ToolError`, which is passed on.
 */
export function createBashTool(
  client: SandboxClient,
  {
    defaultTimeoutMs = 60_000,
    maxOutputChars = MODEL_OUTPUT_LIMIT,
    maxOutputBytes = Math.max(2, maxOutputChars - 1_000),
    defaultYieldMs = 1_000,
  }: BashToolOptions = {},
): PluginToolDefinition<typeof bashInputSchema, typeof bashOutputSchema> {
  return defineTool({
    name: "bash",
    description: [
      "Run a shell command in the working directory and return its output.",
      "stdout and stderr come back merged (stdout first); a non-zero exit appends `[exit N]`.",
      `Output over ${maxOutputChars.toLocaleString("en-US")} characters keeps its head and tail; filter long output (grep, head, tail) rather than printing it all.`,
      `The default time limit is ${defaultTimeoutMs} ms (pass \`timeout\` in ms, up to ${BASH_MAX_TIMEOUT_MS}); stdin is empty.`,
      "With `background: true` the command runs as a job that outlives the call (servers, watchers, REPLs and prompts, long builds; `pty: true` gives it a terminal), read with job_output, answered with job_input, stopped with job_kill; the sandbox keeps jobs only where it offers a session.",
      "Prefer read_file and edit_file over cat, sed and echo for reading and changing files.",
    ].join(" "),
    inputSchema: bashInputSchema,
    outputSchema: bashOutputSchema,
    annotations: {
      title: "Run shell command",
      readOnlyHint: false,
      destructiveHint: true,
      openWorldHint: true,
    },
    async execute({ command, timeout, cwd, background, yieldMs, pty }, { abortSignal }) {
      if (background === true) {
        if (timeout !== undefined) {
          throw new ToolError(
            "INVALID_INPUT",
            "bash got `timeout` with `background: true`: a background job has no time limit; it runs until it exits, job_kill stops it or the session ends. Drop `timeout`, or run in the foreground.",
          );
        }
        return runInBackground({
          client,
          command,
          cwd,
          pty: pty === true,
          yieldMs: yieldMs ?? defaultYieldMs,
          maxOutputBytes,
          abortSignal,
        });
      }
      for (const [name, value] of [
        ["yieldMs", yieldMs],
        ["pty", pty],
      ] as const) {
        if (value !== undefined) {
          throw new ToolError(
            "INVALID_INPUT",
            `bash got \`${name}\` without \`background: true\`: it applies to background jobs only. Add \`background: true\`, or drop \`${name}\`.`,
          );
        }
      }
      const timeoutMs = timeout ?? defaultTimeoutMs;
      const result = await client.exec(command, {
        ...(cwd === undefined ? {} : { cwd }),
        timeoutMs,
        abortSignal,
        maxOutputBytes,
        // Just under the most the model sees, stdout and stderr together.
        fullOutputOverBytes: Math.max(0, maxOutputChars - 2_000),
      });
      const notes: string[] = [];
      if (result.exitCode !== 0) {
        const how =
          result.exitCode ?? (result.signal === undefined ? "signal" : `signal ${result.signal}`);
        notes.push(`[exit ${how}]`);
      }
      if (result.timedOut) notes.push(timeoutLine(timeoutMs, result));
      const merged = mergeStreams(result.stdout, result.stderr);
      notes.push(...sandboxNoteLines(result));
      // Whether the text is cut is known only once the trailer's length is; the note is short.
      const fullNote = fullOutputNoteLines({ cut: true, fullOutput: result.fullOutput });
      const room = Math.max(0, maxOutputChars - [...notes, ...fullNote].join("\n").length - 1);
      const body = capText(merged, { maxChars: room });
      const truncated = result.truncated || body.cutChars > 0;
      notes.push(...fullOutputNoteLines({ cut: truncated, fullOutput: result.fullOutput }));
      const trailer = notes.join("\n");
      const separator = trailer === "" || body.text === "" || body.text.endsWith("\n") ? "" : "\n";
      const output: BashOutput = {
        output: `${body.text}${separator}${trailer}`,
        exitCode: result.exitCode,
        timedOut: result.timedOut,
        truncated,
        durationMs: result.durationMs,
      };
      if (result.signal !== undefined) output.signal = result.signal;
      if (result.fullOutput !== undefined) output.fullOutput = result.fullOutput;
      return output;
    },
    toModelOutput(output) {
      const { jobId, state, next, skippedBytes, more } = output;
      if (jobId !== undefined && state !== undefined && next !== undefined) {
        const read = { ...output, jobId, state, next, skippedBytes: skippedBytes ?? 0 };
        return {
          output: renderJobRead({ ...read, more: more ?? false }),
          error: jobFailed(read),
        };
      }
      return { output: output.output, error: output.exitCode !== 0 || output.timedOut };
    },
  });
}

/**
 * The line on a command killed at its time limit. With the network off (the sandbox's note on it
 * follows) a larger limit is no way out for a command that waits on the network, so it is not
 * offered.
 */
function timeoutLine(timeoutMs: number, result: Pick<ExecResult, "sandboxNotes">): string {
  return networkOffNoted(result)
    ? `[timed out after ${timeoutMs} ms and was killed; the network is off for commands here, which a command waiting on it never gets past (see the sandbox's note for how it is turned on); if it does not need the network, pass a larger \`timeout\` (at most ${BASH_MAX_TIMEOUT_MS} ms) or make it finish sooner]`
    : `[timed out after ${timeoutMs} ms and was killed; pass a larger \`timeout\` (at most ${BASH_MAX_TIMEOUT_MS} ms) or make the command finish sooner]`;
}

/** stdout then stderr, merged, with a line break between when stdout lacks one. */
function mergeStreams(stdout: string, stderr: string): string {
  if (stdout === "" || stderr === "" || stdout.endsWith("\n")) return `${stdout}${stderr}`;
  return `${stdout}\n${stderr}`;
}
