const MARKER = "pleach-exit-status";
const MARKER_LINE = new RegExp(`\\n?${MARKER} (\\d+)\\n?$`);

/**
 * Wrap the first command of a pipeline so that its exit status survives the pipe: a pipeline's
 * status is its last command's (`head`), and `pipefail` is not POSIX sh. The status is printed as
 * the last line of stderr, where {@link takeExitStatus} finds it; stdout is untouched.
 */
export function reportExitStatus(command: string): string {
  return `{ ${command}; printf '\\n${MARKER} %s\\n' "$?" >&2; }`;
}

/** The exit status that {@link reportExitStatus} printed, and stderr without that line. */
export interface TakenExitStatus {
  /** The wrapped command's status, or `undefined` when the marker is missing (the shell died). */
  status: number | undefined;
  /** stderr as the wrapped command printed it, trimmed. */
  stderr: string;
}

/** Read the status line {@link reportExitStatus} added to `stderr`. */
export function takeExitStatus(stderr: string): TakenExitStatus {
  const match = MARKER_LINE.exec(stderr);
  if (match === null) return { status: undefined, stderr: stderr.trim() };
  return { status: Number(match[1]), stderr: stderr.slice(0, match.index).trim() };
}
