import type { SandboxProvider, SandboxSession } from "@pleach/core/sandbox";
import { SANDBOX_SPECIFICATION_VERSION } from "@pleach/core/sandbox";

/**
 * `provider` as the agent gets it, keeping each session it hands out, and `endAll`, which releases
 * every one of them (each release ends every process of its session: its commands and background
 * jobs). The harness calls it before it applies the test patch, whether or not the agent's runtime
 * released its session itself, so that nothing the agent started runs on through grading.
 */
export function agentSessions(provider: SandboxProvider): {
  provider: SandboxProvider;
  endAll(): Promise<void>;
} {
  const sessions: SandboxSession[] = [];
  return {
    provider: {
      specificationVersion: SANDBOX_SPECIFICATION_VERSION,
      async acquire(options) {
        const session = await provider.acquire(options);
        sessions.push(session);
        return session;
      },
    },
    async endAll() {
      await Promise.all(sessions.splice(0).map((session) => session.release()));
    },
  };
}
