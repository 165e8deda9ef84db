import { ToolError } from "../errors.js";
import type {
  ExecOptions,
  ExecResult,
  FileEncodingOptions,
  SandboxClient,
  SandboxProvider,
  SandboxSession,
} from "./contract.js";
import { SANDBOX_SPECIFICATION_VERSION } from "./contract.js";
import { sandboxJobsOf, wrapJobs } from "./jobs.js";
import { checkSandboxProvider } from "./provider-version.js";
import { isSandboxUnavailable } from "./unavailable.js";

/** Options of {@link createPooledSandboxProvider}. */
export interface PooledSandboxProviderOptions {
  /** Where sandboxes come from: a vendor adapter, such as `createHttpStreamSandboxProvider`. */
  adapter: SandboxProvider;
  /**
   * Sandboxes kept created and ready, so that `acquire()` does not wait for one to be made.
   * @default 0
   */
  min?: number;
  /**
   * The most sandboxes alive at once, ready or in use; `acquire()` waits beyond it.
   * @default 16
   */
  max?: number;
  /**
   * A ready sandbox unused this long is destroyed (and replaced while fewer than `min` are ready),
   * so that none outlives the server's own idle limit.
   * @default 300_000
   */
  idleTimeoutMs?: number;
  /**
   * Times a `readFile` or `writeFile` that failed because the sandbox was unreachable is tried
   * again. Both are safe to repeat: a read changes nothing, a write replaces the whole file with
   * the same bytes. `exec` is never repeated: a command may have run.
   * @default 2
   */
  retries?: number;
  /**
   * The wait before the first retry; it doubles for each next one.
   * @default 50
   */
  retryDelayMs?: number;
  /**
   * Checks a ready sandbox before it is handed out; a sandbox whose check throws an unavailable
   * error is destroyed and another one taken.
   * @default a `readFile` of a file that does not exist: any answer but "unreachable" is healthy
   */
  healthCheck?: (client: SandboxClient) => Promise<void>;
  /** Told of failures no caller sees: a sandbox that could not be made ready or destroyed. */
  onError?: (error: unknown) => void;
}

/** What the pool holds now. */
export interface PoolStats {
  ready: number;
  inUse: number;
  creating: number;
  /** Calls of `acquire()` waiting for room under `max`. */
  waiting: number;
}

/** A session of the pool: its client retries safe calls and notices when the sandbox breaks. */
export interface PooledSandboxSession extends SandboxSession {
  /** Whether a call found the sandbox unreachable; releasing it then just discards it. */
  readonly broken: boolean;
}

/** A {@link SandboxProvider} that keeps sandboxes ready and bounds how many are alive. */
export interface PooledSandboxProvider extends SandboxProvider {
  acquire(options?: { abortSignal?: AbortSignal }): Promise<PooledSandboxSession>;
  /** Give a session back: the same as `session.release()`. */
  release(session: SandboxSession): Promise<void>;
  readonly stats: PoolStats;
  /** Destroy the ready sandboxes and refuse new acquires; sessions in use are released by their holders. */
  close(): Promise<void>;
}

interface Ready {
  session: SandboxSession;
  since: number;
}

const REFILL_BACKOFF_MAX_MS = 30_000;

/**
 * A pool over a vendor adapter: up to `max` sandboxes alive, `min` of them kept ready, ready ones
 * checked before they are handed out (a broken one is destroyed and replaced), `readFile` and
 * `writeFile` retried when the sandbox was unreachable, `exec` never. A released sandbox is
 * destroyed, never handed to the next session: no session sees another's files.
 */
export function createPooledSandboxProvider({
  adapter,
  min = 0,
  max = 16,
  idleTimeoutMs = 300_000,
  retries = 2,
  retryDelayMs = 50,
  healthCheck = defaultHealthCheck,
  onError = () => {},
}: PooledSandboxProviderOptions): PooledSandboxProvider {
  checkSandboxProvider(adapter, "the pool's adapter");
  if (!Number.isInteger(min) || !Number.isInteger(max) || min < 0 || max < 1 || min > max) {
    throw new ToolError(
      "INVALID_INPUT",
      `the pool needs integers 0 <= min <= max, max >= 1; got min ${min}, max ${max}`,
    );
  }
  const ready: Ready[] = [];
  const inUse = new Set<SandboxSession>();
  const waiters: Array<() => void> = [];
  let creating = 0;
  let closed = false;
  let refillFailures = 0;
  let refillTimer: NodeJS.Timeout | undefined;
  let sweeper: NodeJS.Timeout | undefined;

  const alive = () => ready.length + inUse.size + creating;

  const wakeOne = () => waiters.shift()?.();

  const discard = (session: SandboxSession) => {
    session.release().catch(onError);
  };

  const refill = () => {
    if (closed || refillTimer !== undefined) return;
    while (ready.length + creating < min && alive() < max) {
      creating += 1;
      adapter.acquire().then(
        (session) => {
          creating -= 1;
          refillFailures = 0;
          if (closed) discard(session);
          else {
            ready.push({ session, since: Date.now() });
            wakeOne();
          }
        },
        (error: unknown) => {
          creating -= 1;
          onError(error);
          wakeOne();
          // The adapter is failing: try again later, less and less often.
          refillFailures += 1;
          const delay = Math.min(REFILL_BACKOFF_MAX_MS, 100 * 2 ** refillFailures);
          refillTimer = setTimeout(() => {
            refillTimer = undefined;
            refill();
          }, delay);
          refillTimer.unref();
        },
      );
    }
  };

  const sweep = () => {
    const now = Date.now();
    for (let index = ready.length - 1; index >= 0; index -= 1) {
      const entry = ready[index] as Ready;
      if (now - entry.since > idleTimeoutMs) {
        ready.splice(index, 1);
        discard(entry.session);
      }
    }
    refill();
  };

  const ensureSweeper = () => {
    if (sweeper !== undefined || closed) return;
    sweeper = setInterval(sweep, Math.max(10, Math.min(idleTimeoutMs / 2, 30_000)));
    sweeper.unref();
  };

  const waitForRoom = (abortSignal: AbortSignal | undefined) =>
    new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        const index = waiters.indexOf(wake);
        if (index >= 0) waiters.splice(index, 1);
        reject(new ToolError("ABORTED", "acquire was aborted while waiting for a free sandbox"));
      };
      const wake = () => {
        abortSignal?.removeEventListener("abort", onAbort);
        resolve();
      };
      waiters.push(wake);
      abortSignal?.addEventListener("abort", onAbort, { once: true });
    });

  const wrap = (session: SandboxSession): PooledSandboxSession => {
    let broken = false;
    let released: Promise<void> | undefined;
    const noteFailure = (error: unknown) => {
      if (isSandboxUnavailable(error)) broken = true;
      throw error;
    };
    const repeatable = async <Result>(call: () => Promise<Result>): Promise<Result> => {
      for (let attempt = 0; ; attempt += 1) {
        try {
          return await call();
        } catch (error) {
          const gone = isSandboxUnavailable(error) && error.details?.reason === "gone";
          if (!isSandboxUnavailable(error) || gone || attempt >= retries) noteFailure(error);
          await new Promise((resolve) => setTimeout(resolve, retryDelayMs * 2 ** attempt));
        }
      }
    };
    const { client } = session;
    const pooledClient: SandboxClient = {
      readFile: (path: string, options?: FileEncodingOptions) =>
        repeatable(() => client.readFile(path, options)),
      writeFile: (path: string, content: string, options?: FileEncodingOptions) =>
        repeatable(() => client.writeFile(path, content, options)),
      exec: (command: string, options?: ExecOptions): Promise<ExecResult> =>
        client.exec(command, options).catch(noteFailure),
    };
    // Jobs are not repeated (a start twice would be two jobs): a failure is noted as exec's is.
    const jobs = sandboxJobsOf(client);
    if (jobs !== undefined) {
      Object.assign(pooledClient, { jobs: wrapJobs(jobs, (call) => call().catch(noteFailure)) });
    }
    return {
      id: session.id,
      client: pooledClient,
      get broken() {
        return broken;
      },
      release() {
        released ??= (async () => {
          if (!inUse.delete(session)) return;
          try {
            // A broken sandbox's server may not answer: do not make the caller wait on it.
            if (broken) discard(session);
            else await session.release();
          } finally {
            wakeOne();
            refill();
          }
        })();
        return released;
      },
    };
  };

  const provider: PooledSandboxProvider = {
    specificationVersion: SANDBOX_SPECIFICATION_VERSION,
    async acquire({ abortSignal } = {}) {
      ensureSweeper();
      for (;;) {
        if (closed) throw new ToolError("UNSUPPORTED", "the sandbox pool is closed");
        if (abortSignal?.aborted) throw new ToolError("ABORTED", "acquire was aborted");
        const entry = ready.shift();
        if (entry !== undefined) {
          inUse.add(entry.session);
          refill();
          if (await healthy(entry.session)) return wrap(entry.session);
          inUse.delete(entry.session);
          discard(entry.session);
          wakeOne();
          continue;
        }
        if (alive() < max) {
          creating += 1;
          let session: SandboxSession;
          try {
            session = await adapter.acquire(abortSignal === undefined ? {} : { abortSignal });
          } catch (error) {
            wakeOne();
            throw error;
          } finally {
            creating -= 1;
          }
          inUse.add(session);
          refill();
          return wrap(session);
        }
        await waitForRoom(abortSignal);
      }
    },
    release: (session) => session.release(),
    get stats() {
      return { ready: ready.length, inUse: inUse.size, creating, waiting: waiters.length };
    },
    async close() {
      closed = true;
      clearTimeout(refillTimer);
      clearInterval(sweeper);
      const leaving = ready.splice(0);
      await Promise.all(leaving.map(({ session }) => session.release().catch(onError)));
      for (const wake of waiters.splice(0)) wake();
    },
  };

  const healthy = async (session: SandboxSession): Promise<boolean> => {
    try {
      await healthCheck(session.client);
      return true;
    } catch (error) {
      if (isSandboxUnavailable(error)) {
        onError(error);
        return false;
      }
      return true;
    }
  };

  if (min > 0) queueMicrotask(refill);
  return provider;
}

async function defaultHealthCheck(client: SandboxClient): Promise<void> {
  try {
    await client.readFile(".pleach-pool-health-probe");
  } catch (error) {
    if (isSandboxUnavailable(error)) throw error;
  }
}
