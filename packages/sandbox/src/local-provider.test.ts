import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { useTempDir } from "@pleach/core/testing";
import { describe, expect, it } from "vitest";
import { createLocalSandboxProvider } from "./local-provider.js";

describe("createLocalSandboxProvider", () => {
  it("gives each session a fresh folder of its own and removes it on release", async () => {
    const parent = await useTempDir({ prefix: "pleach-provider-" });
    const provider = createLocalSandboxProvider({ tempParent: parent });
    const [first, second] = await Promise.all([provider.acquire(), provider.acquire()]);
    if (first === undefined || second === undefined) throw new Error("no sessions");
    expect(first.id).not.toBe(second.id);
    expect(first.client.root).not.toBe(second.client.root);
    expect(path.dirname(first.client.root)).toBe(parent);
    await first.client.writeFile("a.txt", "one\n");
    await expect(second.client.readFile("a.txt")).rejects.toMatchObject({ code: "NOT_FOUND" });
    await first.release();
    await first.release();
    expect(existsSync(first.client.root)).toBe(false);
    expect(existsSync(second.client.root)).toBe(true);
    await second.release();
  });

  it("serves a given root in the given mode and never removes it", async () => {
    const root = await useTempDir({ prefix: "pleach-provider-root-" });
    await writeFile(path.join(root, "keep.txt"), "kept\n");
    const provider = createLocalSandboxProvider({ root, mode: "read-only" });
    const session = await provider.acquire();
    expect(session.client.mode).toBe("read-only");
    await expect(session.client.writeFile("x.txt", "x")).rejects.toMatchObject({
      code: "READ_ONLY",
    });
    await session.release();
    expect(await readFile(path.join(root, "keep.txt"), "utf8")).toBe("kept\n");
  });

  it("refuses to hand out a session once aborted", async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(
      createLocalSandboxProvider().acquire({ abortSignal: controller.signal }),
    ).rejects.toThrow();
  });
});
