import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createHttpStreamSandboxProvider } from "../http-provider.js";
import { createCommandWrapper } from "../os/create-command-wrapper.js";
import { createSandboxServer } from "./sandbox-server.js";

// A workspace the server did not make (a host folder bound into a container) is the user's: it
// outlives its sandbox, whether the sandbox is released, idles out or the server stops.

const TOKEN = "t".repeat(32);
const folders: string[] = [];

afterEach(async () => {
  for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true });
});

async function folder(prefix: string): Promise<string> {
  const made = await realpath(await mkdtemp(path.join(os.tmpdir(), prefix)));
  folders.push(made);
  return made;
}

describe("a workspace named by workspacePath outside the server's root", () => {
  it("is never removed: not on release, idling out or the server's close", async () => {
    const bound = await folder("pleach-bound-");
    const server = await createSandboxServer({
      root: await folder("pleach-root-"),
      token: TOKEN,
      workspacePath: () => bound,
      idleTimeoutMs: 200,
      commandWrapper: createCommandWrapper({ backend: "none" }),
      mode: "danger-full-access",
    });
    const provider = createHttpStreamSandboxProvider({
      baseURL: server.url,
      auth: () => ({ headers: { Authorization: `Bearer ${TOKEN}` } }),
    });
    try {
      // A template would fill (and, failing, remove) the folder: refused, the folder untouched.
      await writeFile(path.join(bound, "kept.txt"), "mine\n");
      await expect(
        provider.acquire({ template: { git: "https://example.invalid/r.git" } }),
      ).rejects.toMatchObject({ code: "INVALID_INPUT" });
      expect(readFileSync(path.join(bound, "kept.txt"), "utf8")).toBe("mine\n");
      const released = await provider.acquire();
      await released.client.writeFile("kept.txt", "mine\n");
      await released.release();
      expect(readFileSync(path.join(bound, "kept.txt"), "utf8")).toBe("mine\n");
      // Idle past the server's limit: the sandbox goes, the folder stays.
      await provider.acquire();
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect(server.sandboxCount).toBe(0);
      expect(existsSync(path.join(bound, "kept.txt"))).toBe(true);
      await provider.acquire();
    } finally {
      provider.close();
      await server.close();
    }
    expect(readFileSync(path.join(bound, "kept.txt"), "utf8")).toBe("mine\n");
  });
});
