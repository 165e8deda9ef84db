import { describe, expect, it } from "vitest";
import type { SessionProcessEvents } from "../os/session-processes.js";
import { JobTable } from "./job-table.js";

/** A job table over a fake session sandbox: `print` is the job's output. */
async function oneJob(): Promise<{ table: JobTable; jobId: string; print(text: string): void }> {
  let events: SessionProcessEvents | undefined;
  const table = new JobTable(
    async (_command, _options, given) => {
      events = given;
      return { id: "1", input() {}, queuedInput: 0, endInput() {}, signal() {}, reap() {} };
    },
    { maxJobs: 1, maxOutputBytes: 1024 * 1024 },
  );
  const { jobId } = await table.start("a server");
  return { table, jobId, print: (text) => events?.onData("stdout", Buffer.from(text)) };
}

describe("JobTable", () => {
  it("refuses an until that backtracks without end, off the host's event loop, and matches on", async () => {
    const { table, jobId, print } = await oneJob();
    // 2^31 steps for a backtracking engine: the host would stop for many seconds.
    print(`${"a".repeat(31)}b\n`);
    await expect(table.output(jobId, { until: "^(a+)+$", waitMs: 60_000 })).rejects.toMatchObject({
      code: "INVALID_INPUT",
    });
    const waiting = table.output(jobId, { until: "listening on \\d+", waitMs: 60_000 });
    print("listening on 8080\n");
    expect(await waiting).toMatchObject({ matched: true });
    table.close();
  });
});
