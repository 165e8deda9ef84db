import path from "node:path";
import type { SandboxClient, SandboxSession } from "@pleach/core/sandbox";
import {
  describeSandboxClientContract,
  describeSandboxJobsContract,
  makeTempDir,
} from "@pleach/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSandboxServer, type SandboxServer } from "../server/sandbox-server.js";
import { createE2BSandboxProvider } from "./e2b-provider.js";

// createE2BSandboxProvider pointed at pleach's own E2B face on loopback: the contract suites of
// every client, through the e2b SDK and envd's protocol.

const TOKEN = "e2b-provider-token-0123456789abcdef";
let server: SandboxServer;
let serverRoot: { dir: string; cleanup(): Promise<void> };
/** The folder the next sandbox gets, so the contract's `root` is the sandbox's own. */
let nextWorkspace: string | undefined;
let provider: ReturnType<typeof createE2BSandboxProvider>;

beforeAll(async () => {
  serverRoot = await makeTempDir("pleach-e2b-provider-");
  server = await createSandboxServer({
    root: serverRoot.dir,
    token: TOKEN,
    protocol: "e2b",
    workspacePath: (id) => nextWorkspace ?? path.join(serverRoot.dir, id),
    heartbeatMs: 200,
  });
  const url = server.url.href.replace(/\/$/, "");
  provider = createE2BSandboxProvider({
    apiKey: TOKEN,
    apiUrl: url,
    sandboxUrl: url,
    jobs: { maxJobs: 3, maxOutputBytes: 64 * 1024 },
  });
});

afterAll(async () => {
  await server?.close();
  await serverRoot?.cleanup();
});

const sessions = new WeakMap<SandboxClient, SandboxSession>();
const acquireIn = async (root: string) => {
  nextWorkspace = root;
  try {
    const session = await provider.acquire();
    sessions.set(session.client, session);
    return session.client;
  } finally {
    nextWorkspace = undefined;
  }
};

// The files of an E2B sandbox are its own: the client cannot plant links in them (here they
// happen to be this machine's, and the server confines by realpath; its own suites test that).
describeSandboxClientContract("E2B (e2b SDK, loopback sandbox server --protocol e2b)", acquireIn, {
  exec: true,
  sharedFileSystem: false,
});

describeSandboxJobsContract("E2B (e2b SDK, loopback sandbox server --protocol e2b)", {
  async makeClient(root, limits) {
    expect(limits).toEqual({ maxJobs: 3, maxJobOutputBytes: 64 * 1024 });
    return acquireIn(root);
  },
  close: async (client) => sessions.get(client)?.release(),
  noPtyReason:
    "the E2B client's jobs run without a terminal (the SDK's pty module starts a shell, not a command)",
});

describe("the E2B client", () => {
  it("returns a non-zero exit as data, and releases its sandbox", async () => {
    const session = await provider.acquire();
    const result = await session.client.exec("echo bad >&2; exit 7");
    expect(result).toMatchObject({ exitCode: 7, stderr: "bad\n", timedOut: false });
    await session.release();
    await expect(session.client.exec("true")).rejects.toMatchObject({ name: "ToolError" });
  });

  it("stops reading a file past maxBytes, rather than holding all of it first", async () => {
    const session = await provider.acquire();
    try {
      // Sparse, made in an instant, and under the server's own read limit (32 MiB), which a real
      // E2B sandbox does not have.
      await session.client.exec("truncate -s 24M big");
      const refused = await session.client
        .readFile("big", { maxBytes: 1024 })
        .catch((error: unknown) => error);
      expect(refused).toMatchObject({ name: "ToolError", code: "TOO_LARGE" });
      const { details } = refused as { details: { bytes: number; maxBytes: number } };
      expect(details.maxBytes).toBe(1024);
      expect(details.bytes).toBeGreaterThan(1024);
      expect(details.bytes).toBeLessThan(8 * 1024 * 1024);
    } finally {
      await session.release();
    }
  });
});
