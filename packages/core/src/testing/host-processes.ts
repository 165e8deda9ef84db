import { readdirSync, readFileSync } from "node:fs";

/**
 * The command lines of the host's processes (arguments joined by spaces), read from `/proc` at
 * once: `ps` takes long enough to start that a process dying meanwhile is missed, and overflows
 * its output buffer on a machine running many sandboxes with long arguments. Empty without `/proc`.
 */
export function hostCommandLines(): string[] {
  const lines: string[] = [];
  let entries: string[] = [];
  try {
    entries = readdirSync("/proc");
  } catch {
    return lines;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      lines.push(readFileSync(`/proc/${entry}/cmdline`, "utf8").replace(/\0/g, " "));
    } catch {
      // Gone meanwhile.
    }
  }
  return lines;
}
