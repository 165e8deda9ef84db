/** The signals that end a command cleanly, with the exit status each conventionally gives. */
const EXIT_STATUS = { SIGINT: 130, SIGTERM: 143 } as const;

type TerminationSignal = keyof typeof EXIT_STATUS;

/**
 * How long a command has, after the first signal, to stop what it runs before the process exits
 * anyway. Stopping a command takes up to a second (TERM, then KILL) plus the reaping of a warm
 * sandbox; this only bounds a hang.
 */
const STOP_TIMEOUT_MS = 10_000;

/** What {@link onTermination} reports. */
export interface Termination {
  /** Aborted by the first SIGINT or SIGTERM: pass it to whatever runs commands. */
  readonly signal: AbortSignal;
  /** Settles at the first SIGINT or SIGTERM. */
  readonly received: Promise<void>;
  /** 130 after SIGINT, 143 after SIGTERM (128 + the signal's number); `undefined` before either. */
  readonly exitStatus: number | undefined;
  /** Stop listening (the signals' default action applies again). */
  dispose(): void;
}

/**
 * End a command cleanly on SIGINT (Ctrl-C) or SIGTERM rather than dying at once: the first signal
 * aborts `signal`, and the command stops what it runs, waits for it and returns
 * {@link Termination.exitStatus}, so that the process exits normally and its exit handlers run
 * (among them the look that moves aside what the command made at protected paths). A second
 * signal, or a command that has not stopped {@link STOP_TIMEOUT_MS} after the first, exits at once
 * with the same status.
 */
export function onTermination(): Termination {
  const controller = new AbortController();
  let received: TerminationSignal | undefined;
  let announce: () => void = () => {};
  const receivedPromise = new Promise<void>((resolve) => {
    announce = resolve;
  });
  const handler = (signal: TerminationSignal) => {
    if (received !== undefined) {
      process.exit(EXIT_STATUS[received]);
    }
    received = signal;
    const status = EXIT_STATUS[signal];
    setTimeout(() => process.exit(status), STOP_TIMEOUT_MS).unref();
    controller.abort(new Error(`stopped by ${signal}`));
    announce();
  };
  const listeners = (Object.keys(EXIT_STATUS) as TerminationSignal[]).map((name) => {
    const listener = () => handler(name);
    process.on(name, listener);
    return [name, listener] as const;
  });
  return {
    signal: controller.signal,
    received: receivedPromise,
    get exitStatus() {
      return received === undefined ? undefined : EXIT_STATUS[received];
    },
    dispose() {
      for (const [name, listener] of listeners) process.off(name, listener);
    },
  };
}
