/** The bounds a server puts on the commands of its sandboxes. */
export interface StreamingExecLimits {
  /** The time limit of a command whose request names none. */
  defaultTimeoutMs: number;
  /** Longer time limits asked for are cut to this. */
  maxTimeoutMs: number;
  /** Bytes kept of each of stdout and stderr when the request names none, and the most it may ask. */
  maxOutputBytes: number;
}
