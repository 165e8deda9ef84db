import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { makeTempDir } from "@pleach/core/testing";
import { afterEach, describe, expect, it } from "vitest";
import { createLocalSandboxProvider } from "./local-provider.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

describe("createLocalSandboxProvider", () => {
  it("gives each session a fresh folder of its own and removes it on release", async () => {
    const parent = await makeTempDir("pleach-provider-");
    cleanups.push(parent.cleanup);
    const provider = createLocalSandboxProvider({ tempParent: parent.dir });
    const [first, second] = await Promise.all([provider.acquire(), provider.acquire()]);
    if (first === undefined || second === undefined) throw new Error("no sessions");
    expect(first.id).not.toBe(second.id);
    expect(first.client.root).not.toBe(second.client.root);
    expect(path.dirname(first.client.root)).toBe(parent.dir);
    await first.client.writeFile("a.txt", "one\n");
    await expect(second.client.readFile("a.txt")).rejects.toMatchObject({ code: "NOT_FOUND" });
    await first.release();
    await first.release();
    expect(existsSync(first.client.root)).toBe(false);
    expect(existsSync(second.client.root)).toBe(true);
    await second.release();
  });

  it("serves a given root in the given mode and never removes it", async () => {
    const root = await makeTempDir("pleach-provider-root-");
    cleanups.push(root.cleanup);
    await writeFile(path.join(root.dir, "keep.txt"), "kept\n");
    const provider = createLocalSandboxProvider({ root: root.dir, mode: "read-only" });
    const session = await provider.acquire();
    expect(session.client.mode).toBe("read-only");
    await expect(session.client.writeFile("x.txt", "x")).rejects.toMatchObject({
      code: "READ_ONLY",
    });
    await session.release();
    expect(await readFile(path.join(root.dir, "keep.txt"), "utf8")).toBe("kept\n");
  });

  it("refuses to hand out a session once aborted", async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(
      createLocalSandboxProvider().acquire({ abortSignal: controller.signal }),
    ).rejects.toThrow();
  });
});
