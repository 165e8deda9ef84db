import type { ExecResult, JobInfo } from "@pleach/core/sandbox";
import type { ProcessConfig } from "./gen/process/process_pb.js";
import type { ProcessEventCase } from "./process-table.js";

/** How envd's process service reads a process's config and words its end, from pleach's. */

/** The shell command a process config stands for: `bash -c SCRIPT` runs SCRIPT. */
export function commandOf({ cmd, args }: Pick<ProcessConfig, "cmd" | "args">): string {
  const shell = /^(?:\/usr)?(?:\/bin\/)?(?:ba)?sh$/.test(cmd);
  const script = args.indexOf("-c");
  if (
    shell &&
    script !== -1 &&
    script === args.length - 2 &&
    args.slice(0, script).every((flag) => /^-[a-z]+$/.test(flag))
  ) {
    return args[script + 1] as string;
  }
  return [cmd, ...args].map((word) => `'${word.replaceAll("'", `'\\''`)}'`).join(" ");
}

/** envd's end event for a foreground command's result: its exit, and what pleach adds. */
export function execEnd(result: ExecResult): Omit<ProcessEventCaseEnd, never> {
  const notes = [
    ...(result.timedOut ? ["the command ran past its time limit and was killed"] : []),
    ...(result.truncated
      ? ["some output was dropped to stay within the server's output limit"]
      : []),
    ...(result.sandboxNotes ?? []),
  ];
  return {
    exitCode: result.exitCode ?? -1,
    exited: result.exitCode !== null,
    status:
      result.exitCode === null
        ? `signal: ${result.signal ?? "killed"}`
        : `exit status ${result.exitCode}`,
    ...(notes.length === 0 ? {} : { error: notes.join("\n") }),
  };
}

type ProcessEventCaseEnd = Extract<ProcessEventCase, { case: "end" }>["value"];

/** envd's end event for a job that ended. */
export function jobEnd(job: JobInfo): ProcessEventCaseEnd {
  return {
    exitCode: job.exitCode ?? -1,
    exited: job.exitCode !== null,
    status:
      job.exitCode === null ? `signal: ${job.signal ?? "killed"}` : `exit status ${job.exitCode}`,
  };
}
