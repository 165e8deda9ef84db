// The Docker adapter against the contract suite and its own promises (no network, limits set,
// confined in the requested mode, removed on release). Needs a running Docker engine; builds the
// image from local files when it is missing or stale (scripts/build-sandbox-image.sh). Skips,
// saying why, where no engine answers.
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { sandboxJobsOf } from "@pleach/core/sandbox";
import { describeSandboxClientContract } from "@pleach/core/testing";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import type { HttpSandboxSession } from "../http-provider.js";
import {
  fetchCommand,
  LISTENING,
  processesWith,
  serverJobCommand,
} from "../test-support/loopback-job.js";
import { createDockerSandboxProvider } from "./docker-provider.js";
import { dockerSkipReason, ensureSandboxImage, IMAGE } from "./test-support/docker-engine.js";

const skipReason = dockerSkipReason();

describe.skipIf(skipReason !== undefined)("Docker sandbox adapter", () => {
  const provider = createDockerSandboxProvider({
    image: IMAGE,
    cpus: 1,
    memoryBytes: 256 * 1024 * 1024,
    pids: 128,
  });
  const sessions: HttpSandboxSession[] = [];

  beforeAll(() => ensureSandboxImage(), 300_000);

  // Each case's container goes with it (the contract suite's own hooks remove its folders first).
  afterEach(async () => {
    await Promise.all(sessions.splice(0).map((session) => session.release()));
  });

  describeSandboxClientContract(
    "Docker (one container per sandbox, workspace bound from the host)",
    async (root) => {
      const session = await provider.acquire({ workspace: root });
      sessions.push(session);
      return session.client;
    },
    { exec: true, sharedFileSystem: true },
  );

  it("runs with no network, no capabilities, limits set, confined, and is removed on release", async () => {
    const session = await provider.acquire();
    const inspect = (format: string) =>
      spawnSync("docker", ["inspect", "--format", format, session.id], { encoding: "utf8" });
    const limits = inspect(
      "{{.HostConfig.NetworkMode}} {{.HostConfig.NanoCpus}} {{.HostConfig.Memory}} {{.HostConfig.PidsLimit}} {{.HostConfig.CapDrop}} {{json .HostConfig.CapAdd}} {{.HostConfig.AutoRemove}}",
    );
    expect(limits.stdout.trim()).toBe(`none 1000000000 ${256 * 1024 * 1024} 128 [ALL] null true`);
    const options = inspect("{{json .HostConfig.SecurityOpt}}");
    const security = JSON.parse(options.stdout) as string[];
    expect(security).toContain("no-new-privileges");
    // systempaths=unconfined: no masks over /proc, so that bubblewrap may mount a procfs.
    expect(inspect("{{json .HostConfig.MaskedPaths}}").stdout.trim()).toBe("[]");
    // A profile of ours, not `unconfined`.
    expect(security.find((option) => option.startsWith("seccomp="))).toMatch(/^seccomp=\{/);
    expect(inspect("{{json .Config.Env}}").stdout).not.toMatch(/TOKEN/);
    const interfaces = await session.client.exec("ls /sys/class/net");
    expect(interfaces.stdout.trim()).toBe("lo");
    const who = await session.client.exec('id -u; printf %s "$PLEACH_SANDBOX_TOKEN"');
    expect(who.stdout).toBe(`${process.getuid?.() === 0 ? 1000 : process.getuid?.()}\n`);
    // Commands run under bubblewrap inside: their own pid namespace (no server), a private /run.
    const processes = await session.client.exec("cat /proc/[0-9]*/cmdline | tr '\\0' ' '");
    expect(processes.stdout).toContain("cat");
    expect(processes.stdout).not.toContain("sandbox-serve");
    // A private /run, holding only the session's own kept outputs.
    expect((await session.client.exec("ls -A /run")).stdout).toBe("pleach-output\n");
    await session.client.writeFile("inside.txt", "only in the container");
    expect((await session.client.exec("cat inside.txt")).stdout).toBe("only in the container");
    await session.release();
    expect(inspect("{{.Name}}").status).not.toBe(0);
  }, 60_000);

  it("runs background jobs in the container's session: a job's server answers a foreground command on loopback", async () => {
    const session = await provider.acquire();
    sessions.push(session);
    const jobs = sandboxJobsOf(session.client);
    if (jobs === undefined) throw new Error("the container's sandbox offers no jobs");
    const marker = `pleach-docker-job-${randomBytes(6).toString("hex")}`;
    const started = await jobs.start(serverJobCommand(marker));
    const ready = await jobs.output(started.jobId, { until: LISTENING, waitMs: 30_000 });
    const port = new RegExp(LISTENING).exec(ready.output)?.[1] ?? "";
    expect((await session.client.exec(fetchCommand(port))).stdout).toBe("got hello from the job\n");
    expect((await session.client.exec("ls /sys/class/net")).stdout.trim()).toBe("lo");
    const terminal = await jobs.start("[ -t 0 ] && [ -t 1 ] && echo a tty", { pty: true });
    expect(await jobs.output(terminal.jobId, { until: "a tty", waitMs: 30_000 })).toMatchObject({
      matched: true,
    });
    expect(await jobs.kill(started.jobId)).toMatchObject({ state: "killed" });
    expect((await session.client.exec(fetchCommand(port))).stdout).toBe("closed ECONNREFUSED\n");
    const sleeper = await jobs.start(`bash -c "echo up; sleep 600; :" ${marker}`);
    // Its command line is the job's once it has printed (the job was launched before).
    await jobs.output(sleeper.jobId, { until: "up", waitMs: 30_000 });
    expect(processesWith(marker)).not.toEqual([]);
    await session.release();
    expect(processesWith(marker)).toEqual([]);
  }, 60_000);

  it("refuses every write in read-only mode, from commands and from the file route", async () => {
    const readOnly = createDockerSandboxProvider({ image: IMAGE, mode: "read-only" });
    const session = await readOnly.acquire();
    sessions.push(session);
    const result = await session.client.exec("touch made.txt && echo escaped");
    expect(result.stdout).toBe("");
    expect(result.exitCode).not.toBe(0);
    await expect(session.client.writeFile("made.txt", "x")).rejects.toMatchObject({
      code: "READ_ONLY",
    });
  }, 60_000);

  it("in danger-full-access, runs commands unconfined inside the container, deliberately", async () => {
    const unconfined = createDockerSandboxProvider({ image: IMAGE, mode: "danger-full-access" });
    const session = await unconfined.acquire();
    sessions.push(session);
    const options = spawnSync(
      "docker",
      ["inspect", "--format", "{{json .HostConfig.SecurityOpt}}", session.id],
      { encoding: "utf8" },
    );
    expect(JSON.parse(options.stdout)).toEqual(["no-new-privileges"]);
    const result = await session.client.exec("ls -A /run/pleach");
    // The server's socket, but no token: the server removed its file once read.
    expect(result.stdout).toBe("sandbox.sock\n");
  }, 60_000);

  it("stops a fork bomb at the pids limit", async () => {
    const session = await provider.acquire();
    sessions.push(session);
    const result = await session.client.exec(
      "for i in $(seq 1 400); do sleep 5 & done 2>/dev/null; echo started $(jobs -p | wc -l)",
      { timeoutMs: 20_000 },
    );
    expect(Number(result.stdout.replace(/\D+/g, ""))).toBeLessThan(128);
  }, 60_000);
});

if (skipReason !== undefined) {
  describe("Docker sandbox adapter", () => {
    it.skip(`skipped: ${skipReason}`, () => {});
  });
}

describe("Docker sandbox options", () => {
  it("refuses a domain list, which its container could not be held to", () => {
    expect(() =>
      createDockerSandboxProvider({ network: { allowDomains: ["example.com"] } }),
    ).toThrow(
      expect.objectContaining({
        code: "UNSUPPORTED",
        message: expect.stringContaining("not a domain list"),
      }),
    );
  });
});
