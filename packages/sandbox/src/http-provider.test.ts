import { spawnSync } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import http from "node:http";
import path from "node:path";
import {
  createPooledSandboxProvider,
  createSandboxComposite,
  isSandboxUnavailable,
} from "@pleach/coding-agent/sandbox";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { describeSandboxClientContract } from "../../coding-agent/src/test-support/sandbox-contract.js";
import { makeTempDir } from "../../coding-agent/src/test-support/temp-dir.js";
import {
  createHttpStreamSandboxProvider,
  type HttpStreamSandboxProvider,
} from "./http-provider.js";
import { createLocalSandboxProvider } from "./local-provider.js";
import { createSandboxServer, type SandboxServer } from "./server/sandbox-server.js";

const TOKEN = "test-token-0123456789abcdef";
const auth = () => ({ headers: { Authorization: `Bearer ${TOKEN}` } });

let server: SandboxServer;
let provider: HttpStreamSandboxProvider;
let serverRoot: string;
const cleanups: Array<() => Promise<void>> = [];
/** The folder the next sandbox gets, so the contract's `root` is the sandbox's own. */
let nextWorkspace: string | undefined;

beforeAll(async () => {
  const folder = await makeTempDir("pleach-server-");
  cleanups.push(folder.cleanup);
  serverRoot = folder.dir;
  server = await createSandboxServer({
    root: serverRoot,
    token: TOKEN,
    workspacePath: (id) => nextWorkspace ?? path.join(serverRoot, id),
    heartbeatMs: 200,
  });
  provider = createHttpStreamSandboxProvider({ baseURL: server.url, auth });
});

afterAll(async () => {
  provider.close();
  await server.close();
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

describeSandboxClientContract(
  "HTTP stream (loopback sandbox server)",
  async (root) => {
    nextWorkspace = root;
    try {
      return (await provider.acquire()).client;
    } finally {
      nextWorkspace = undefined;
    }
  },
  // The server shares this machine's disk, so the symlink and mode tests run too.
  { exec: true, sharedFileSystem: true },
);

/** A raw request, for what the client never sends. */
function raw({
  method = "POST",
  route,
  body,
  headers = {},
}: {
  method?: string;
  route: string;
  body?: string | Buffer;
  headers?: Record<string, string>;
}): Promise<{
  status: number;
  json: { error?: { code: string; message: string } } & Record<string, unknown>;
}> {
  return new Promise((resolve, reject) => {
    const request = http.request(new URL(route, server.url), { method, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        resolve({ status: response.statusCode ?? 0, json: text === "" ? {} : JSON.parse(text) });
      });
    });
    request.on("error", reject);
    request.end(body);
  });
}

describe("sandbox server", () => {
  afterEach(() => {
    nextWorkspace = undefined;
  });

  it("streams output as it comes, before the command exits", async () => {
    const session = await provider.acquire();
    const seen: Array<{ stream: string; text: string; at: number }> = [];
    const started = performance.now();
    const result = await session.client.exec("echo first; echo oops >&2; sleep 0.5; echo second", {
      onOutput: (stream, text) => seen.push({ stream, text, at: performance.now() - started }),
    });
    expect(result).toMatchObject({ exitCode: 0, stdout: "first\nsecond\n", stderr: "oops\n" });
    const first = seen.find((chunk) => chunk.text.includes("first"));
    expect(first?.stream).toBe("stdout");
    expect(first?.at).toBeLessThan(400);
    expect(seen.find((chunk) => chunk.text.includes("oops"))?.stream).toBe("stderr");
    await session.release();
  });

  it("creates sandboxes apart: one cannot see another's files, release removes the workspace", async () => {
    const a = await provider.acquire();
    const b = await provider.acquire();
    expect(a.root).not.toBe(b.root);
    await a.client.writeFile("secret.txt", "a's secret");
    await expect(b.client.readFile(path.join(a.root, "secret.txt"))).rejects.toMatchObject({
      code: "PATH_ESCAPE",
    });
    const peek = await b.client.exec(`cat ${a.root}/secret.txt; ls ${path.dirname(a.root)}`);
    expect(peek.stdout).not.toContain("a's secret");
    expect(peek.stdout.trim()).toBe(path.basename(b.root));
    await a.release();
    await expect(stat(a.root)).rejects.toThrow();
    await expect(a.client.readFile("secret.txt")).rejects.toSatisfy(isSandboxUnavailable);
    await a.release();
    await b.release();
  });

  it("fills a sandbox from a template folder or a git URL, and refuses templates it does not allow", async () => {
    const templates = await makeTempDir("pleach-templates-");
    cleanups.push(templates.cleanup);
    await mkdir(path.join(templates.dir, "app/src"), { recursive: true });
    await writeFile(path.join(templates.dir, "app/src/index.js"), "console.log(1)\n");
    const repo = path.join(templates.dir, "repo");
    await mkdir(repo);
    const git = (args: string) =>
      provider.acquire().then(async (session) => {
        await session.release();
        return args;
      });
    await git("warm");
    const local = await createSandboxServer({
      root: path.join(serverRoot, "templated"),
      token: TOKEN,
      templateRoot: templates.dir,
      gitProtocols: ["file"],
    });
    const templated = createHttpStreamSandboxProvider({ baseURL: local.url, auth });
    try {
      const fromFolder = await templated.acquire({ template: { folder: "app" } });
      expect(await fromFolder.client.readFile("src/index.js")).toBe("console.log(1)\n");
      await expect(templated.acquire({ template: { folder: "../.." } })).rejects.toMatchObject({
        code: "PATH_ESCAPE",
      });
      await expect(templated.acquire({ template: { folder: "nope" } })).rejects.toMatchObject({
        code: "NOT_FOUND",
      });
      const setup = await fromFolder.client.exec(
        "git init -q -b main r && cd r && echo hi > f && git add f && git -c user.email=a@b -c user.name=a commit -qm one",
      );
      expect(setup.exitCode).toBe(0);
      const fromGit = await templated.acquire({
        template: { git: `file://${path.join(fromFolder.root, "r")}` },
      });
      expect(await fromGit.client.readFile("f")).toBe("hi\n");
      await expect(provider.acquire({ template: { git: "file:///etc" } })).rejects.toMatchObject({
        code: "UNSUPPORTED",
      });
      await expect(provider.acquire({ template: { folder: "x" } })).rejects.toMatchObject({
        code: "UNSUPPORTED",
      });
      await expect(
        provider.acquire({ template: "weird" as unknown as "empty" }),
      ).rejects.toMatchObject({ code: "INVALID_INPUT" });
    } finally {
      templated.close();
      await local.close();
    }
  });

  it("destroys a sandbox left idle, and refuses more sandboxes than its limit", async () => {
    const small = await createSandboxServer({
      root: path.join(serverRoot, "small"),
      token: TOKEN,
      maxSandboxes: 2,
      idleTimeoutMs: 300,
    });
    const client = createHttpStreamSandboxProvider({ baseURL: small.url, auth });
    try {
      const one = await client.acquire();
      await client.acquire();
      const refused = await client.acquire().catch((error: unknown) => error);
      expect(isSandboxUnavailable(refused)).toBe(true);
      expect((refused as Error).message).toMatch(/limit of 2 sandboxes/);
      // A running command keeps its sandbox alive past the idle limit.
      expect((await one.client.exec("sleep 0.7; echo alive")).stdout).toBe("alive\n");
      await new Promise((resolve) => setTimeout(resolve, 900));
      expect(small.sandboxCount).toBe(0);
      await expect(one.client.readFile("x")).rejects.toSatisfy(isSandboxUnavailable);
    } finally {
      client.close();
      await small.close();
    }
  });

  it("cuts a command's time and output to the server's limits", async () => {
    const strict = await createSandboxServer({
      root: path.join(serverRoot, "strict"),
      token: TOKEN,
      maxExecTimeoutMs: 300,
      maxOutputBytes: 1_000,
    });
    const client = createHttpStreamSandboxProvider({ baseURL: strict.url, auth });
    try {
      const session = await client.acquire();
      const slow = await session.client.exec("sleep 5", { timeoutMs: 60_000 });
      expect(slow).toMatchObject({ timedOut: true, exitCode: null });
      let streamed = 0;
      const loud = await session.client.exec("head -c 100000 /dev/zero | tr '\\0' b", {
        maxOutputBytes: 1_000_000,
        onOutput: (_stream, text) => {
          streamed += text.length;
        },
      });
      expect(loud.truncated).toBe(true);
      expect(loud.stdout.length).toBeLessThan(1_100);
      expect(streamed).toBeLessThanOrEqual(1_000);
    } finally {
      client.close();
      await strict.close();
    }
  });

  it("keeps the token file and the other workspaces out of a command's sight", async () => {
    // Outside /tmp, which the OS sandbox replaces with an empty tmpfs anyway.
    const outsideTmp = await mkdtemp("/var/tmp/pleach-hidden-");
    cleanups.push(() => rm(outsideTmp, { recursive: true, force: true }));
    const tokenFile = path.join(outsideTmp, "token");
    await writeFile(tokenFile, TOKEN);
    const boxes = path.join(outsideTmp, "boxes");
    const hidden = await createSandboxServer({
      root: boxes,
      token: TOKEN,
      hiddenFiles: [tokenFile],
    });
    const client = createHttpStreamSandboxProvider({ baseURL: hidden.url, auth });
    try {
      const a = await client.acquire();
      const b = await client.acquire();
      await b.client.writeFile("mine.txt", "b");
      const peek = await a.client.exec(`cat ${tokenFile}; ls ${boxes}`);
      expect(peek.stdout).not.toContain(TOKEN);
      expect(peek.stdout.trim()).toBe(path.basename(a.root));
      expect(await readFile(tokenFile, "utf8")).toBe(TOKEN);
    } finally {
      client.close();
      await hidden.close();
    }
  });
});

describe("with the pool and the composite", () => {
  it("puts a fleet server first and falls back to local sandboxes while it is down", async () => {
    const fleetServer = await createSandboxServer({
      root: path.join(serverRoot, "fleet"),
      token: TOKEN,
    });
    const fleet = createHttpStreamSandboxProvider({ baseURL: fleetServer.url, auth });
    const composite = createSandboxComposite({
      members: [
        {
          name: "fleet",
          provider: createPooledSandboxProvider({ adapter: fleet, min: 1 }),
          priority: 1,
        },
        { name: "local", provider: createLocalSandboxProvider({ tempParent: serverRoot }) },
      ],
      cooldownMs: 60_000,
    });
    try {
      const remote = await composite.acquire();
      expect(remote.member).toBe("fleet");
      await remote.client.writeFile("a.txt", "fleet");
      expect((await remote.client.exec("cat a.txt")).stdout).toBe("fleet");
      await remote.release();
      await fleetServer.close();
      const local = await composite.acquire();
      expect(local.member).toBe("local");
      await local.client.writeFile("b.txt", "local");
      expect((await local.client.exec("cat b.txt")).stdout).toBe("local");
      await local.release();
      expect(composite.health().find((member) => member.name === "fleet")?.healthy).toBe(false);
    } finally {
      fleet.close();
      await fleetServer.close();
    }
  });
});

describe("hostile peers", () => {
  it("answers 401 to a missing or wrong token, without running anything", async () => {
    const attempts: Array<Record<string, string>> = [
      {},
      { authorization: "Bearer wrong-token-0123456789abcdef" },
      { authorization: `Basic ${TOKEN}` },
      { authorization: `Bearer ${TOKEN}x` },
      { authorization: `Bearer ${TOKEN.slice(0, -1)}` },
    ];
    for (const headers of attempts) {
      const answer = await raw({ route: "/v1/sandboxes", body: "{}", headers });
      expect(answer.status).toBe(401);
      expect(answer.json.error?.code).toBe("PERMISSION_DENIED");
    }
    const wrong = createHttpStreamSandboxProvider({
      baseURL: server.url,
      auth: () => ({ headers: { Authorization: "Bearer nope-nope-nope-nope-nope" } }),
    });
    await expect(wrong.acquire()).rejects.toMatchObject({ code: "PERMISSION_DENIED" });
    wrong.close();
    expect((await raw({ method: "GET", route: "/v1/health" })).status).toBe(401);
  });

  it("refuses oversized bodies, malformed JSON, unknown routes and ids", async () => {
    const headers = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
    const small = await createSandboxServer({
      root: path.join(serverRoot, "limits"),
      token: TOKEN,
      maxRequestBytes: 1024,
    });
    try {
      const big = await new Promise<number>((resolve, reject) => {
        const request = http.request(
          new URL("/v1/sandboxes", small.url),
          { method: "POST", headers },
          (response) => {
            response.resume();
            resolve(response.statusCode ?? 0);
          },
        );
        request.on("error", reject);
        request.end(Buffer.alloc(64 * 1024, 0x20));
      });
      expect(big).toBe(413);
      const client = createHttpStreamSandboxProvider({ baseURL: small.url, auth });
      const session = await client.acquire();
      await expect(session.client.writeFile("big.txt", "x".repeat(4096))).rejects.toMatchObject({
        code: "TOO_LARGE",
      });
      client.close();
    } finally {
      await small.close();
    }
    for (const body of ["{not json", "[1,2]", '"text"', "null"]) {
      const answer = await raw({ route: "/v1/sandboxes", body, headers });
      expect(answer.status).toBe(400);
      expect(answer.json.error?.code).toBe("INVALID_INPUT");
    }
    expect((await raw({ route: "/v1/elsewhere", body: "{}", headers })).status).toBe(404);
    const gone = await raw({ route: `/v1/sandboxes/${"0".repeat(32)}/read`, body: "{}", headers });
    expect(gone.status).toBe(410);
    expect((await raw({ route: "/v1/sandboxes/../../etc/read", body: "{}", headers })).status).toBe(
      404,
    );
    expect((await raw({ method: "GET", route: "/v1/sandboxes", headers })).status).toBe(405);
  });

  it("refuses paths and cwd that escape, with the local client's codes", async () => {
    const session = await provider.acquire();
    for (const escaping of ["../x", "/etc/passwd", `${session.root}/../x`]) {
      await expect(session.client.readFile(escaping)).rejects.toMatchObject({
        code: "PATH_ESCAPE",
      });
      await expect(session.client.writeFile(escaping, "x")).rejects.toMatchObject({
        code: "PATH_ESCAPE",
      });
      await expect(session.client.exec("pwd", { cwd: escaping })).rejects.toMatchObject({
        code: "PATH_ESCAPE",
      });
    }
    await expect(
      session.client.exec("env", { env: { "A=B": "x" } as Record<string, string> }),
    ).rejects.toMatchObject({ code: "INVALID_INPUT" });
    await session.release();
  });

  it("kills the command of a client that disconnects mid-stream", async () => {
    const session = await provider.acquire();
    const marker = `pleach-disconnect-${process.pid}`;
    const headers = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
    const request = http.request(new URL(`/v1/sandboxes/${session.id}/exec`, server.url), {
      method: "POST",
      headers,
    });
    const firstLine = new Promise<string>((resolve, reject) => {
      request.on("response", (response) => {
        response.setEncoding("utf8");
        response.once("data", (text: string) => resolve(text));
      });
      request.on("error", reject);
    });
    request.end(
      JSON.stringify({ command: `echo started; sleep 30; touch ${marker}; echo ${marker}` }),
    );
    expect(await firstLine).toContain("started");
    const running = spawnSync("pgrep", ["-f", `touch ${marker}`], { encoding: "utf8" });
    expect(running.stdout.trim()).not.toBe("");
    request.destroy();
    await new Promise((resolve) => setTimeout(resolve, 500));
    // Looked for from the host: the sandbox's own pid namespace would hide nothing useful.
    const left = spawnSync("pgrep", ["-f", `touch ${marker}`], { encoding: "utf8" });
    expect(left.stdout.trim()).toBe("");
    await session.release();
  });

  it("says so to running commands when it shuts down, and refuses calls afterwards", async () => {
    const stopping = await createSandboxServer({
      root: path.join(serverRoot, "stopping"),
      token: TOKEN,
      shutdownGraceMs: 2_000,
    });
    const client = createHttpStreamSandboxProvider({ baseURL: stopping.url, auth });
    const session = await client.acquire();
    const running = session.client.exec("sleep 30").catch((error: unknown) => error);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const started = performance.now();
    await stopping.close();
    const error = (await running) as { code: string; message: string };
    expect(error).toMatchObject({ code: "ABORTED" });
    expect(error.message).toMatch(/shutting down/);
    expect(performance.now() - started).toBeLessThan(3_000);
    const refused = await session.client.readFile("x").catch((failure: unknown) => failure);
    expect(isSandboxUnavailable(refused)).toBe(true);
    client.close();
  });
});
