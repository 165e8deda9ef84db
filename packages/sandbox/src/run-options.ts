/** Options of {@link runProcess}. */
export interface RunProcessOptions {
  /** Real path of the folder to run in. */
  cwd: string;
  stdin?: string;
  timeoutMs: number;
  abortSignal?: AbortSignal;
  /** Bytes kept of each of stdout and stderr. */
  maxOutputBytes: number;
  /**
   * After TERM, how long the process group has before KILL.
   * @default 1000
   */
  killGraceMs?: number;
  /**
   * After the command exits, how long to wait for its output to close (a background child may
   * hold it) before returning anyway.
   * @default 250
   */
  drainMs?: number;
  /**
   * Called with each piece of output as it is read, decoded as UTF-8 (a character split across
   * reads is held back until it is whole), up to `maxOutputBytes` per stream; for streaming a
   * command's output to a remote caller while it runs.
   */
  onOutput?: (stream: "stdout" | "stderr", text: string) => void;
}

/** How a command runs, as in `runProcess` (its folder and variables come with the command). */
export type WarmRunOptions = Omit<RunProcessOptions, "cwd" | "stdin">;
