import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { makeTempDir } from "@pleach/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createHttpStreamSandboxProvider,
  type HttpStreamSandboxProvider,
} from "./http-provider.js";
import { createCommandWrapper } from "./os/create-command-wrapper.js";
import { createSandboxServer, type SandboxServer } from "./server/sandbox-server.js";

// The sandbox's rules over HTTP: its notes on a failed command, and its read policy on the file
// route, as the local client has them.

const TOKEN = "test-token-0123456789abcdef";
const auth = () => ({ headers: { Authorization: `Bearer ${TOKEN}` } });

let server: SandboxServer;
let provider: HttpStreamSandboxProvider;
const cleanups: Array<() => Promise<void>> = [];

beforeAll(async () => {
  const folder = await makeTempDir("pleach-server-");
  cleanups.push(folder.cleanup);
  server = await createSandboxServer({ root: folder.dir, token: TOKEN });
  provider = createHttpStreamSandboxProvider({ baseURL: server.url, auth });
});

afterAll(async () => {
  provider.close();
  await server.close();
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

describe("the sandbox's rules over HTTP", () => {
  it("carries the sandbox's notes on a failure that met one of its rules", async () => {
    const session = await provider.acquire();
    try {
      await mkdir(path.join(session.root, ".git"));
      const result = await session.client.exec("echo '[core]' > .git/config");
      expect(result.exitCode).toBe(1);
      expect(result.sandboxNotes).toEqual([
        "sandbox: writing .git/config was refused: .git at the top of the workspace is protected: git runs its hooks and the commands its config names (core.fsmonitor). pleach keeps the repository's git machinery and files that make the host run code read-only for commands, and the file tools refuse them too; ask the user to make this change.",
      ]);
      expect((await session.client.exec("true")).sandboxNotes).toBeUndefined();
    } finally {
      await session.release();
    }
  });

  it("refuses a hidden file of the workspace to the file route as the local client does", async () => {
    const folder = await makeTempDir("pleach-server-hidden-");
    cleanups.push(folder.cleanup);
    const workspace = path.join(folder.dir, "workspace");
    await mkdir(workspace);
    const secret = path.join(workspace, "secrets.env");
    const hiding = await createSandboxServer({
      root: folder.dir,
      token: TOKEN,
      workspacePath: () => workspace,
      commandWrapper: createCommandWrapper({ hideReads: [secret] }),
    });
    const client = createHttpStreamSandboxProvider({ baseURL: hiding.url, auth });
    try {
      const box = await client.acquire();
      await writeFile(secret, "TOKEN=SECRET\n");
      const hidden = { code: "HIDDEN_PATH", details: { path: secret } };
      await expect(box.client.readFile("secrets.env")).rejects.toMatchObject(hidden);
      await expect(box.client.writeFile("secrets.env", "TOKEN=mine\n")).rejects.toMatchObject(
        hidden,
      );
      expect(await readFile(secret, "utf8")).toBe("TOKEN=SECRET\n");
      await box.release();
    } finally {
      client.close();
      await hiding.close();
    }
  });
});
