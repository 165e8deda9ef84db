import { describe, expect, it } from "vitest";
import { SpareBuffer } from "./spare-buffer.js";

describe("SpareBuffer", () => {
  it("hands its buffer out again once given back, and never two at once", () => {
    const spare = new SpareBuffer(1024 * 1024);
    const first = spare.take(100_000);
    const second = spare.take(100_000);
    expect(first.buffer).not.toBe(second.buffer);
    first.fill(1);
    second.fill(2);
    expect(first.every((byte) => byte === 1)).toBe(true);
    spare.giveBack(first);
    const third = spare.take(50_000);
    expect(third.buffer).toBe(first.buffer);
    expect(third.length).toBe(50_000);
    // Not its own (a pooled small buffer, a slice of something else): never kept.
    const foreign = Buffer.from("not from the spare");
    spare.giveBack(third);
    spare.giveBack(foreign);
    expect(spare.take(10).buffer).toBe(first.buffer);
    // Larger than its bound: a buffer of its own each time.
    const huge = spare.take(2 * 1024 * 1024);
    spare.giveBack(huge);
    expect(spare.take(2 * 1024 * 1024).buffer).not.toBe(huge.buffer);
  });
});
