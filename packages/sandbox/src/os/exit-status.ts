import os from "node:os";

/**
 * What a wait status says (as the warm and session servers report a command's end): its exit
 * code, or the signal that ended it.
 */

/**
 * The exit code in a server's `exit <wait status>` line, as bubblewrap reports a command: its own
 * code, or 128 + the signal that killed it.
 */
export function exitCodeOf(line: string): number {
  const status = Number(line.slice("exit ".length));
  return (status & 0x7f) === 0 ? status >> 8 : 128 + (status & 0x7f);
}

/** The name of signal `number` (`"SIGTERM"`), or `"SIG<number>"` for one this host does not name. */
export function signalName(number: number): NodeJS.Signals {
  const found = Object.entries(os.constants.signals).find(([, value]) => value === number);
  return (found?.[0] ?? `SIG${number}`) as NodeJS.Signals;
}
