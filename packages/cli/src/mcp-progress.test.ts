// A long call over MCP shows its progress: `pleach mcp --progress-interval 0.5` (the built bin,
// over stdio) runs a `bash` call of `sleep 2` for the official clients of both SDK lines, which
// send a progress token and ask for debug log messages. Needs the build (`npm test` builds first).
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { Client as ClientV2 } from "@modelcontextprotocol/client";
import { StdioClientTransport as StdioTransportV2 } from "@modelcontextprotocol/client/stdio";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as StdioTransportV1 } from "@modelcontextprotocol/sdk/client/stdio.js";
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { useTempDir } from "@pleach/core/testing";
import { describe, expect, it } from "vitest";

const launcher = path.resolve(import.meta.dirname, "../bin/pleach.js");

interface Update {
  progress: number;
  message?: string;
}
interface LogMessage {
  level: string;
  logger?: string;
  data: unknown;
}
/** What the test needs of a client; the two SDK lines spell these differently. */
interface ProgressClient {
  setLoggingLevel(level: "debug"): Promise<unknown>;
  onLog(handler: (message: LogMessage) => void): void;
  callWithProgress(
    params: { name: string; arguments: Record<string, unknown> },
    onprogress: (update: Update) => void,
  ): Promise<{ isError?: boolean; structuredContent?: Record<string, unknown> }>;
  close(): Promise<void>;
}

function serverArgs(root: string) {
  return [launcher, "mcp", "--workspace", root, "--progress-interval", "0.5"];
}

const sdks = {
  "v2 @modelcontextprotocol/client": async (root: string): Promise<ProgressClient> => {
    const client = new ClientV2({ name: "pleach-progress", version: "1.0.0" });
    await client.connect(
      new StdioTransportV2({ command: process.execPath, args: serverArgs(root), stderr: "pipe" }),
    );
    return {
      setLoggingLevel: (level) => client.setLoggingLevel(level),
      onLog: (handler) =>
        client.setNotificationHandler("notifications/message", ({ params }) => handler(params)),
      callWithProgress: (params, onprogress) =>
        client.callTool(params, { onprogress }) as ReturnType<ProgressClient["callWithProgress"]>,
      close: () => client.close(),
    };
  },
  "v1 @modelcontextprotocol/sdk": async (root: string): Promise<ProgressClient> => {
    const client = new ClientV1({ name: "pleach-progress", version: "1.0.0" });
    await client.connect(
      new StdioTransportV1({ command: process.execPath, args: serverArgs(root), stderr: "pipe" }),
    );
    return {
      setLoggingLevel: (level) => client.setLoggingLevel(level),
      onLog: (handler) =>
        client.setNotificationHandler(LoggingMessageNotificationSchema, ({ params }) =>
          handler(params),
        ),
      callWithProgress: (params, onprogress) =>
        client.callTool(params, undefined, { onprogress }) as ReturnType<
          ProgressClient["callWithProgress"]
        >,
      close: () => client.close(),
    };
  },
};

describe.each(Object.entries(sdks))("pleach mcp progress and logging, %s", (_sdk, connect) => {
  it("sends elapsed-time progress and debug log messages while bash sleeps", async () => {
    if (!existsSync(path.resolve(import.meta.dirname, "../dist/main.js"))) {
      throw new Error("pleach is not built: run `npx tsc -b` (npm test does it) first");
    }
    const client = await connect(await useTempDir("pleach-mcp-progress-"));
    try {
      const logs: LogMessage[] = [];
      client.onLog((message) => logs.push(message));
      expect(await client.setLoggingLevel("debug")).toEqual({});
      const updates: Update[] = [];
      const result = await client.callWithProgress(
        { name: "bash", arguments: { command: "sleep 2" } },
        (update) => updates.push(update),
      );
      expect(result).toMatchObject({ isError: false });
      // Every half second: about three updates within two seconds, each later than the last.
      expect(updates.length).toBeGreaterThanOrEqual(2);
      for (const [index, update] of updates.entries()) {
        expect(update.message).toMatch(/^bash running… [0-2]s$/);
        if (index > 0) expect(update.progress).toBeGreaterThan(updates[index - 1]?.progress ?? 0);
      }
      expect(updates.at(-1)?.progress).toBeGreaterThanOrEqual(1);
      expect(logs[0]).toEqual({ level: "debug", logger: "pleach", data: "bash started" });
      expect(logs.map(({ data }) => data)).toContain(updates[0]?.message);
      expect(logs.at(-1)?.data).toMatch(/^bash done in [2-9]\.\ds$/);
    } finally {
      await client.close();
    }
  });
});

describe("pleach mcp --progress-interval", () => {
  it("refuses an interval that is not 0.1 to 3600 seconds, pointing at the help", async () => {
    for (const value of ["0", "abc", "", "7200"]) {
      const refused = promisify(execFile)(process.execPath, [
        launcher,
        "mcp",
        "--progress-interval",
        value,
      ]);
      await expect(refused).rejects.toMatchObject({
        code: 2,
        stderr: expect.stringMatching(
          /--progress-interval takes seconds from 0\.1 to 3600.*\n.*pleach mcp --help/,
        ),
      });
    }
  });
});
