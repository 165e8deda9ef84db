import { ToolError } from "@pleach/core";
import type { SandboxJobs } from "@pleach/core/sandbox";
import type { Sandbox } from "e2b";
import { JobTable } from "../session/job-table.js";
import { toolErrorOfE2B } from "./e2b-errors.js";

/** Limits of the jobs of an E2B client. */
export interface E2BJobLimits {
  /** Jobs running at once. */
  maxJobs: number;
  /** Bytes of output kept per job (the newest). */
  maxOutputBytes: number;
}

/**
 * Background jobs over an E2B sandbox: each a background command (`commands.run` with
 * `background: true, stdin: true`), its stdout and stderr one log of the session's job table,
 * its input `sendStdin`, its kill the command handle's. The job table is the local session's
 * (cursors, waits, `until`, bounds and codes come from the same code).
 */
export function createE2BJobs(
  sandbox: Sandbox,
  { cwdOf, limits }: { cwdOf(cwd: string | undefined): Promise<string>; limits: E2BJobLimits },
): SandboxJobs & { close(): void } {
  return new JobTable(async (command, { cwd, env, pty }, events) => {
    if (pty) {
      throw toolErrorOfE2B(
        new Error("a terminal is not offered by this client"),
        "job_start with pty",
      );
    }
    const handle = await sandbox.commands
      .run(command, {
        background: true,
        stdin: true,
        cwd: await cwdOf(cwd),
        ...(env === undefined ? {} : { envs: env }),
        timeoutMs: 0,
        onStdout: (data) => events.onData("stdout", Buffer.from(data)),
        onStderr: (data) => events.onData("stderr", Buffer.from(data)),
      })
      .catch((error: unknown) => {
        throw toolErrorOfE2B(error, "job_start");
      });
    // The wait status a job table reads: an exit code in the high byte, or the signal (KILL).
    void handle
      .wait()
      .then(
        (result) => events.onExit(result.exitCode << 8),
        (error: { exitCode?: number }) => {
          const code = error.exitCode;
          events.onExit(typeof code === "number" && code >= 0 ? code << 8 : 9);
        },
      )
      .finally(() => events.onGone());
    return {
      id: String(handle.pid),
      get queuedInput() {
        return 0;
      },
      // Awaited by the job table: a refusal is the caller's, never input silently dropped.
      input: (bytes: Buffer) =>
        handle.sendStdin(new Uint8Array(bytes)).catch((error: unknown) => {
          // envd answers an input bound with ResourceExhausted, which the SDK calls a rate limit.
          const name = error instanceof Error ? error.name : "";
          if (name !== "RateLimitError") throw toolErrorOfE2B(error, "job_input");
          throw new ToolError("TOO_LARGE", `job_input: ${(error as Error).message}`, {
            cause: error,
          });
        }),
      endInput: () => void handle.closeStdin().catch(() => {}),
      signal: () => void handle.kill().catch(() => false),
      reap: () => void handle.kill().catch(() => false),
    };
  }, limits);
}
