import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { SandboxClient } from "../sandbox/contract.js";
import {
  MAX_JOB_INPUT_BYTES,
  MAX_JOB_QUEUED_INPUT_BYTES,
  type SandboxJobs,
  sandboxJobsOf,
} from "../sandbox/jobs.js";
import { makeTempDir } from "./temp-dir.js";

/** Makes a client with jobs over a fresh workspace folder, and ends it (its session) after a test. */
export interface JobsContractSetup {
  makeClient(
    root: string,
    limits: { maxJobs: number; maxJobOutputBytes: number },
  ): Promise<SandboxClient>;
  /** End the client's session: every job of it must be gone afterwards. */
  close(client: SandboxClient): Promise<void>;
  /**
   * Why the client offers no pseudo-terminal (`pty: true`), when it offers none: the terminal
   * case is then skipped, saying so.
   */
  noPtyReason?: string;
}

/** Lists the command line of every process the sandbox shows, without needing `ps`. */
const PROCESSES = "for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline 2>/dev/null; echo; done";

/** A part of job input small enough for any client's request bound (the HTTP suite's 64 KiB). */
const INPUT_PART = "x".repeat(32 * 1024);

/** The limits the suite's clients are made with, which it checks. */
const LIMITS = { maxJobs: 3, maxJobOutputBytes: 64 * 1024 };

/**
 * The contract of background jobs (`client.jobs`), run against every client that offers them: a
 * server started as a job is reached from a foreground command on loopback while the outside
 * network stays closed; a program reading its stdin is answered; a job's output is read by cursor,
 * waited for, bounded; the limits hold; kill ends a job and all it started. Needs `node` on the
 * sandbox's `PATH`.
 */
export function describeSandboxJobsContract(name: string, setup: JobsContractSetup): void {
  describe(`SandboxJobs contract: ${name}`, () => {
    let client: SandboxClient;
    let jobs: SandboxJobs;
    const cleanups: Array<() => Promise<void>> = [];

    beforeEach(async () => {
      const workspace = await makeTempDir("pleach-jobs-");
      cleanups.push(workspace.cleanup);
      client = await setup.makeClient(workspace.dir, LIMITS);
      cleanups.unshift(() => setup.close(client));
      const offered = sandboxJobsOf(client);
      if (offered === undefined) throw new Error(`${name}: the client offers no jobs`);
      jobs = offered;
    });
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0)) await cleanup();
    });

    it("runs a server in the background that a foreground command reaches on loopback, with the outside network closed", async () => {
      await client.writeFile(
        "server.js",
        [
          'const http = require("node:http");',
          'const server = http.createServer((_request, response) => response.end("pong"));',
          'server.listen(0, "127.0.0.1", () => console.log("listening on " + server.address().port));',
        ].join("\n"),
      );
      const started = await jobs.start("node server.js");
      expect(started).toMatchObject({ state: "running", exitCode: null, pty: false });
      const ready = await jobs.output(started.jobId, {
        waitMs: 20_000,
        until: "listening on \\d+",
      });
      expect(ready.matched).toBe(true);
      const port = /listening on (\d+)/.exec(ready.output)?.[1];
      const probe = [
        `fetch("http://127.0.0.1:${port}/").then(async (r) => console.log("got", await r.text()))`,
        '.then(() => new Promise((ok) => require("node:net").connect(80, "1.1.1.1").on("error", (e) => { console.log("outside", e.code); ok(); }).on("connect", () => { console.log("outside reached"); ok(); })))',
      ].join("");
      const reached = await client.exec(`node -e '${probe}'`, { timeoutMs: 30_000 });
      expect(reached.stdout).toContain("got pong");
      expect(reached.stdout).toMatch(/outside E[A-Z]+/);
      expect(reached.stdout).not.toContain("outside reached");
      const killed = await jobs.kill(started.jobId);
      expect(killed).toMatchObject({ state: "killed", exitCode: null });
      const after = await client.exec(
        `node -e 'require("node:net").connect(${port}, "127.0.0.1").on("error", (e) => console.log(e.code)).on("connect", () => console.log("still up"))'`,
      );
      expect(after.stdout).toContain("ECONNREFUSED");
    });

    it("answers a program that reads its stdin, and reports its exit", async () => {
      const job = await jobs.start(
        'while read -r line; do [ "$line" = quit ] && exit 7; echo "got $line"; done',
      );
      await jobs.input(job.jobId, "one\n");
      const first = await jobs.output(job.jobId, { waitMs: 10_000, until: "got one" });
      expect(first).toMatchObject({ output: "got one\n", since: 0, next: 8, matched: true });
      await jobs.input(job.jobId, "two\nquit\n");
      let read = await jobs.output(job.jobId, {
        since: first.next,
        waitMs: 10_000,
        until: "got two",
      });
      expect(read.output).toBe("got two\n");
      for (let tries = 0; read.job.state === "running" && tries < 100; tries += 1) {
        read = await jobs.output(job.jobId, { since: read.next, waitMs: 200 });
      }
      expect(read.job).toMatchObject({ state: "exited", exitCode: 7 });
      await expect(jobs.input(job.jobId, "late\n")).rejects.toMatchObject({ code: "CONFLICT" });
      expect((await jobs.list()).map((each) => each.jobId)).toContain(job.jobId);
    });

    it("bounds job input per call and in what the job has not read, with TOO_LARGE, and takes more from a job that reads", async () => {
      const idle = await jobs.start("sleep 600");
      await expect(
        jobs.input(idle.jobId, "x".repeat(MAX_JOB_INPUT_BYTES + 1)),
      ).rejects.toMatchObject({
        code: "TOO_LARGE",
        message: expect.stringMatching(/send it in parts/),
      });
      // A job that never reads: what it was sent waits in the session, up to the bound.
      let accepted = 0;
      let refused: unknown;
      while (refused === undefined && accepted <= 2 * MAX_JOB_QUEUED_INPUT_BYTES) {
        try {
          await jobs.input(idle.jobId, INPUT_PART);
          accepted += INPUT_PART.length;
        } catch (error) {
          refused = error;
        }
      }
      expect(refused).toMatchObject({
        code: "TOO_LARGE",
        message: expect.stringMatching(/has not read .* write the input to a file/),
      });
      expect(accepted).toBeGreaterThanOrEqual(MAX_JOB_QUEUED_INPUT_BYTES - INPUT_PART.length);
      // The stdin pipe holds some (64 KiB on Linux, at most 1 MiB) beyond the bound.
      expect(accepted).toBeLessThanOrEqual(MAX_JOB_QUEUED_INPUT_BYTES + 1024 * 1024);
      // A job that reads takes more than the bound in all, sent in parts.
      const total = MAX_JOB_QUEUED_INPUT_BYTES + 8 * INPUT_PART.length;
      const reader = await jobs.start(`head -c ${total} | wc -c`);
      for (let sent = 0; sent < total; ) {
        try {
          await jobs.input(reader.jobId, INPUT_PART);
          sent += INPUT_PART.length;
        } catch (error) {
          if ((error as { code?: string }).code !== "TOO_LARGE") throw error;
          await jobs.output(reader.jobId, { waitMs: 50, since: Number.MAX_SAFE_INTEGER });
        }
      }
      const read = await jobs.output(reader.jobId, { waitMs: 10_000, until: String(total) });
      expect(read.output.trim()).toBe(String(total));
    });

    it.skipIf(setup.noPtyReason !== undefined)(
      `gives a program that needs a terminal a pseudo-terminal${setup.noPtyReason === undefined ? "" : ` (skipped: ${setup.noPtyReason})`}`,
      async () => {
        const job = await jobs.start(
          '[ -t 0 ] && [ -t 1 ] && echo "a tty"; read -r name; echo "hi $name"',
          {
            pty: true,
          },
        );
        await jobs.output(job.jobId, { waitMs: 10_000, until: "a tty" });
        await jobs.input(job.jobId, "ada\n");
        const read = await jobs.output(job.jobId, { waitMs: 10_000, until: "hi ada" });
        expect(read.matched).toBe(true);
        expect(read.job.pty).toBe(true);
      },
    );

    it("reads output by cursor, in bounded pieces, and says what the per-job bound dropped", async () => {
      const job = await jobs.start("head -c 200000 /dev/zero | tr '\\0' x; echo; echo end");
      let read = await jobs.output(job.jobId, { waitMs: 10_000, until: "end" });
      for (let tries = 0; read.job.state === "running" && tries < 100; tries += 1) {
        read = await jobs.output(job.jobId, { waitMs: 200, since: read.next });
      }
      expect(read.job.outputBytes).toBe(200_005);
      expect(read.job.droppedBytes).toBe(200_005 - LIMITS.maxJobOutputBytes);
      const page = await jobs.output(job.jobId, { since: 0, maxBytes: 1000 });
      expect(page.skippedBytes).toBe(200_005 - LIMITS.maxJobOutputBytes);
      expect(page.since).toBe(200_005 - LIMITS.maxJobOutputBytes);
      expect(page.next - page.since).toBe(1000);
      expect(page.output).toBe("x".repeat(1000));
      const rest = await jobs.output(job.jobId, { since: 200_000 });
      expect(rest.output).toBe("\nend\n");
      expect(rest.next).toBe(200_005);
    });

    it("refuses a job past the session's limit, and a bad until, and an unknown job", async () => {
      const running = [];
      for (let index = 0; index < LIMITS.maxJobs; index += 1) {
        running.push(await jobs.start("sleep 300"));
      }
      await expect(jobs.start("sleep 300")).rejects.toMatchObject({ code: "TOO_MANY_JOBS" });
      await jobs.kill((running[0] as { jobId: string }).jobId);
      const again = await jobs.start("echo again");
      await expect(jobs.output(again.jobId, { until: "(" })).rejects.toMatchObject({
        code: "INVALID_INPUT",
      });
      await expect(jobs.output("no-such-job")).rejects.toMatchObject({ code: "NOT_FOUND" });
      await expect(jobs.kill("no-such-job")).rejects.toMatchObject({ code: "NOT_FOUND" });
    });

    it("kills a job and everything it started, and nothing else", async () => {
      const job = await jobs.start("sleep 301 & (setsid sleep 302 &); echo started; wait");
      const other = await jobs.start("echo other; sleep 303");
      await jobs.output(job.jobId, { waitMs: 10_000, until: "started" });
      await jobs.output(other.jobId, { waitMs: 10_000, until: "other" });
      await jobs.kill(job.jobId);
      const seen = await client.exec(PROCESSES);
      expect(seen.stdout).not.toMatch(/sleep 30[12]/);
      expect(seen.stdout).toContain("sleep 303");
      expect((await jobs.list()).find((each) => each.jobId === other.jobId)?.state).toBe("running");
    });

    it("kills what a foreground command leaves behind, but not the jobs", async () => {
      const job = await jobs.start("echo up; sleep 304");
      await jobs.output(job.jobId, { waitMs: 10_000, until: "up" });
      await client.exec("(setsid sleep 305 &); sleep 306 & echo left");
      const seen = await client.exec(PROCESSES);
      expect(seen.stdout).not.toMatch(/sleep 30[56]/);
      expect(seen.stdout).toContain("sleep 304");
    });
  });
}
