import { describe, expect, it } from "vitest";
import { createMemoryProvider } from "../testing/index.js";
import { createSandboxComposite } from "./composite.js";
import type { SandboxProvider } from "./contract.js";
import { isSandboxUnavailable } from "./index.js";

describe("createSandboxComposite", () => {
  it("refuses a member of another version of the contract", () => {
    const old = {
      ...createMemoryProvider(),
      specificationVersion: "v2",
    } as unknown as SandboxProvider;
    expect(() =>
      createSandboxComposite({
        members: [
          { name: "new", provider: createMemoryProvider() },
          { name: "old", provider: old },
        ],
      }),
    ).toThrow(/member old implements sandbox contract "v2", not "v1"/);
  });

  it("spreads sessions over members of equal priority", async () => {
    const a = createMemoryProvider("a");
    const b = createMemoryProvider("b");
    const c = createMemoryProvider("c");
    const composite = createSandboxComposite({
      members: [
        { name: "a", provider: a },
        { name: "b", provider: b },
        { name: "c", provider: c },
      ],
    });
    const sessions = await Promise.all(Array.from({ length: 9 }, () => composite.acquire()));
    expect([a.alive.size, b.alive.size, c.alive.size]).toEqual([3, 3, 3]);
    await Promise.all(sessions.map((session) => session.release()));
    expect(composite.health().map((member) => member.sessions)).toEqual([0, 0, 0]);
  });

  it("uses the highest priority first and fails over while it is down", async () => {
    const fleet = createMemoryProvider("fleet");
    const local = createMemoryProvider("local");
    const composite = createSandboxComposite({
      members: [
        { name: "local", provider: local, priority: 0 },
        { name: "fleet", provider: fleet, priority: 10 },
      ],
      cooldownMs: 50,
    });
    expect((await composite.acquire()).member).toBe("fleet");
    fleet.down = true;
    const fallback = await composite.acquire();
    expect(fallback.member).toBe("local");
    expect(composite.health().find((member) => member.name === "fleet")).toMatchObject({
      healthy: false,
      failures: 1,
    });
    fleet.down = false;
    // Still cooling down: local again, without trying the fleet.
    expect((await composite.acquire()).member).toBe("local");
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect((await composite.acquire()).member).toBe("fleet");
  });

  it("marks a member down when a session finds it unreachable, and new sessions go elsewhere", async () => {
    const a = createMemoryProvider("a");
    const b = createMemoryProvider("b");
    const composite = createSandboxComposite({
      members: [
        { name: "a", provider: a, priority: 1 },
        { name: "b", provider: b },
      ],
    });
    const session = await composite.acquire();
    expect(session.member).toBe("a");
    a.down = true;
    await expect(session.client.exec("true")).rejects.toSatisfy(isSandboxUnavailable);
    a.down = false;
    expect((await composite.acquire()).member).toBe("b");
  });

  it("says which members failed when none can give a sandbox, and passes aborts through", async () => {
    const a = createMemoryProvider("a");
    const b = createMemoryProvider("b");
    a.down = true;
    b.down = true;
    const composite = createSandboxComposite({
      members: [
        { name: "a", provider: a },
        { name: "b", provider: b },
      ],
    });
    const error = await composite.acquire().catch((failure: unknown) => failure);
    expect(isSandboxUnavailable(error)).toBe(true);
    expect((error as Error).message).toMatch(
      /a: a is down.*b: b is down|b: b is down.*a: a is down/,
    );
    // Every member down: they are still tried, so a recovered one is found at once.
    b.down = false;
    expect((await composite.acquire()).member).toBe("b");
    b.acquireDelayMs = 1_000;
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 20);
    await expect(composite.acquire({ abortSignal: controller.signal })).rejects.toMatchObject({
      code: "ABORTED",
    });
    expect(() => createSandboxComposite({ members: [] })).toThrow(/at least one/);
  });
});
