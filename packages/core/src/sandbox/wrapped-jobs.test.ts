import { describe, expect, it } from "vitest";
import { createSandboxComposite } from "./composite.js";
import { SANDBOX_SPECIFICATION_VERSION } from "./contract.js";
import type { JobInfo, SandboxJobs, SandboxProvider } from "./index.js";
import { sandboxJobsOf, sandboxUnavailableError } from "./index.js";
import { createPooledSandboxProvider } from "./pool.js";

// A pool's and a composite's clients offer the jobs of the client they wrap, and only then.

const info: JobInfo = {
  jobId: "1",
  command: "sleep 1",
  state: "running",
  exitCode: null,
  startedAt: 0,
  outputBytes: 0,
  droppedBytes: 0,
  pty: false,
};

function provider(withJobs: boolean, failing = false): SandboxProvider & { calls: string[] } {
  const calls: string[] = [];
  const jobs: SandboxJobs = {
    async start(command) {
      calls.push(`start ${command}`);
      if (failing)
        throw sandboxUnavailableError({ message: "down", details: { reason: "unreachable" } });
      return info;
    },
    async output(jobId) {
      calls.push(`output ${jobId}`);
      return { output: "x", since: 0, next: 1, skippedBytes: 0, job: info };
    },
    async input(jobId, text) {
      calls.push(`input ${jobId} ${text}`);
    },
    async kill(jobId) {
      calls.push(`kill ${jobId}`);
      return { ...info, state: "killed" };
    },
    async list() {
      calls.push("list");
      return [info];
    },
  };
  return {
    specificationVersion: SANDBOX_SPECIFICATION_VERSION,
    calls,
    async acquire() {
      const refuse = async (): Promise<never> => {
        throw new Error("not used");
      };
      return {
        id: "s",
        client: {
          exec: refuse,
          readFile: refuse,
          writeFile: refuse,
          ...(withJobs ? { jobs } : {}),
        },
        async release() {},
      };
    },
  };
}

describe("jobs through a pool and a composite", () => {
  it("passes every job call to the wrapped client", async () => {
    for (const wrap of [
      (adapter: SandboxProvider) =>
        createPooledSandboxProvider({ adapter, healthCheck: async () => {} }),
      (adapter: SandboxProvider) =>
        createSandboxComposite({ members: [{ name: "one", provider: adapter }] }),
    ]) {
      const inner = provider(true);
      const session = await wrap(inner).acquire();
      const jobs = sandboxJobsOf(session.client);
      expect(jobs).toBeDefined();
      await jobs?.start("sleep 1");
      await jobs?.output("1");
      await jobs?.input("1", "hi");
      await jobs?.kill("1");
      await jobs?.list();
      expect(inner.calls).toEqual(["start sleep 1", "output 1", "input 1 hi", "kill 1", "list"]);
      await session.release();
    }
  });

  it("offers none over a client without jobs", async () => {
    const pooled = await createPooledSandboxProvider({
      adapter: provider(false),
      healthCheck: async () => {},
    }).acquire();
    const composed = await createSandboxComposite({
      members: [{ name: "one", provider: provider(false) }],
    }).acquire();
    expect(sandboxJobsOf(pooled.client)).toBeUndefined();
    expect(sandboxJobsOf(composed.client)).toBeUndefined();
  });

  it("notes an unreachable sandbox on a job call as on exec", async () => {
    const composite = createSandboxComposite({
      members: [{ name: "one", provider: provider(true, true) }],
    });
    const session = await composite.acquire();
    await expect(sandboxJobsOf(session.client)?.start("x")).rejects.toMatchObject({
      code: "INTERNAL",
    });
    expect(composite.health()[0]?.healthy).toBe(false);
  });
});
