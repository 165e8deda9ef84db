import { ToolError } from "../errors.js";
import type { SandboxProvider, SandboxSession } from "../sandbox/contract.js";
import { type AISDKSandboxSession, toAISDKSandboxSession } from "./ai-sdk-sandbox.js";

/**
 * The `HarnessV1SandboxProvider` of `@ai-sdk/harness` (`specificationVersion:
 * "harness-sandbox-v1"`), written out here so that this module needs no harness package; the
 * harness checks a provider structurally, and the tests pass one to it as its own type.
 */
export interface AISDKHarnessSandboxProvider {
  readonly specificationVersion: "harness-sandbox-v1";
  readonly providerId: string;
  readonly createSession: (options?: {
    sessionId?: string;
    abortSignal?: AbortSignal;
    identity?: string;
    onFirstCreate?: (
      session: AISDKSandboxSession,
      options: { abortSignal?: AbortSignal },
    ) => Promise<void>;
  }) => PromiseLike<AISDKHarnessSandboxSession>;
}

/** A harness's network sandbox session: the AI SDK's sandbox session, ports and lifecycle. */
export interface AISDKHarnessSandboxSession extends AISDKSandboxSession {
  readonly id: string;
  readonly defaultWorkingDirectory: string;
  readonly ports: ReadonlyArray<number>;
  readonly getPortEndpoint: (options: {
    port: number;
    protocol?: "http" | "https" | "ws";
  }) => PromiseLike<{ readonly url: string }>;
  readonly getPortUrl: (options: {
    port: number;
    protocol?: "http" | "https" | "ws";
  }) => PromiseLike<string>;
  readonly stop: () => PromiseLike<void>;
  readonly destroy: () => PromiseLike<void>;
  readonly restricted: () => AISDKSandboxSession;
}

/** Options of {@link toAISDKHarnessSandboxProvider}. */
export interface ToAISDKHarnessSandboxProviderOptions {
  /**
   * The ports of the sessions' jobs that the host reaches on its loopback: those the provider's
   * sessions publish (`createLocalSandboxProvider({ session: { publish } })`).
   * @default none
   */
  ports?: readonly number[];
  /**
   * The sessions' working directory as the harness names it (absolute).
   * @default the client's `root` where it has one, else "/workspace"
   */
  defaultWorkingDirectory?: string;
  /** @default "pleach" */
  providerId?: string;
}

/**
 * Any pleach {@link SandboxProvider} as the sandbox provider of `@ai-sdk/harness`: each
 * `createSession()` acquires a session of the provider and gives its client as the AI SDK's
 * sandbox session (see `toAISDKSandboxSession`), with `stop` and `destroy` releasing it and the
 * ports named in `ports` at `127.0.0.1` of the host. `onFirstCreate` runs on every new session
 * (pleach keeps no snapshots); sessions are not resumed, so a harness asking to resume one is told
 * the capability is missing.
 */
export function toAISDKHarnessSandboxProvider(
  provider: SandboxProvider,
  {
    ports = [],
    defaultWorkingDirectory,
    providerId = "pleach",
  }: ToAISDKHarnessSandboxProviderOptions = {},
): AISDKHarnessSandboxProvider {
  return {
    specificationVersion: "harness-sandbox-v1",
    providerId,
    async createSession(options = {}) {
      const session: SandboxSession = await provider.acquire(
        options.abortSignal === undefined ? {} : { abortSignal: options.abortSignal },
      );
      const sandbox = toAISDKSandboxSession(session.client);
      let released: Promise<void> | undefined;
      const release = () => {
        released ??= session.release();
        return released;
      };
      const endpoint = (port: number, protocol: "http" | "https" | "ws" = "http") => {
        if (!ports.includes(port)) {
          throw new ToolError(
            "NOT_FOUND",
            `port ${port} is not published by this provider's sessions (published: ${ports.join(", ") || "none"}); publish it with the provider's session option and list it in ports`,
          );
        }
        return `${protocol}://127.0.0.1:${port}`;
      };
      const root = (session.client as { root?: unknown }).root;
      const harnessSession: AISDKHarnessSandboxSession = {
        ...sandbox,
        id: options.sessionId ?? session.id,
        defaultWorkingDirectory:
          defaultWorkingDirectory ?? (typeof root === "string" ? root : "/workspace"),
        ports: [...ports],
        getPortEndpoint: async ({ port, protocol }) => ({ url: endpoint(port, protocol) }),
        getPortUrl: async ({ port, protocol }) => endpoint(port, protocol),
        stop: release,
        destroy: release,
        restricted: () => sandbox,
      };
      try {
        await options.onFirstCreate?.(sandbox, {
          ...(options.abortSignal === undefined ? {} : { abortSignal: options.abortSignal }),
        });
      } catch (error) {
        await release();
        throw error;
      }
      return harnessSession;
    },
  };
}
