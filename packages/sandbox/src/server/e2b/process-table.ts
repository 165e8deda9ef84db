import { Code, ConnectError } from "@connectrpc/connect";
import type { ProcessConfig, ProcessEvent_EndEvent } from "./gen/process/process_pb.js";

/** What one event of a process's stream carries (the generated `ProcessEvent`'s `event`). */
export type ProcessEventCase =
  | { case: "start"; value: { pid: number } }
  | { case: "data"; value: { output: { case: "stdout" | "stderr" | "pty"; value: Uint8Array } } }
  | { case: "end"; value: Omit<ProcessEvent_EndEvent, "$typeName"> }
  | { case: "keepalive"; value: Record<string, never> };

/** What the table keeps of a process's config: what `List` answers with, bounded. */
export type KeptConfig = Pick<ProcessConfig, "cmd" | "args" | "envs" | "cwd">;

/**
 * A process started through envd's `Start`: a foreground command of the sandbox's client (no
 * stdin, no terminal: stdout and stderr apart, exact exit status), or a background job of its
 * session (stdin or a terminal asked for: one output stream, input, reconnects).
 */
export interface ProcessEntry {
  pid: number;
  tag: string | undefined;
  /** A bounded copy of the config it was started with, while it runs; empty once it has ended. */
  config: KeptConfig;
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
  /**
   * Add a process. Ended processes are forgotten oldest first to make room; when every entry
   * still runs, this throws a `ResourceExhausted` error saying so.
   */
  add(entry: Omit<ProcessEntry, "pid" | "listeners" | "ended">): ProcessEntry;
  /** Mark a process ended: it keeps its pid, tag and job id, not its config. */
  end(entry: ProcessEntry): void;
  /** The process a selector names, by pid or by tag. */
  find(
    selector: { case: "pid"; value: number } | { case: "tag"; value: string } | { case: undefined },
  ): ProcessEntry | undefined;
  running(): ProcessEntry[];
  /** How many processes the table holds, running and ended. */
  size(): number;
  /** Whether every place is taken, by running or ended processes. */
  full(): boolean;
}

/** The most processes, running and ended, one sandbox's table holds. */
export const MAX_PROCESSES = 256;
/** The most characters kept of one string of a config (the command, an argument, a value). */
const MAX_KEPT_CHARS = 4096;
/** The most characters kept of a config's arguments, and apart of its environment. */
const MAX_KEPT_TOTAL = 16 * 1024;

export function createProcessTable(limit = MAX_PROCESSES): ProcessTable {
  const entries = new Map<number, ProcessEntry>();
  let nextPid = 1000;
  const end = (entry: ProcessEntry) => {
    entry.ended = true;
    entry.config = { cmd: "", args: [], envs: {}, cwd: undefined };
  };
  return {
    add(init) {
      for (const [pid, old] of entries) {
        if (entries.size < limit) break;
        if (old.ended) entries.delete(pid);
      }
      if (entries.size >= limit) {
        throw new ConnectError(
          `this sandbox already runs ${entries.size} processes, the most it holds; wait for some to end or kill them (commands.kill(pid)) before starting more`,
          Code.ResourceExhausted,
          { "pleach-code": "TOO_MANY_JOBS" },
        );
      }
      nextPid += 1;
      const entry: ProcessEntry = {
        ...init,
        config: keptConfig(init.config),
        pid: nextPid,
        listeners: new Set(),
        ended: false,
      };
      entries.set(entry.pid, entry);
      return entry;
    },
    end,
    find(selector) {
      if (selector.case === "pid") return entries.get(selector.value);
      if (selector.case === "tag") {
        return [...entries.values()].find((entry) => entry.tag === selector.value);
      }
      return undefined;
    },
    running: () => [...entries.values()].filter((entry) => !entry.ended),
    size: () => entries.size,
    full: () => entries.size >= limit,
  };
}

/** A copy of `config` within the bounds above: long strings cut, later arguments and variables left out. */
function keptConfig({ cmd, args, envs, cwd }: KeptConfig): KeptConfig {
  const cut = (text: string) => text.slice(0, MAX_KEPT_CHARS);
  let argChars = 0;
  const keptArgs: string[] = [];
  for (const arg of args) {
    argChars += Math.min(arg.length, MAX_KEPT_CHARS);
    if (argChars > MAX_KEPT_TOTAL) break;
    keptArgs.push(cut(arg));
  }
  let envChars = 0;
  const keptEnvs: Record<string, string> = {};
  for (const [name, value] of Object.entries(envs)) {
    envChars += Math.min(name.length, MAX_KEPT_CHARS) + Math.min(value.length, MAX_KEPT_CHARS);
    if (envChars > MAX_KEPT_TOTAL) break;
    keptEnvs[cut(name)] = cut(value);
  }
  return {
    cmd: cut(cmd),
    args: keptArgs,
    envs: keptEnvs,
    cwd: cwd === undefined ? undefined : cut(cwd),
  };
}
