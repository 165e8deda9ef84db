import { describe, expect, it } from "vitest";
import { createMemoryProvider } from "../testing/index.js";
import type { SandboxProvider } from "./contract.js";
import { isSandboxUnavailable } from "./index.js";
import { createPooledSandboxProvider } from "./pool.js";

const settle = (ms = 20) => new Promise((resolve) => setTimeout(resolve, ms));

describe("createPooledSandboxProvider", () => {
  it("keeps min sandboxes ready and hands them out without waiting", async () => {
    const adapter = createMemoryProvider();
    adapter.acquireDelayMs = 30;
    const pool = createPooledSandboxProvider({ adapter, min: 2, max: 4 });
    await settle(80);
    expect(pool.stats).toMatchObject({ ready: 2, inUse: 0 });
    const started = performance.now();
    const session = await pool.acquire();
    expect(performance.now() - started).toBeLessThan(25);
    await session.client.writeFile("a.txt", "x");
    expect(await session.client.readFile("a.txt")).toBe("x");
    await settle(80);
    expect(pool.stats).toMatchObject({ ready: 2, inUse: 1 });
    await pool.close();
  });

  it("destroys a released sandbox rather than handing it to the next session", async () => {
    const adapter = createMemoryProvider();
    const pool = createPooledSandboxProvider({ adapter, max: 2 });
    const first = await pool.acquire();
    await first.client.writeFile("secret", "1");
    await pool.release(first);
    expect(adapter.alive.has(first.id)).toBe(false);
    const second = await pool.acquire();
    expect(second.id).not.toBe(first.id);
    await expect(second.client.readFile("secret")).rejects.toMatchObject({ code: "NOT_FOUND" });
    await second.release();
    await second.release();
    expect(pool.stats.inUse).toBe(0);
  });

  it("waits at max, wakes on release, and honours an abort signal while waiting", async () => {
    const adapter = createMemoryProvider();
    const pool = createPooledSandboxProvider({ adapter, max: 1 });
    const held = await pool.acquire();
    const controller = new AbortController();
    const aborted = pool.acquire({ abortSignal: controller.signal });
    const waiting = pool.acquire();
    await settle();
    expect(pool.stats.waiting).toBe(2);
    controller.abort();
    await expect(aborted).rejects.toMatchObject({ code: "ABORTED" });
    await held.release();
    const next = await waiting;
    expect(adapter.alive.size).toBe(1);
    await next.release();
    const slow = createMemoryProvider();
    slow.acquireDelayMs = 1_000;
    const slowPool = createPooledSandboxProvider({ adapter: slow });
    const quick = new AbortController();
    setTimeout(() => quick.abort(), 30);
    await expect(slowPool.acquire({ abortSignal: quick.signal })).rejects.toMatchObject({
      code: "ABORTED",
    });
    expect(slowPool.stats.creating).toBe(0);
  });

  it("detects a broken ready sandbox and hands out a fresh one instead", async () => {
    const adapter = createMemoryProvider();
    const errors: unknown[] = [];
    const pool = createPooledSandboxProvider({
      adapter,
      min: 1,
      onError: (error) => errors.push(error),
    });
    await settle();
    const [readyId] = adapter.alive;
    adapter.broken.add(readyId as string);
    const session = await pool.acquire();
    expect(session.id).not.toBe(readyId);
    await session.client.writeFile("x", "y");
    expect(errors.some(isSandboxUnavailable)).toBe(true);
    await pool.close();
  });

  it("retries reads and writes that found the sandbox unreachable, never exec", async () => {
    const adapter = createMemoryProvider();
    const pool = createPooledSandboxProvider({ adapter, retries: 2, retryDelayMs: 1 });
    const session = await pool.acquire();
    adapter.flakyCalls = 2;
    await session.client.writeFile("f", "v");
    adapter.flakyCalls = 2;
    expect(await session.client.readFile("f")).toBe("v");
    expect(session.broken).toBe(false);
    adapter.flakyCalls = 1;
    await expect(session.client.exec("echo hi")).rejects.toSatisfy(isSandboxUnavailable);
    // Tried once, not repeated.
    expect(adapter.execs).toBe(1);
    expect(session.broken).toBe(true);
    adapter.flakyCalls = 3;
    await expect(session.client.readFile("f")).rejects.toSatisfy(isSandboxUnavailable);
    // A tool's own error is not retried.
    await expect(session.client.readFile("missing")).rejects.toMatchObject({ code: "NOT_FOUND" });
    adapter.down = true;
    // Releasing a broken sandbox does not wait on its unreachable server.
    await session.release();
    expect(pool.stats.inUse).toBe(0);
  });

  it("evicts ready sandboxes left idle and replaces them up to min", async () => {
    const adapter = createMemoryProvider();
    const pool = createPooledSandboxProvider({ adapter, min: 1, idleTimeoutMs: 40 });
    await pool.acquire().then((session) => session.release());
    await settle(200);
    expect(adapter.created).toBeGreaterThanOrEqual(3);
    expect(adapter.alive.size).toBe(1);
    await pool.close();
    expect(adapter.alive.size).toBe(0);
  });

  it("refuses an adapter of another version of the contract, or of none", () => {
    const acquire = createMemoryProvider().acquire;
    const old = { specificationVersion: "v0", acquire } as unknown as SandboxProvider;
    expect(() => createPooledSandboxProvider({ adapter: old })).toThrow(/contract "v0", not "v1"/);
    const bare = { acquire } as unknown as SandboxProvider;
    expect(() => createPooledSandboxProvider({ adapter: bare })).toThrow(/of no version/);
    expect(() => createPooledSandboxProvider({ adapter: createMemoryProvider() })).not.toThrow();
  });

  it("refuses bad bounds", () => {
    const adapter = createMemoryProvider();
    expect(() => createPooledSandboxProvider({ adapter, min: 3, max: 2 })).toThrow(/min/);
  });
});
