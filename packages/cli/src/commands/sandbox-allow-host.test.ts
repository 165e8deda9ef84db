import { writeFile } from "node:fs/promises";
import http from "node:http";
import path from "node:path";
import { makeTempDir } from "@pleach/core/testing";
import { describe, expect, it } from "vitest";
import type { CliIo } from "../cli-support.js";
import { runCli } from "../test-support/run-cli.js";
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

/** The status of a health check sent to `url` with this Host (and Origin). */
function healthStatus(url: URL, token: string, host: string, origin?: string): Promise<number> {
  const headers: Record<string, string> = { host, authorization: `Bearer ${token}` };
  if (origin !== undefined) headers.origin = origin;
  return new Promise((resolve, reject) => {
    http
      .get(
        { host: url.hostname, port: url.port, path: "/v1/health", headers, agent: false },
        (r) => {
          r.resume();
          r.on("end", () => resolve(r.statusCode ?? 0));
        },
      )
      .on("error", reject);
  });
}

describe("pleach sandbox serve --allow-host", () => {
  it("accepts the hosts given (repeatable) beside loopback, and refuses others", async () => {
    const folder = await makeTempDir("pleach-cli-sandbox-allow-");
    try {
      const token = "cli-token-0123456789abcdef";
      await writeFile(path.join(folder.dir, "token"), `${token}\n`);
      const io = captureIo(folder.dir);
      const stop = new AbortController();
      const running = sandboxCommand({
        args: [
          ...["serve", "--root", "boxes", "--listen", "127.0.0.1:0", "--token-file", "token"],
          ...["--allow-host", "sandbox.internal", "--allow-host", "fd00::5"],
        ],
        io,
        stopSignal: stop.signal,
      });
      await expect.poll(() => io.out.length, { timeout: 5_000 }).toBe(1);
      const url = new URL((io.out[0] as string).trim());
      expect(await healthStatus(url, token, url.host)).toBe(200);
      expect(await healthStatus(url, token, "sandbox.internal:8700")).toBe(200);
      expect(await healthStatus(url, token, "[fd00::5]:8700")).toBe(200);
      expect(await healthStatus(url, token, "localhost", "http://sandbox.internal")).toBe(200);
      expect(await healthStatus(url, token, "other.internal")).toBe(403);
      expect(await healthStatus(url, token, "localhost", "http://other.internal")).toBe(403);
      stop.abort();
      expect(await running).toBe(0);
    } finally {
      await folder.cleanup();
    }
  });

  it("refuses a value with a port or a scheme, naming it", async () => {
    const env = { PLEACH_SANDBOX_TOKEN: "cli-token-0123456789abcdef" };
    const withPort = await runCli(
      ["sandbox", "serve", "--root", "x", "--allow-host", "sandbox.internal:8700"],
      { env, cwd: "/tmp" },
    );
    expect(withPort.code).toBe(2);
    expect(withPort.stderr).toMatch(/--allow-host: "sandbox\.internal:8700" .*without a port/);
    const withScheme = await runCli(
      ["sandbox", "serve", "--root", "x", "--allow-host", "https://sandbox.internal"],
      { env, cwd: "/tmp" },
    );
    expect(withScheme.code).toBe(2);
    expect(withScheme.stderr).toMatch(/without a scheme or path/);
    const help = await runCli(["sandbox", "--help"]);
    expect(help.stdout).toMatch(/--allow-host NAME/);
  });
});
