import { describe, expect, it } from "vitest";
import { createProxyLookups, LookupSlots } from "./proxy-lookups.js";

/** A lookup whose answers the test gives by hand; every call is recorded. */
function manualLookup() {
  const calls: string[] = [];
  const answers = new Map<string, (addresses: string[]) => void>();
  const lookup = (host: string) =>
    new Promise<string[]>((resolve) => {
      calls.push(host);
      answers.set(host, resolve);
    });
  return { calls, answers, lookup };
}

describe("createProxyLookups", () => {
  it("shares a name already pending, and runs no more at once than the slots", async () => {
    const { calls, answers, lookup } = manualLookup();
    const lookups = createProxyLookups({ lookup, slots: new LookupSlots(1) });
    const first = lookups.lookup("a.test");
    const again = lookups.lookup("a.test");
    const second = lookups.lookup("b.test");
    await Promise.resolve();
    expect(calls).toEqual(["a.test"]);
    answers.get("a.test")?.(["192.0.2.1"]);
    expect(await first).toEqual(["192.0.2.1"]);
    expect(await again).toEqual(["192.0.2.1"]);
    // The slot passed to the waiting name.
    await expect.poll(() => calls).toEqual(["a.test", "b.test"]);
    answers.get("b.test")?.(["192.0.2.2"]);
    expect(await second).toEqual(["192.0.2.2"]);
  });

  it("drops the names still waiting for a slot when its command ends, without looking them up", async () => {
    const { calls, answers, lookup } = manualLookup();
    const slots = new LookupSlots(1);
    const ended = createProxyLookups({ lookup, slots });
    const running = ended.lookup("running.test");
    const waiting = ended.lookup("waiting.test");
    ended.close();
    await expect(waiting).rejects.toMatchObject({ code: "PROXY_CLOSED" });
    await expect(ended.lookup("later.test")).rejects.toMatchObject({ code: "PROXY_CLOSED" });
    // Another command's lookup gets the slot once the running one answers.
    const other = createProxyLookups({ lookup, slots }).lookup("other.test");
    answers.get("running.test")?.(["192.0.2.1"]);
    expect(await running).toEqual(["192.0.2.1"]);
    await expect.poll(() => calls).toEqual(["running.test", "other.test"]);
    answers.get("other.test")?.(["192.0.2.3"]);
    expect(await other).toEqual(["192.0.2.3"]);
  });

  it("refuses a name past maxPending at once, and takes names again once some are answered", async () => {
    const { answers, lookup } = manualLookup();
    const lookups = createProxyLookups({ lookup, slots: new LookupSlots(4), maxPending: 2 });
    const pending = [lookups.lookup("a.test"), lookups.lookup("b.test")];
    await expect(lookups.lookup("c.test")).rejects.toMatchObject({ code: "TOO_MANY_LOOKUPS" });
    await Promise.resolve();
    answers.get("a.test")?.(["192.0.2.1"]);
    await pending[0];
    const next = lookups.lookup("c.test");
    await expect.poll(() => answers.has("c.test")).toBe(true);
    answers.get("c.test")?.(["192.0.2.3"]);
    expect(await next).toEqual(["192.0.2.3"]);
    answers.get("b.test")?.(["192.0.2.2"]);
    expect(await pending[1]).toEqual(["192.0.2.2"]);
  });
});
