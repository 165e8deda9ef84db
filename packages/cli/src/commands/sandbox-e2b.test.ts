import { writeFile } from "node:fs/promises";
import path from "node:path";
import { makeTempDir } from "@pleach/core/testing";
import { Sandbox } from "e2b";
import { describe, expect, it } from "vitest";
import { sandboxCommand } from "./sandbox.js";

describe("pleach sandbox serve --protocol e2b", () => {
  it("answers the e2b SDK with the token as its API key, and refuses another key", async () => {
    const folder = await makeTempDir("pleach-cli-e2b-");
    try {
      const token = "cli-e2b-token-0123456789abcdef";
      await writeFile(path.join(folder.dir, "token"), `${token}\n`);
      const out: string[] = [];
      const err: string[] = [];
      const stop = new AbortController();
      const running = sandboxCommand({
        args: [
          "serve",
          "--root",
          "boxes",
          "--listen",
          "127.0.0.1:0",
          "--token-file",
          "token",
          "--protocol",
          "e2b",
        ],
        io: {
          cwd: folder.dir,
          stdout: (text) => out.push(text),
          stderr: (text) => err.push(text),
          readStdin: async () => undefined,
        },
        stopSignal: stop.signal,
      });
      await expect.poll(() => out.length, { timeout: 5_000 }).toBe(1);
      const url = (out[0] as string).trim().replace(/\/$/, "");
      const connection = { apiUrl: url, sandboxUrl: url };
      await expect(
        Sandbox.create({ ...connection, apiKey: "wrong-key-0123456789abcdef" }),
      ).rejects.toThrow(/Unauthorized.*x-api-key: TOKEN/);
      const sandbox = await Sandbox.create({ ...connection, apiKey: token });
      // The token file is hidden from commands, as over pleach's own protocol.
      const result = await sandbox.commands.run(
        `cat ${path.join(folder.dir, "token")} 2>&1; echo done`,
      );
      expect(result.stdout).not.toContain(token);
      expect(result.stdout).toContain("done");
      await sandbox.kill();
      stop.abort();
      expect(await running).toBe(0);
      expect(err.join("")).toMatch(/E2B protocol/);
    } finally {
      await folder.cleanup();
    }
  });

  it("refuses an unknown protocol", async () => {
    await expect(
      sandboxCommand({
        args: ["serve", "--root", "x", "--protocol", "grpc"],
        io: { cwd: "/tmp", stdout: () => {}, stderr: () => {}, readStdin: async () => undefined },
      }),
    ).rejects.toThrow(/--protocol takes pleach or e2b/);
  });
});
