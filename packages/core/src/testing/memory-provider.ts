import { ToolError } from "../errors.js";
import type { SandboxClient, SandboxProvider, SandboxSession } from "../sandbox/contract.js";
import { SANDBOX_SPECIFICATION_VERSION } from "../sandbox/contract.js";
import { sandboxUnavailableError } from "../sandbox/unavailable.js";

/** A sandbox provider held in memory, whose failures a test switches on and off. */
export interface MemoryProvider extends SandboxProvider {
  /** Sandboxes alive (acquired and not released). */
  readonly alive: Set<string>;
  /** Sandboxes ever made. */
  created: number;
  /** While true, every call and acquire fails as unreachable. */
  down: boolean;
  /** The next `n` readFile/writeFile calls fail as unreachable. */
  flakyCalls: number;
  /** How long `acquire` takes. */
  acquireDelayMs: number;
  /** Sandboxes marked broken: their calls fail as unreachable. */
  broken: Set<string>;
  /** Calls of exec, counted. */
  execs: number;
}

/** A {@link MemoryProvider}: each sandbox is a map of files; `exec` echoes the command. */
export function createMemoryProvider(name = "memory"): MemoryProvider {
  let next = 0;
  const unreachable = (what: string) =>
    sandboxUnavailableError({
      message: `${name} is down (${what})`,
      details: { reason: "unreachable" },
    });
  const provider: MemoryProvider = {
    specificationVersion: SANDBOX_SPECIFICATION_VERSION,
    alive: new Set(),
    created: 0,
    down: false,
    flakyCalls: 0,
    acquireDelayMs: 0,
    broken: new Set(),
    execs: 0,
    async acquire({ abortSignal } = {}) {
      if (provider.acquireDelayMs > 0) {
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(resolve, provider.acquireDelayMs);
          abortSignal?.addEventListener("abort", () => {
            clearTimeout(timer);
            reject(new ToolError("ABORTED", "aborted"));
          });
        });
      }
      if (provider.down) throw unreachable("acquire");
      next += 1;
      provider.created += 1;
      const id = `${name}-${next}`;
      provider.alive.add(id);
      const files = new Map<string, string>();
      const check = (what: string) => {
        if (provider.down || provider.broken.has(id)) throw unreachable(what);
        if (!provider.alive.has(id)) {
          throw sandboxUnavailableError({ message: `${id} is gone`, details: { reason: "gone" } });
        }
      };
      const flaky = (what: string) => {
        if (provider.flakyCalls > 0) {
          provider.flakyCalls -= 1;
          throw unreachable(what);
        }
      };
      const client: SandboxClient = {
        async readFile(path) {
          check("readFile");
          flaky("readFile");
          const content = files.get(path);
          if (content === undefined) throw new ToolError("NOT_FOUND", `no ${path}`);
          return content;
        },
        async writeFile(path, content) {
          check("writeFile");
          flaky("writeFile");
          files.set(path, content);
        },
        async exec(command) {
          check("exec");
          provider.execs += 1;
          if (provider.flakyCalls > 0) {
            provider.flakyCalls -= 1;
            throw unreachable("exec");
          }
          return {
            exitCode: 0,
            stdout: command,
            stderr: "",
            durationMs: 0,
            timedOut: false,
            truncated: false,
          };
        },
      };
      const session: SandboxSession = {
        id,
        client,
        async release() {
          if (provider.down) throw unreachable("release");
          provider.alive.delete(id);
        },
      };
      return session;
    },
  };
  return provider;
}
