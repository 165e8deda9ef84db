import { mkdtemp, realpath, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createHttpStreamSandboxProvider } from "../http-provider.js";
import { createCommandWrapper } from "../os/create-command-wrapper.js";
import { probeSandboxBackend } from "../os/probe.js";
import { createSandboxServer } from "./sandbox-server.js";

const TOKEN = "t".repeat(32);
const folders: string[] = [];
const probe = await probeSandboxBackend({ backend: "bubblewrap" });

afterEach(async () => {
  for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true });
});

async function serverRoot(): Promise<string> {
  const made = await realpath(await mkdtemp(path.join(os.tmpdir(), "pleach-root-")));
  folders.push(made);
  return made;
}

describe("a sandbox server's domain list", () => {
  it("is checked as the server starts: a wrong pattern is INVALID_INPUT naming it", async () => {
    await expect(
      createSandboxServer({
        root: await serverRoot(),
        token: TOKEN,
        network: { allowDomains: ["*.*.example.com"] },
        commandWrapper: createCommandWrapper({ backend: "none" }),
      }),
    ).rejects.toMatchObject({
      code: "INVALID_INPUT",
      message: expect.stringContaining('"*.*.example.com" is not a domain pattern'),
    });
  });

  it.skipIf(!probe.available)("holds every sandbox's commands to the list", async () => {
    const server = await createSandboxServer({
      root: await serverRoot(),
      token: TOKEN,
      network: { allowDomains: ["registry.npmjs.org"] },
      commandWrapper: createCommandWrapper({ warmSandbox: false }),
    });
    const provider = createHttpStreamSandboxProvider({
      baseURL: server.url,
      auth: () => ({ headers: { Authorization: `Bearer ${TOKEN}` } }),
    });
    try {
      const session = await provider.acquire();
      const result = await session.client.exec("curl -sS http://evil.example/");
      expect(result.stdout).toContain(
        "pleach's sandbox refused a connection to evil.example:80: not in the allowed domains (registry.npmjs.org).",
      );
      await session.release();
    } finally {
      provider.close();
      await server.close();
    }
  });
});
