// The scale test: three sandbox servers, each in its own network namespace with its own address
// (a veth pair per namespace), behind a composite of pools; 64 concurrent sessions making 50
// mixed tool calls each, checked call by call; then one server killed mid-run. Needs root and
// `ip netns` (iproute2); skips, saying why, where either is missing.
import { type ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import path from "node:path";
import {
  createPooledSandboxProvider,
  createSandboxComposite,
  isSandboxUnavailable,
  type SandboxCompositeSession,
} from "@pleach/coding-agent/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createHttpStreamSandboxProvider,
  type HttpStreamSandboxProvider,
} from "../http-provider.js";

const repo = path.resolve(import.meta.dirname, "../../../..");
const SERVERS = 3;
const SESSIONS = 64;
const CALLS = 50;
const TOKEN = randomBytes(24).toString("hex");
const tag = `${process.pid % 100_000}`;

function whySkip(): string | undefined {
  if (process.platform !== "linux") return "network namespaces are Linux only";
  if (process.getuid?.() !== 0) return "creating network namespaces needs root";
  const probe = `pleach-probe-${tag}`;
  const added = spawnSync("ip", ["netns", "add", probe], { encoding: "utf8" });
  if (added.error !== undefined) return `ip (iproute2) is not installed: ${added.error.message}`;
  if (added.status !== 0) return `ip netns add fails here: ${added.stderr.trim()}`;
  spawnSync("ip", ["netns", "del", probe]);
  return undefined;
}

const skipReason = whySkip();

/**
 * Remove the namespaces (and so their veth pairs) of earlier runs whose process is gone, such as
 * a run killed before its cleanup: their addresses are the ones this run uses.
 */
function removeStaleNamespaces(): void {
  const listed = spawnSync("ip", ["netns", "list"], { encoding: "utf8" }).stdout ?? "";
  for (const name of listed.split("\n").map((line) => line.split(" ")[0] ?? "")) {
    const owner = /^pleach-fleet-(\d+)-\d+$/.exec(name)?.[1];
    if (owner === undefined || owner === tag || existsSync(`/proc/${owner}`)) continue;
    spawnSync("ip", ["netns", "del", name]);
  }
}

function ip(...args: string[]): void {
  execFileSync("ip", args, { stdio: ["ignore", "ignore", "pipe"] });
}

interface Member {
  name: string;
  namespace: string;
  /** The namespace's end of its veth pair. */
  inside: string;
  address: string;
  process: ChildProcess;
  url: string;
  http: HttpStreamSandboxProvider;
}

/** Percentile of sorted numbers. */
const percentile = (sorted: number[], fraction: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))] ?? Number.NaN;

describe.skipIf(skipReason !== undefined)("sandbox fleet over network namespaces", () => {
  const members: Member[] = [];

  beforeAll(async () => {
    removeStaleNamespaces();
    if (!existsSync(path.join(repo, "packages/sandbox/dist/index.js"))) {
      execFileSync("npx", ["tsc", "-b"], { cwd: repo, stdio: "inherit" });
    }
    for (let index = 0; index < SERVERS; index += 1) {
      const namespace = `pleach-fleet-${tag}-${index}`;
      const hostSide = `pf${tag}h${index}`.slice(0, 15);
      const inside = `pf${tag}n${index}`.slice(0, 15);
      // A /30 of a private range per namespace, reached over its own veth pair only.
      const [hostAddress, address] = [`10.231.${index}.1`, `10.231.${index}.2`];
      ip("netns", "add", namespace);
      ip("link", "add", hostSide, "type", "veth", "peer", "name", inside);
      ip("link", "set", inside, "netns", namespace);
      ip("addr", "add", `${hostAddress}/30`, "dev", hostSide);
      ip("link", "set", hostSide, "up");
      ip("-n", namespace, "addr", "add", `${address}/30`, "dev", inside);
      ip("-n", namespace, "link", "set", inside, "up");
      ip("-n", namespace, "link", "set", "lo", "up");
      const child = spawn(
        "ip",
        [
          "netns",
          "exec",
          namespace,
          process.execPath,
          path.join(repo, "scripts/sandbox-serve.mjs"),
          "--root",
          `/tmp/pleach-fleet-${tag}-${index}`,
          "--host",
          address,
          "--port",
          "8700",
          "--max-sandboxes",
          "128",
        ],
        {
          env: { ...process.env, PLEACH_SANDBOX_TOKEN: TOKEN },
          stdio: ["ignore", "pipe", "inherit"],
        },
      );
      const url = await new Promise<string>((resolve, reject) => {
        child.once("error", reject);
        child.once("exit", (code) => reject(new Error(`server ${index} exited with ${code}`)));
        child.stdout?.setEncoding("utf8").once("data", (text: string) => resolve(text.trim()));
      });
      const http = createHttpStreamSandboxProvider({
        baseURL: url,
        auth: () => ({ headers: { Authorization: `Bearer ${TOKEN}` } }),
        requestTimeoutMs: 10_000,
        streamIdleTimeoutMs: 10_000,
      });
      members.push({
        name: `server-${index}`,
        namespace,
        inside,
        address,
        process: child,
        url,
        http,
      });
    }
  }, 120_000);

  afterAll(async () => {
    for (const member of members) {
      member.http.close();
      member.process.kill("SIGTERM");
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
    for (const member of members) {
      member.process.kill("SIGKILL");
      spawnSync("ip", ["netns", "del", member.namespace]);
    }
  });

  const fleet = (cooldownMs = 5_000) =>
    createSandboxComposite({
      members: members.map((member) => ({
        name: member.name,
        provider: createPooledSandboxProvider({ adapter: member.http, max: 128 }),
      })),
      cooldownMs,
    });

  /** One session's 50 mixed calls, each checked; resolves to the wrong results found. */
  async function workload(
    session: SandboxCompositeSession,
    seed: number,
    {
      calls = CALLS,
      latencies,
      written = new Map(),
    }: {
      calls?: number;
      latencies: Record<string, number[]>;
      /** What the session wrote so far, by file name. */
      written?: Map<string, string>;
    },
  ): Promise<string[]> {
    const wrong: string[] = [];
    const time = async <Result>(kind: string, call: () => Promise<Result>): Promise<Result> => {
      const started = performance.now();
      try {
        return await call();
      } finally {
        const list = latencies[kind] ?? [];
        latencies[kind] = list;
        list.push(performance.now() - started);
      }
    };
    for (let step = 0; step < calls; step += 1) {
      const kind = (seed + step) % 10;
      const name = `f${step % 7}.txt`;
      if (kind < 4) {
        const content = `session ${seed} step ${step} ${randomBytes(8).toString("hex")}\n`;
        await time("write", () => session.client.writeFile(`dir/${name}`, content));
        written.set(name, content);
      } else if (kind < 8) {
        const expected = written.get(name);
        if (expected === undefined) {
          await time("read", () =>
            session.client.readFile(`dir/${name}`).then(
              () => wrong.push(`read of unwritten ${name} succeeded`),
              (error: { code?: string }) => {
                if (error.code !== "NOT_FOUND") throw error;
              },
            ),
          );
        } else {
          const content = await time("read", () => session.client.readFile(`dir/${name}`));
          if (content !== expected) wrong.push(`read ${name}: ${content} != ${expected}`);
        }
      } else {
        const a = seed * 1000 + step;
        const result = await time("exec", () =>
          session.client.exec(`echo $((${a} + 1)); ls dir 2>/dev/null | wc -l >&2`),
        );
        if (result.exitCode !== 0 || result.stdout !== `${a + 1}\n`) {
          wrong.push(`exec ${a}: ${JSON.stringify(result)}`);
        }
        if (Number(result.stderr.trim()) !== written.size) {
          wrong.push(`exec ${a} saw ${result.stderr.trim()} files, expected ${written.size}`);
        }
      }
    }
    return wrong;
  }

  it(`runs ${SESSIONS} concurrent sessions of ${CALLS} mixed calls over ${SERVERS} servers: 0 lost or wrong`, async () => {
    const composite = fleet();
    const latencies: Record<string, number[]> = {};
    const started = performance.now();
    const outcomes = await Promise.allSettled(
      Array.from({ length: SESSIONS }, async (_, seed) => {
        const session = await composite.acquire();
        try {
          return { member: session.member, wrong: await workload(session, seed, { latencies }) };
        } finally {
          await session.release();
        }
      }),
    );
    const elapsed = performance.now() - started;
    const failed = outcomes.filter((outcome) => outcome.status === "rejected");
    expect(failed.map((outcome) => String((outcome as PromiseRejectedResult).reason))).toEqual([]);
    const done = outcomes.map(
      (outcome) => (outcome as PromiseFulfilledResult<{ member: string; wrong: string[] }>).value,
    );
    expect(done.flatMap((outcome) => outcome.wrong)).toEqual([]);
    const perMember = Object.fromEntries(
      members.map((member) => [
        member.name,
        done.filter((outcome) => outcome.member === member.name).length,
      ]),
    );
    for (const count of Object.values(perMember))
      expect(count).toBeGreaterThanOrEqual(SESSIONS / SERVERS - 2);
    const total = Object.values(latencies).reduce((sum, list) => sum + list.length, 0);
    expect(total).toBe(SESSIONS * CALLS);
    const summary = Object.entries(latencies).map(([kind, list]) => {
      list.sort((a, b) => a - b);
      return `${kind} n=${list.length} p50=${percentile(list, 0.5).toFixed(1)}ms p99=${percentile(list, 0.99).toFixed(1)}ms`;
    });
    console.log(
      `[fleet] ${SESSIONS} sessions x ${CALLS} calls = ${total} calls in ${(elapsed / 1000).toFixed(1)} s (${(total / (elapsed / 1000)).toFixed(0)} calls/s), 0 wrong; sessions per server ${JSON.stringify(perMember)}; ${summary.join("; ")}`,
    );
  }, 300_000);

  it("kills one server mid-run: its calls fail promptly and clearly, new sessions land on the others", async () => {
    const composite = fleet(60_000);
    const latencies: Record<string, number[]> = {};
    const sessions = await Promise.all(Array.from({ length: SESSIONS }, () => composite.acquire()));
    const victim = members[SERVERS - 1] as Member;
    let killedAt = 0;
    const failures: Array<{
      member: string;
      afterKillMs: number;
      message: string;
      unavailable: boolean;
    }> = [];
    const WATCHDOG_MS = 20_000;
    const runs = sessions.map(async (session, seed) => {
      const written = new Map<string, string>();
      // Each session loops until it is told to stop; a call past the watchdog counts as a hang.
      for (
        let round = 0;
        round < 1_000 && (killedAt === 0 || performance.now() - killedAt < 1_500);
        round += 1
      ) {
        let timer: NodeJS.Timeout | undefined;
        const watchdog = new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error("HUNG")), WATCHDOG_MS);
        });
        try {
          const wrong = await Promise.race([
            workload(session, seed + round, { calls: 5, latencies, written }),
            watchdog,
          ]);
          expect(wrong).toEqual([]);
        } catch (error) {
          failures.push({
            member: session.member,
            afterKillMs: killedAt === 0 ? -1 : performance.now() - killedAt,
            message: (error as Error).message,
            unavailable: isSandboxUnavailable(error),
          });
          return;
        } finally {
          clearTimeout(timer);
        }
      }
    });
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    // SIGKILL the server (the node process inside `ip netns exec`): no goodbye to anyone.
    spawnSync("pkill", ["-KILL", "-P", String(victim.process.pid)]);
    victim.process.kill("SIGKILL");
    killedAt = performance.now();
    await Promise.all(runs);
    const onVictim = sessions.filter((session) => session.member === victim.name).length;
    expect(onVictim).toBeGreaterThan(0);
    expect(failures.filter((failure) => failure.message === "HUNG")).toEqual([]);
    expect(failures.filter((failure) => failure.member !== victim.name)).toEqual([]);
    expect(failures.length).toBe(onVictim);
    expect(failures.every((failure) => failure.unavailable && failure.afterKillMs >= 0)).toBe(true);
    const slowest = Math.max(...failures.map((failure) => failure.afterKillMs));
    expect(slowest).toBeLessThan(2_000);
    expect(failures[0]?.message).toMatch(/sandbox server at http:\/\/10\.231\.2\.2/);
    await Promise.all(sessions.map((session) => session.release().catch(() => {})));

    const fresh = await Promise.all(Array.from({ length: 32 }, () => composite.acquire()));
    expect(fresh.filter((session) => session.member === victim.name)).toEqual([]);
    const wrong = await Promise.all(
      fresh.map((session, seed) => workload(session, seed, { calls: 10, latencies })),
    );
    expect(wrong.flat()).toEqual([]);
    await Promise.all(fresh.map((session) => session.release()));
    const health = composite.health().find((member) => member.name === victim.name);
    expect(health?.healthy).toBe(false);
    console.log(
      `[fleet] killed ${victim.name} with ${onVictim} sessions on it: ${failures.length} failed, the slowest ${slowest.toFixed(0)} ms after the kill, 0 hung; first error: ${failures[0]?.message}; 32 new sessions all on the ${SERVERS - 1} others`,
    );
  }, 120_000);

  it("cuts a server off without a word (its link down): calls end at their timeouts, not later", async () => {
    const target = members[1] as Member;
    const REQUEST_TIMEOUT_MS = 3_000;
    const IDLE_TIMEOUT_MS = 8_000;
    const direct = createHttpStreamSandboxProvider({
      baseURL: target.url,
      auth: () => ({ headers: { Authorization: `Bearer ${TOKEN}` } }),
      requestTimeoutMs: REQUEST_TIMEOUT_MS,
      streamIdleTimeoutMs: IDLE_TIMEOUT_MS,
    });
    const session = await direct.acquire();
    try {
      const running = session.client.exec("sleep 60").then(
        () => undefined,
        (error: unknown) => ({ error, at: performance.now() }),
      );
      await new Promise((resolve) => setTimeout(resolve, 300));
      // Packets to and from the namespace are dropped from now on: no reset, no close, silence.
      ip("-n", target.namespace, "link", "set", target.inside, "down");
      const cutAt = performance.now();
      const read = await session.client.readFile("x").then(
        () => undefined,
        (error: unknown) => ({ error, at: performance.now() }),
      );
      const exec = await running;
      expect(isSandboxUnavailable(read?.error)).toBe(true);
      expect((read?.error as Error | undefined)?.message).toMatch(/did not answer within 3000 ms/);
      expect((read?.at ?? Infinity) - cutAt).toBeLessThan(REQUEST_TIMEOUT_MS + 1_000);
      expect(isSandboxUnavailable(exec?.error)).toBe(true);
      expect((exec?.error as Error | undefined)?.message).toMatch(/sent nothing for 8000 ms/);
      expect((exec?.at ?? Infinity) - cutAt).toBeLessThan(IDLE_TIMEOUT_MS + 1_000);
      console.log(
        `[fleet] link of ${target.name} cut: readFile failed after ${((read?.at ?? 0) - cutAt).toFixed(0)} ms (timeout ${REQUEST_TIMEOUT_MS}), the running exec after ${((exec?.at ?? 0) - cutAt).toFixed(0)} ms (idle timeout ${IDLE_TIMEOUT_MS})`,
      );
    } finally {
      ip("-n", target.namespace, "link", "set", target.inside, "up");
      direct.close();
    }
  }, 60_000);
});

if (skipReason !== undefined) {
  describe("sandbox fleet over network namespaces", () => {
    it.skip(`skipped: ${skipReason}`, () => {});
  });
}
