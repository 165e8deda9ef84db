import { execFileSync } from "node:child_process";
import { useTempDir } from "@pleach/core/testing";
import { createLocalSandbox, createLocalSandboxProvider } from "@pleach/sandbox";
import { describe, expect, it } from "vitest";
import { createCodingAgentRuntime } from "./agent-runtime.js";
import { createScriptedModel } from "./models/scripted.js";

// A run is a session: the background jobs its model starts end with it, however it ends.

const probe = await createLocalSandbox({ root: process.cwd(), session: true });
const jobs = probe.jobs !== undefined && probe.backend === "bubblewrap";
await probe.close();

/** Host processes named `marker` (`exec -a`), as the host's process table lists them. */
function hostProcesses(marker: string): string[] {
  const lines = execFileSync("/usr/bin/ps", ["-eo", "args="], { encoding: "utf8" }).split("\n");
  return lines.filter((line) => line.startsWith(marker));
}

describe.skipIf(!jobs)(
  `a run's background jobs${jobs ? "" : " (skipped: no session sandbox here; needs bubblewrap and /usr/bin/perl)"}`,
  () => {
    for (const ending of ["a final answer", "an abort"] as const) {
      it(`end with the run, on ${ending}`, async () => {
        const root = await useTempDir();
        const marker = `pleach-run-${ending === "an abort" ? "abort" : "end"}-${process.pid}-${Date.now()}`;
        const stop = new AbortController();
        let seenWhileRunning: string[] = [];
        const model = createScriptedModel({
          steps: [
            {
              toolCalls: [
                {
                  name: "bash",
                  input: { command: `echo up; exec -a ${marker} sleep 300`, background: true },
                },
              ],
            },
            () => {
              seenWhileRunning = hostProcesses(marker);
              if (ending === "an abort") {
                stop.abort();
                return { toolCalls: [{ name: "job_list", input: {} }] };
              }
              return { text: "Started it." };
            },
          ],
        });
        const runtime = createCodingAgentRuntime({
          sandboxProvider: createLocalSandboxProvider({ root }),
          model,
        });
        const run = runtime.run({ task: "Start a server", abortSignal: stop.signal });
        for await (const _event of run) {
          // Drain the events.
        }
        const result = await run.result.catch((error: unknown) => error);
        expect(seenWhileRunning).toHaveLength(1);
        if (ending === "an abort") expect(result).toMatchObject({ stopReason: "aborted" });
        else expect(result).toMatchObject({ stopReason: "final-answer" });
        expect(hostProcesses(marker)).toEqual([]);
      });
    }
  },
);
