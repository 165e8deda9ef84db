import { forceRemove, makeTempDir } from "@pleach/core/testing";
import { CommandExitError, Sandbox } from "e2b";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCommandWrapper } from "../../os/create-command-wrapper.js";
import { createSandboxServer, type SandboxServer } from "../sandbox-server.js";

// The official e2b SDK, pinned, against `createSandboxServer({ protocol: "e2b" })` on loopback:
// the API and every sandbox's envd on the server's one port, the token as the SDK's API key.

const TOKEN = "e2b-face-token-0123456789abcdef";
let server: SandboxServer;
let root: string;
let connection: { apiKey: string; apiUrl: string; sandboxUrl: string };

beforeAll(async () => {
  root = (await makeTempDir("pleach-e2b-root-")).dir;
  server = await createSandboxServer({
    root,
    token: TOKEN,
    protocol: "e2b",
    commandWrapper: createCommandWrapper({ warmSandbox: false }),
    heartbeatMs: 500,
  });
  const url = server.url.href.replace(/\/$/, "");
  connection = { apiKey: TOKEN, apiUrl: url, sandboxUrl: url };
});

afterAll(async () => {
  await server?.close();
  await forceRemove(root);
});

describe("the e2b SDK over pleach sandbox serve --protocol e2b", () => {
  it("creates a sandbox, runs foreground commands with exit codes and streamed output", async () => {
    const sandbox = await Sandbox.create({ ...connection });
    try {
      const chunks: string[] = [];
      const result = await sandbox.commands.run("echo out; echo err >&2; echo again", {
        onStdout: (data) => {
          chunks.push(data);
        },
      });
      expect(result).toMatchObject({ exitCode: 0, stdout: "out\nagain\n", stderr: "err\n" });
      expect(chunks.join("")).toBe("out\nagain\n");
      const failed = await sandbox.commands.run("echo nope >&2; exit 3").catch((error) => error);
      expect(failed).toBeInstanceOf(CommandExitError);
      expect(failed).toMatchObject({ exitCode: 3, stderr: "nope\n" });
    } finally {
      await sandbox.kill();
    }
  });

  it("reads, writes and lists files", async () => {
    const sandbox = await Sandbox.create({ ...connection });
    try {
      await sandbox.files.write("notes/a.txt", "hello\n");
      expect(await sandbox.files.read("notes/a.txt")).toBe("hello\n");
      expect((await sandbox.commands.run("cat notes/a.txt")).stdout).toBe("hello\n");
      const entries = await sandbox.files.list("notes");
      expect(entries.map((entry) => [entry.name, entry.type, entry.size])).toEqual([
        ["a.txt", "file", 6],
      ]);
    } finally {
      await sandbox.kill();
    }
  });

  it("runs a background command that takes stdin and is killed", async () => {
    const sandbox = await Sandbox.create({ ...connection });
    try {
      const handle = await sandbox.commands.run("read line; echo got:$line; sleep 60", {
        background: true,
        stdin: true,
      });
      await handle.sendStdin("hi\n");
      await expect.poll(() => handle.stdout, { timeout: 10_000 }).toContain("got:hi");
      expect(await handle.kill()).toBe(true);
      const ended = await handle.wait().catch((error) => error);
      expect(ended).toBeInstanceOf(CommandExitError);
    } finally {
      await sandbox.kill();
    }
  });

  it("lists, sets the timeout of and kills sandboxes", async () => {
    const sandbox = await Sandbox.create({ ...connection, metadata: { run: "e2b-face" } });
    const listed = await Sandbox.list({
      ...connection,
      query: { metadata: { run: "e2b-face" } },
    }).nextItems();
    expect(listed.map((info) => info.sandboxId)).toEqual([sandbox.sandboxId]);
    await sandbox.setTimeout(60_000);
    const info = await sandbox.getInfo();
    expect(info.endAt.getTime() - Date.now()).toBeGreaterThan(50_000);
    await sandbox.kill();
    expect(await Sandbox.kill(sandbox.sandboxId, connection)).toBe(false);
  });

  it("connects to a sandbox, lists its processes, and makes, renames and removes files", async () => {
    const sandbox = await Sandbox.create({ ...connection });
    try {
      const again = await Sandbox.connect(sandbox.sandboxId, connection);
      const handle = await again.commands.run("sleep 30", { background: true, stdin: true });
      expect((await again.commands.list()).map((process) => process.pid)).toContain(handle.pid);
      await handle.kill();
      expect(await again.files.makeDir("made")).toBe(true);
      expect(await again.files.makeDir("made")).toBe(false);
      await again.files.write("made/x.txt", "x");
      await again.files.rename("made/x.txt", "made/y.txt");
      expect(await again.files.exists("made/x.txt")).toBe(false);
      expect((await again.files.getInfo("made/y.txt")).type).toBe("file");
      await again.files.remove("made");
      expect(await again.files.exists("made")).toBe(false);
      await expect(again.files.read("../outside.txt")).rejects.toThrow(/outside/);
    } finally {
      await sandbox.kill();
    }
  });

  it("answers what it does not serve with a clear not supported", async () => {
    const sandbox = await Sandbox.create({ ...connection });
    try {
      await expect(sandbox.files.watchDir(".", () => {})).rejects.toThrow(
        /not supported by pleach's E2B face/,
      );
      const handle = await sandbox.commands.run("cat", { background: true, stdin: true });
      await expect(handle.closeStdin()).rejects.toThrow(/closeStdin.*not supported/);
      await handle.kill();
      await expect(sandbox.getMetrics()).rejects.toThrow(/not supported by pleach's E2B face/);
      await expect(
        Sandbox.create({ ...connection, network: { allowOut: ["example.com"] } }),
      ).rejects.toThrow(/network: not supported/);
    } finally {
      await sandbox.kill();
    }
  });
});
