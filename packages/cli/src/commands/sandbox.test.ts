import { link, writeFile } from "node:fs/promises";
import path from "node:path";
import { makeTempDir } from "@pleach/core/testing";
import { createHttpStreamSandboxProvider } from "@pleach/sandbox";
import { describe, expect, it } from "vitest";
import type { CliIo } from "../cli-support.js";
import { sandboxCommand } from "./sandbox.js";

function captureIo(cwd: string): CliIo & { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return {
    out,
    err,
    cwd,
    stdout: (text) => out.push(text),
    stderr: (text) => err.push(text),
    readStdin: async () => undefined,
  };
}

describe("pleach sandbox serve", () => {
  it("serves sandboxes with the token from the file until stopped", async () => {
    const folder = await makeTempDir("pleach-cli-sandbox-");
    try {
      const token = "cli-token-0123456789abcdef";
      await writeFile(path.join(folder.dir, "token"), `${token}\n`);
      const io = captureIo(folder.dir);
      const stop = new AbortController();
      const running = sandboxCommand({
        args: ["serve", "--root", "boxes", "--listen", "127.0.0.1:0", "--token-file", "token"],
        io,
        stopSignal: stop.signal,
      });
      await expect.poll(() => io.out.length, { timeout: 5_000 }).toBe(1);
      const provider = createHttpStreamSandboxProvider({
        baseURL: (io.out[0] as string).trim(),
        auth: () => ({ headers: { Authorization: `Bearer ${token}` } }),
      });
      const session = await provider.acquire();
      expect(session.root.startsWith(path.join(folder.dir, "boxes"))).toBe(true);
      const result = await session.client.exec(`cat ${path.join(folder.dir, "token")}; echo done`);
      expect(result.stdout).not.toContain(token);
      expect(result.stdout).toContain("done");
      provider.close();
      stop.abort();
      expect(await running).toBe(0);
      expect(io.err.join("")).toMatch(/shutting down/);
    } finally {
      await folder.cleanup();
    }
  });

  it("refuses a token file with another hard link, which commands could read", async () => {
    const folder = await makeTempDir("pleach-cli-sandbox-");
    try {
      await writeFile(path.join(folder.dir, "token"), "cli-token-0123456789abcdef\n");
      // A second name of the same file, which the mask of the token path does not cover.
      await link(path.join(folder.dir, "token"), path.join(folder.dir, "token-link"));
      const io = captureIo(folder.dir);
      await expect(
        sandboxCommand({
          args: ["serve", "--root", "boxes", "--listen", "127.0.0.1:0", "--token-file", "token"],
          io,
          stopSignal: AbortSignal.abort(),
        }),
      ).rejects.toThrow(/has 2 hard links/);
    } finally {
      await folder.cleanup();
    }
  });

  it("refuses to start without a token, a root, or with a bad listen address", async () => {
    const io = captureIo("/tmp");
    await expect(sandboxCommand({ args: ["serve", "--root", "x"], io })).rejects.toThrow(
      /bearer token/,
    );
    await expect(sandboxCommand({ args: ["serve"], io })).rejects.toThrow(/--root/);
    await expect(
      sandboxCommand({ args: ["serve", "--root", "x", "--listen", "nope"], io }),
    ).rejects.toThrow(/--listen/);
    await expect(sandboxCommand({ args: ["start"], io })).rejects.toThrow(/subcommand/);
    expect(await sandboxCommand({ args: ["--help"], io })).toBe(0);
  });
});
