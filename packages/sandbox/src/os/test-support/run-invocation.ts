import { spawn } from "node:child_process";
import type { CommandInvocation } from "../command-wrapper.js";
import { feedInputs, inputPipes } from "../launcher-inputs.js";

/** What a test sees of a command it ran. */
export interface RunResult {
  exitCode: number | null;
  stdout: string;
  stderr: string;
}

/** Options of {@link runInvocation}. */
export interface RunInvocationOptions {
  stdin?: string;
  /** Kill the group after this long, so a broken sandbox cannot hang the suite. */
  timeoutMs?: number;
}

/**
 * Spawn an invocation the way the local sandbox client does: its own process group, stdin from
 * /dev/null unless given, its inputs (bubblewrap's seccomp filter) on fds 3 and up, the whole
 * group killed once the command exits, then the release.
 */
export function runInvocation(
  invocation: CommandInvocation,
  { stdin, timeoutMs = 20_000 }: RunInvocationOptions = {},
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(invocation.file, invocation.args, {
      env: invocation.env,
      detached: true,
      stdio: [
        stdin === undefined ? "ignore" : "pipe",
        "pipe",
        "pipe",
        ...inputPipes(invocation.inputs),
      ],
    });
    feedInputs(child, invocation.inputs);
    const killGroup = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
      } catch {
        // Already gone.
      }
    };
    const timer = setTimeout(killGroup, timeoutMs);
    let stdout = "";
    let stderr = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8");
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8");
    });
    if (stdin !== undefined) child.stdin?.end(stdin);
    child.on("error", (error) => {
      clearTimeout(timer);
      invocation.release?.().finally(() => reject(error));
    });
    child.on("exit", () => killGroup());
    child.on("close", (exitCode) => {
      clearTimeout(timer);
      const result = { exitCode, stdout, stderr };
      (invocation.release?.() ?? Promise.resolve()).then(() => resolve(result), reject);
    });
  });
}
