import { isToolError, ToolError } from "../errors.js";
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
import { isSandboxUnavailable, sandboxUnavailableError } from "./unavailable.js";

/** One provider of a composite. */
export interface SandboxCompositeMember {
  /** A name for errors and `health()`, such as `"local"` or `"fleet-eu-1"`. */
  name: string;
  provider: SandboxProvider;
  /**
   * Members of higher priority are used first; lower ones only while those are unhealthy.
   * Members of equal priority share the sessions (the one with the fewest in use goes first).
   * @default 0
   */
  priority?: number;
}

/** Options of {@link createSandboxComposite}. */
export interface SandboxCompositeOptions {
  members: readonly SandboxCompositeMember[];
  /**
   * How long a member that failed is passed over before it is tried again.
   * @default 5_000
   */
  cooldownMs?: number;
}

/** How a member of a composite is doing. */
export interface SandboxCompositeMemberHealth {
  name: string;
  priority: number;
  healthy: boolean;
  /** Sessions of this member in use. */
  sessions: number;
  /** Failures in a row (of acquire, or of a session's call that found the sandbox unreachable). */
  failures: number;
  lastError: string | undefined;
}

/** A session of a composite, which says which member it came from. */
export interface SandboxCompositeSession extends SandboxSession {
  readonly member: string;
}

/** Several providers behind one. */
export interface SandboxComposite extends SandboxProvider {
  acquire(options?: { abortSignal?: AbortSignal }): Promise<SandboxCompositeSession>;
  health(): SandboxCompositeMemberHealth[];
}

interface MemberState {
  name: string;
  priority: number;
  provider: SandboxProvider;
  sessions: number;
  failures: number;
  downUntil: number;
  lastError: string | undefined;
}

/**
 * Put several providers behind one: local sandboxes for development and a fleet of sandbox servers
 * for scale, say. `acquire()` goes to the healthy member of highest priority with the fewest
 * sessions in use; a member whose acquire fails, or one of whose sessions finds its sandbox
 * unreachable, is passed over for `cooldownMs` and the next one is tried. When every member is down
 * they are all tried anyway, best first. Calls of a session are never moved to another member:
 * the workspace lives on one.
 */
export function createSandboxComposite({
  members,
  cooldownMs = 5_000,
}: SandboxCompositeOptions): SandboxComposite {
  if (members.length === 0) {
    throw new ToolError("INVALID_INPUT", "a sandbox composite needs at least one member");
  }
  for (const { name, provider } of members) checkSandboxProvider(provider, `member ${name}`);
  const states: MemberState[] = members.map(({ name, provider, priority = 0 }) => ({
    name,
    priority,
    provider,
    sessions: 0,
    failures: 0,
    downUntil: 0,
    lastError: undefined,
  }));
  let turn = 0;

  const markDown = (state: MemberState, error: unknown) => {
    state.failures += 1;
    state.downUntil = Date.now() + cooldownMs;
    state.lastError = error instanceof Error ? error.message : String(error);
  };

  const order = (): MemberState[] => {
    const now = Date.now();
    turn += 1;
    const rank = (state: MemberState) => (state.downUntil > now ? 1 : 0);
    // Ties in load are broken by a rotating offset, so that equal members take turns.
    return states
      .map((state, index) => ({ state, spin: (index + turn) % states.length }))
      .sort(
        (a, b) =>
          rank(a.state) - rank(b.state) ||
          b.state.priority - a.state.priority ||
          a.state.sessions - b.state.sessions ||
          a.spin - b.spin,
      )
      .map(({ state }) => state);
  };

  const wrap = (state: MemberState, session: SandboxSession): SandboxCompositeSession => {
    state.sessions += 1;
    let released: Promise<void> | undefined;
    const watch = <Result>(promise: Promise<Result>): Promise<Result> =>
      promise.catch((error: unknown) => {
        if (isSandboxUnavailable(error) && error.details?.reason !== "gone") markDown(state, error);
        throw error;
      });
    const { client } = session;
    const watched: SandboxClient = {
      readFile: (path: string, options?: FileEncodingOptions) =>
        watch(client.readFile(path, options)),
      writeFile: (path: string, content: string, options?: FileEncodingOptions) =>
        watch(client.writeFile(path, content, options)),
      exec: (command: string, options?: ExecOptions): Promise<ExecResult> =>
        watch(client.exec(command, options)),
    };
    const jobs = sandboxJobsOf(client);
    if (jobs !== undefined)
      Object.assign(watched, { jobs: wrapJobs(jobs, (call) => watch(call())) });
    return {
      id: session.id,
      member: state.name,
      client: watched,
      release() {
        released ??= (async () => {
          state.sessions -= 1;
          await session.release();
        })();
        return released;
      },
    };
  };

  return {
    specificationVersion: SANDBOX_SPECIFICATION_VERSION,
    async acquire({ abortSignal } = {}) {
      const failures: string[] = [];
      let lastError: unknown;
      for (const state of order()) {
        if (abortSignal?.aborted) throw new ToolError("ABORTED", "acquire was aborted");
        try {
          const session = await state.provider.acquire(
            abortSignal === undefined ? {} : { abortSignal },
          );
          state.failures = 0;
          state.downUntil = 0;
          return wrap(state, session);
        } catch (error) {
          if (isToolError(error) && error.code === "ABORTED") throw error;
          markDown(state, error);
          lastError = error;
          failures.push(`${state.name}: ${state.lastError}`);
        }
      }
      throw sandboxUnavailableError({
        message: `no member of the sandbox composite could give a sandbox (${failures.join("; ")}); check that the sandbox servers are up`,
        cause: lastError,
        details: { members: failures },
      });
    },
    health() {
      const now = Date.now();
      return states.map((state) => ({
        name: state.name,
        priority: state.priority,
        healthy: state.downUntil <= now,
        sessions: state.sessions,
        failures: state.failures,
        lastError: state.lastError,
      }));
    },
  };
}
