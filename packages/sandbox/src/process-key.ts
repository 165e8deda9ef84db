import { readFileSync, readlinkSync } from "node:fs";

/**
 * Who a process is, for good: the boot, the pid namespace, the pid and its start time (clock
 * ticks since boot, from `/proc/<pid>/stat`), so that a pid used again by another process is not
 * taken for it. What a process leaves for cleaning after its death (Docker containers
 * and their socket folders) is named by its key.
 */
export interface ProcessKey {
  bootId: string;
  pidNamespace: string;
  pid: number;
  startTime: string;
}

const KEY_PATTERN = /^([0-9a-f-]{36})\.(\d+)\.(\d+)\.(\d+)$/;

/**
 * This process's key; `undefined` without a `/proc` of this process's own pid namespace (where
 * whether another process still runs could not be told: nothing is reaped then).
 */
export function ownProcessKey(): ProcessKey | undefined {
  try {
    const bootId = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
    const pidNamespace = /^pid:\[(\d+)\]$/.exec(readlinkSync("/proc/self/ns/pid"))?.[1];
    const self = processStart("self");
    if (!/^[0-9a-f-]{36}$/.test(bootId) || pidNamespace === undefined || self === undefined) {
      return undefined;
    }
    // /proc must be of our pid namespace: our pid there is the process we are.
    if (processStart(String(process.pid))?.startTime !== self.startTime) return undefined;
    return { bootId, pidNamespace, pid: process.pid, startTime: self.startTime };
  } catch {
    return undefined;
  }
}

/** The key of the running process `pid` of this pid namespace; `undefined` when it cannot be told. */
export function processKeyOf(pid: number): ProcessKey | undefined {
  const own = ownProcessKey();
  try {
    const found = own === undefined ? undefined : processStart(String(pid));
    if (own === undefined || found === undefined || found.zombie) return undefined;
    return { ...own, pid, startTime: found.startTime };
  } catch {
    return undefined;
  }
}

/** `boot.pidns.pid.start`: a Docker label value. */
export function formatProcessKey(key: ProcessKey): string {
  return `${key.bootId}.${key.pidNamespace}.${key.pid}.${key.startTime}`;
}

/** The key {@link formatProcessKey} wrote, or `undefined` for any other text. */
export function parseProcessKey(text: string): ProcessKey | undefined {
  const match = KEY_PATTERN.exec(text.trim());
  if (match === null) return undefined;
  const [, bootId = "", pidNamespace = "", pid = "", startTime = ""] = match;
  return { bootId, pidNamespace, pid: Number(pid), startTime };
}

/**
 * Whether the process `key` still runs, seen from `own`: a key of another boot is dead (the
 * machine restarted), one of another pid namespace is `unknown` (left alone).
 */
export function processState(key: ProcessKey, own: ProcessKey): "alive" | "dead" | "unknown" {
  if (key.bootId !== own.bootId) return "dead";
  if (key.pidNamespace !== own.pidNamespace) return "unknown";
  try {
    const found = processStart(String(key.pid));
    return found === undefined || found.startTime !== key.startTime || found.zombie
      ? "dead"
      : "alive";
  } catch {
    return "unknown";
  }
}

/** A process's start time and whether it is a zombie; `undefined` when there is no such process. */
function processStart(pid: string): { startTime: string; zombie: boolean } | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  // The command name (in parentheses) may hold spaces and parentheses: fields follow the last ")".
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  const startTime = fields[19];
  if (startTime === undefined || !/^\d+$/.test(startTime)) throw new Error("unreadable stat");
  return { startTime, zombie: fields[0] === "Z" || fields[0] === "X" };
}
