import { describe, expect, it } from "vitest";
import { createE2BSandboxProvider } from "./e2b-provider.js";

// pleach's client over a real E2B endpoint (E2B's cloud, a self-hosted E2B, OpenKruise Agents'
// sandbox manager), run only when one is named: E2B_API_URL and E2B_API_KEY (E2B_SANDBOX_URL and
// E2B_TEMPLATE when the endpoint needs them). The SDK reads the variables itself.

const apiUrl = process.env.E2B_API_URL;
const apiKey = process.env.E2B_API_KEY;
const skipReason =
  apiUrl === undefined || apiKey === undefined
    ? "set E2B_API_URL and E2B_API_KEY to run against a real E2B endpoint"
    : undefined;

describe.skipIf(skipReason !== undefined)(
  `pleach's E2B client on a real endpoint${skipReason === undefined ? "" : ` (skipped: ${skipReason})`}`,
  () => {
    it("runs commands, writes and reads files, and releases the sandbox", async () => {
      const provider = createE2BSandboxProvider({
        template: process.env.E2B_TEMPLATE ?? "base",
        timeoutMs: 120_000,
        metadata: { by: "pleach-e2b-live-test" },
      });
      const session = await provider.acquire();
      try {
        const { client } = session;
        expect(await client.exec("echo out; echo err >&2; exit 4")).toMatchObject({
          exitCode: 4,
          stdout: "out\n",
          stderr: "err\n",
          timedOut: false,
        });
        await client.writeFile("pleach/note.txt", "héllo\n");
        expect(await client.readFile("pleach/note.txt")).toBe("héllo\n");
        expect((await client.exec("cat pleach/note.txt")).stdout).toBe("héllo\n");
        await expect(client.readFile("../../etc/passwd")).rejects.toMatchObject({
          code: "PATH_ESCAPE",
        });
        const slow = await client.exec("sleep 30", { timeoutMs: 500 });
        expect(slow).toMatchObject({ timedOut: true, exitCode: null });
        const job = await client.jobs.start("read line; echo got:$line");
        await client.jobs.input(job.jobId, "hi\n");
        const read = await client.jobs.output(job.jobId, { waitMs: 20_000, until: "got:hi" });
        expect(read.matched).toBe(true);
      } finally {
        await session.release();
      }
    }, 180_000);
  },
);
