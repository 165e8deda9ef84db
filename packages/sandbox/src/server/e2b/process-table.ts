import type { ProcessConfig, ProcessEvent_EndEvent } from "./gen/process/process_pb.js";

/** What one event of a process's stream carries (the generated `ProcessEvent`'s `event`). */
export type ProcessEventCase =
  | { case: "start"; value: { pid: number } }
  | { case: "data"; value: { output: { case: "stdout" | "stderr" | "pty"; value: Uint8Array } } }
  | { case: "end"; value: Omit<ProcessEvent_EndEvent, "$typeName"> }
  | { case: "keepalive"; value: Record<string, never> };

/**
 * A process started through envd's `Start`: a foreground command of the sandbox's client (no
 * stdin, no terminal: stdout and stderr apart, exact exit status), or a background job of its
 * session (stdin or a terminal asked for: one output stream, input, reconnects).
 */
export interface ProcessEntry {
  pid: number;
  tag: string | undefined;
  config: Pick<ProcessConfig, "cmd" | "args" | "envs" | "cwd">;
  /** The job that runs it, for a process with stdin or a terminal. */
  jobId: string | undefined;
  /** Ends a foreground command (its process group is killed). */
  controller: AbortController | undefined;
  /** Subscribers to a foreground command's events (`Connect` adds one). */
  listeners: Set<(event: ProcessEventCase | Error | undefined) => void>;
  ended: boolean;
}

/** The processes of one sandbox, by pid (a small number of this table's, not the host's). */
export interface ProcessTable {
  add(entry: Omit<ProcessEntry, "pid" | "listeners" | "ended">): ProcessEntry;
  /** The process a selector names, by pid or by tag. */
  find(
    selector: { case: "pid"; value: number } | { case: "tag"; value: string } | { case: undefined },
  ): ProcessEntry | undefined;
  running(): ProcessEntry[];
}

const MAX_ENDED = 256;

export function createProcessTable(): ProcessTable {
  const entries = new Map<number, ProcessEntry>();
  let nextPid = 1000;
  return {
    add(init) {
      nextPid += 1;
      const entry: ProcessEntry = { ...init, pid: nextPid, listeners: new Set(), ended: false };
      entries.set(entry.pid, entry);
      // Ended processes are forgotten oldest first past a bound, so the table stays small.
      if (entries.size > MAX_ENDED) {
        for (const [pid, old] of entries) {
          if (entries.size <= MAX_ENDED) break;
          if (old.ended) entries.delete(pid);
        }
      }
      return entry;
    },
    find(selector) {
      if (selector.case === "pid") return entries.get(selector.value);
      if (selector.case === "tag") {
        return [...entries.values()].find((entry) => entry.tag === selector.value);
      }
      return undefined;
    },
    running: () => [...entries.values()].filter((entry) => !entry.ended),
  };
}
