import {
  SANDBOX_SPECIFICATION_VERSION,
  type SandboxProvider,
  type SandboxSession,
} from "@pleach/core/sandbox";
import {
  createE2BSandboxClient,
  type E2BSandboxClient,
  type E2BSandboxClientOptions,
} from "./e2b-client.js";
import { toolErrorOfE2B } from "./e2b-errors.js";

/** Options of {@link createE2BSandboxProvider}. */
export interface E2BSandboxProviderOptions extends E2BSandboxClientOptions {
  /**
   * The E2B template each sandbox starts from (on `pleach sandbox serve --protocol e2b`, a name
   * the server maps to a pleach template).
   * @default "base"
   */
  template?: string;
  /** The API key (`E2B_API_KEY` when absent; the server's token for pleach's E2B face). */
  apiKey?: string;
  /** The E2B API (`E2B_API_URL` when absent; E2B's cloud by default). */
  apiUrl?: string;
  /** Where every sandbox's envd is reached (`E2B_SANDBOX_URL`); one URL for all, with `E2b-Sandbox-Id`. */
  sandboxUrl?: string;
  /**
   * How long a sandbox lives without `release()`, in milliseconds (E2B's sandbox timeout).
   * @default 300_000
   */
  timeoutMs?: number;
  /** Metadata given to each sandbox (shown by `Sandbox.list`). */
  metadata?: Record<string, string>;
  /** Environment variables of every command of each sandbox. */
  envs?: Record<string, string>;
}

/** A session of {@link createE2BSandboxProvider}: an E2B sandbox and its client. */
export interface E2BSandboxSession extends SandboxSession {
  readonly client: E2BSandboxClient;
}

/** A provider of E2B sandboxes, whose sessions' clients offer jobs. */
export interface E2BSandboxProvider extends SandboxProvider {
  acquire(options?: { abortSignal?: AbortSignal }): Promise<E2BSandboxSession>;
}

/**
 * A provider whose sessions are E2B sandboxes (`Sandbox.create` of the `e2b` SDK, an optional
 * peer dependency loaded on the first `acquire`): on E2B's cloud, a self-hosted E2B, OpenKruise
 * Agents' E2B-compatible manager, or `pleach sandbox serve --protocol e2b`. `release()` kills the
 * sandbox. A pool (`createPooledSandboxProvider`) keeps some warm.
 */
export function createE2BSandboxProvider({
  template = "base",
  apiKey,
  apiUrl,
  sandboxUrl,
  timeoutMs = 300_000,
  metadata,
  envs,
  ...clientOptions
}: E2BSandboxProviderOptions = {}): E2BSandboxProvider {
  return {
    specificationVersion: SANDBOX_SPECIFICATION_VERSION,
    async acquire({ abortSignal } = {}) {
      const { Sandbox } = await import("e2b").catch((error: unknown) => {
        throw toolErrorOfE2B(
          new Error(
            `the e2b package is not installed (npm install e2b): ${(error as Error).message}`,
          ),
          "acquire",
        );
      });
      const sandbox = await Sandbox.create(template, {
        timeoutMs,
        ...(apiKey === undefined ? {} : { apiKey }),
        ...(apiUrl === undefined ? {} : { apiUrl }),
        ...(sandboxUrl === undefined ? {} : { sandboxUrl }),
        ...(metadata === undefined ? {} : { metadata }),
        ...(envs === undefined ? {} : { envs }),
        ...(abortSignal === undefined ? {} : { signal: abortSignal }),
      }).catch((error: unknown) => {
        throw toolErrorOfE2B(error, `creating an E2B sandbox from template ${template}`);
      });
      const client = await createE2BSandboxClient(sandbox, clientOptions).catch(
        async (error: unknown) => {
          await sandbox.kill().catch(() => false);
          throw error;
        },
      );
      let released: Promise<void> | undefined;
      return {
        id: sandbox.sandboxId,
        client,
        release() {
          released ??= (async () => {
            client.close();
            await sandbox.kill().catch((error: unknown) => {
              throw toolErrorOfE2B(error, "releasing the E2B sandbox");
            });
          })();
          return released;
        },
      };
    },
  };
}
