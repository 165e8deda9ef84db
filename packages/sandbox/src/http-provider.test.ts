import { spawnSync } from "node:child_process";
import { cp, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import http from "node:http";
import net from "node:net";
import path from "node:path";
import {
  createPooledSandboxProvider,
  createSandboxComposite,
  isSandboxUnavailable,
  type SandboxClient,
} from "@pleach/coding-agent/sandbox";
import { createReadFileTool } from "@pleach/coding-agent/tools";
import { describeSandboxClientContract, makeTempDir } from "@pleach/core/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  createHttpStreamSandboxProvider,
  type HttpSandboxSession,
  type HttpStreamSandboxProvider,
} from "./http-provider.js";
import { createLocalSandboxProvider } from "./local-provider.js";
import { createLocalSandbox } from "./local-sandbox.js";
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
  to = server,
}: {
  method?: string;
  route: string;
  body?: string | Buffer;
  headers?: Record<string, string>;
  to?: SandboxServer;
}): Promise<{
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  json: { error?: { code: string; message: string } } & Record<string, unknown>;
}> {
  return new Promise((resolve, reject) => {
    const request = http.request(new URL(route, to.url), { method, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => {
        const bytes = Buffer.concat(chunks);
        const isJson = response.headers["content-type"] === "application/json";
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          body: bytes,
          json: isJson && bytes.length > 0 ? JSON.parse(bytes.toString("utf8")) : {},
        });
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
      // The clone runs inside the new sandbox, which sees no other sandbox's workspace, nor the
      // host's /tmp (it has a private one): the repository is copied where it can see it.
      await expect(
        templated.acquire({ template: { git: `file://${path.join(fromFolder.root, "r")}` } }),
      ).rejects.toMatchObject({ code: "COMMAND_FAILED" });
      const visible = await mkdtemp("/var/tmp/pleach-template-repo-");
      cleanups.push(() => rm(visible, { recursive: true, force: true }));
      await cp(path.join(fromFolder.root, "r"), visible, { recursive: true });
      const fromGit = await templated.acquire({ template: { git: `file://${visible}` } });
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
    // Bodies are checked at the edge: the 400 says what was wrong and what to send.
    const box = await provider.acquire();
    for (const [route, body, wrong] of [
      ["/v1/sandboxes", '{"templat":"empty"}', /templat/],
      ["/v1/sandboxes", '{"template":{"folder":7}}', /template/],
      [`/v1/sandboxes/${box.id}/exec`, '{"command":7}', /command: .*expected string/],
      [`/v1/sandboxes/${box.id}/exec`, '{"command":"true","env":{"A":1}}', /env\.A/],
      [`/v1/sandboxes/${box.id}/exec`, '{"command":"true","timeout":5}', /timeout/],
      [`/v1/sandboxes/${box.id}/exec`, "", /command/],
    ] as const) {
      const answer = await raw({ route, body, headers });
      expect([body, answer.status, answer.json.error?.code]).toEqual([body, 400, "INVALID_INPUT"]);
      expect(answer.json.error?.message).toMatch(wrong);
      expect(answer.json.error?.message).toMatch(/; send \{ "/);
    }
    await box.release();
    expect((await raw({ route: "/v1/elsewhere", body: "{}", headers })).status).toBe(404);
    const gone = await raw({
      method: "GET",
      route: `/v1/sandboxes/${"0".repeat(32)}/file?path=x`,
      headers,
    });
    expect(gone.status).toBe(410);
    expect(gone.json.error?.code).toBe("NOT_FOUND");
    expect((await raw({ route: "/v1/sandboxes/../../etc/file", body: "{}", headers })).status).toBe(
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

describe("files as raw bytes", () => {
  const bearer = { authorization: `Bearer ${TOKEN}` };
  const octets = { ...bearer, "content-type": "application/octet-stream" };
  let session: HttpSandboxSession;
  const fileRoute = (id: string, filePath: string) =>
    `/v1/sandboxes/${id}/file?${new URLSearchParams({ path: filePath })}`;

  beforeAll(async () => {
    session = await provider.acquire();
  });
  afterAll(() => session.release());

  it("round-trips more than 1 MiB of every byte value exactly, the file's own bytes on the wire", async () => {
    const bytes = Buffer.alloc(1024 * 1024 + 4099);
    // 167 is odd, so every byte value comes round, in an order that is not a 256-byte period.
    for (let index = 0; index < bytes.length; index += 1) {
      bytes[index] = (index * 167 + (index >> 12)) & 0xff;
    }
    expect(new Set(bytes).size).toBe(256);
    await session.client.writeFile("bin/all.dat", bytes.toString("base64"), { encoding: "base64" });
    expect((await readFile(path.join(session.root, "bin/all.dat"))).equals(bytes)).toBe(true);
    expect(await session.client.readFile("bin/all.dat", { encoding: "base64" })).toBe(
      bytes.toString("base64"),
    );
    const answer = await raw({
      method: "GET",
      route: fileRoute(session.id, "bin/all.dat"),
      headers: bearer,
    });
    expect(answer.status).toBe(200);
    expect(answer.headers["content-type"]).toBe("application/octet-stream");
    expect(Number(answer.headers["content-length"])).toBe(bytes.length);
    expect(answer.body.equals(bytes)).toBe(true);
  });

  it.each([
    ["ASCII", Buffer.from("plain text\n".repeat(10_000))],
    [
      "UTF-8 with a BOM and 2-, 3- and 4-byte characters",
      Buffer.from("\uFEFFé€𝄞 ünïcödé\r\n".repeat(5_000)),
    ],
    [
      "bytes that are not UTF-8",
      Buffer.from([0xff, 0xfe, 0x00, 0xc3, 0x28, 0xed, 0xa0, 0x80, 0xef, 0xbb, 0xbf, 0x80, 0x41]),
    ],
    ["no bytes", Buffer.alloc(0)],
  ])("writes a raw body of %s as exactly those bytes", async (_kind, bytes) => {
    const put = await raw({
      method: "PUT",
      route: fileRoute(session.id, "raw.dat"),
      body: bytes,
      headers: octets,
    });
    expect(put.status).toBe(204);
    expect((await readFile(path.join(session.root, "raw.dat"))).equals(bytes)).toBe(true);
    const get = await raw({
      method: "GET",
      route: fileRoute(session.id, "raw.dat"),
      headers: bearer,
    });
    expect(get.body.equals(bytes)).toBe(true);
    expect(await session.client.readFile("raw.dat")).toBe(bytes.toString("utf8"));
  });

  it("writes a chunked body (no Content-Length) exactly", async () => {
    const parts = [Buffer.from("first part, "), Buffer.alloc(100_000, 0xe9), Buffer.from("end")];
    const status = await new Promise<number>((resolve, reject) => {
      const request = http.request(
        new URL(fileRoute(session.id, "chunked.dat"), server.url),
        { method: "PUT", headers: octets },
        (response) => {
          response.resume();
          resolve(response.statusCode ?? 0);
        },
      );
      request.on("error", reject);
      for (const part of parts) request.write(part);
      request.end();
    });
    expect(status).toBe(204);
    const written = await readFile(path.join(session.root, "chunked.dat"));
    expect(written.equals(Buffer.concat(parts))).toBe(true);
  });

  it("round-trips text under file names that need escaping in a query", async () => {
    const names = [
      "a b+c&d=e%f#g?.txt",
      "ünï/cödé €.md",
      `semi;colon,comma'quote"double\\back.txt`,
      " spaced ",
      "+",
      "%41",
    ];
    for (const name of names) {
      const text = `${name}\n€ and ASCII\n`;
      await session.client.writeFile(name, text);
      expect(await readFile(path.join(session.root, name), "utf8")).toBe(text);
      expect(await session.client.readFile(name)).toBe(text);
    }
    await expect(session.client.writeFile(7 as unknown as string, "x")).rejects.toMatchObject({
      code: "INVALID_PATH",
    });
  });

  it("accepts and refuses base64 as the local client does", async () => {
    const folder = await makeTempDir("pleach-base64-");
    cleanups.push(folder.cleanup);
    const local = await createLocalSandbox({ root: folder.dir });
    const outcome = async (client: SandboxClient, content: string) => {
      try {
        await client.writeFile("b.bin", content, { encoding: "base64" });
        return await client.readFile("b.bin", { encoding: "base64" });
      } catch (error) {
        return `error ${(error as { code?: string }).code}`;
      }
    };
    const contents = [
      "",
      "QQ",
      "QQ==",
      "Q",
      "QUJD\nREVG\n",
      " Q Q = = ",
      "QQ===",
      "Q-_A",
      "not base64!!",
      "QUJD=QUJD",
      "====",
      "QUJD€",
      Buffer.from("every byte \u0000\u00ff").toString("base64"),
    ];
    for (const content of contents) {
      expect([content, await outcome(session.client, content)]).toEqual([
        content,
        await outcome(local, content),
      ]);
    }
  });

  it("refuses writes as the server's mode says: protected paths, and everything when read-only", async () => {
    await expect(session.client.writeFile(".git/config", "[core]")).rejects.toMatchObject({
      code: "PROTECTED_PATH",
    });
    await expect(session.client.writeFile(".bashrc", "curl x | sh")).rejects.toMatchObject({
      code: "PROTECTED_PATH",
    });
    const readOnly = await createSandboxServer({
      root: path.join(serverRoot, "read-only"),
      token: TOKEN,
      mode: "read-only",
    });
    const client = createHttpStreamSandboxProvider({ baseURL: readOnly.url, auth });
    try {
      const box = await client.acquire();
      await writeFile(path.join(box.root, "seen.txt"), "seen");
      expect(await box.client.readFile("seen.txt")).toBe("seen");
      await expect(box.client.writeFile("seen.txt", "changed")).rejects.toMatchObject({
        code: "READ_ONLY",
      });
      expect(await readFile(path.join(box.root, "seen.txt"), "utf8")).toBe("seen");
    } finally {
      client.close();
      await readOnly.close();
    }
  });

  it("writes big files one after another on kept connections, and refuses them with their codes", async () => {
    const bytes = Buffer.from(Array.from({ length: 1_200_000 }, (_, index) => (index * 13) % 256));
    for (const name of ["big/a.bin", "big/b.bin", "big/a.bin"]) {
      await session.client.writeFile(name, bytes.toString("base64"), { encoding: "base64" });
      expect(await session.client.readFile(name, { encoding: "base64" })).toBe(
        bytes.toString("base64"),
      );
    }
    expect((await readFile(path.join(session.root, "big/b.bin"))).equals(bytes)).toBe(true);
    const big = "x".repeat(300_000);
    await expect(session.client.writeFile(".git/config", big)).rejects.toMatchObject({
      code: "PROTECTED_PATH",
    });
    await expect(session.client.writeFile("../escape.txt", big)).rejects.toMatchObject({
      code: "PATH_ESCAPE",
    });
    const gone = await raw({
      method: "PUT",
      route: fileRoute("0".repeat(32), "a.txt"),
      body: Buffer.from(big),
      headers: octets,
    });
    expect([gone.status, gone.json.error?.code]).toEqual([410, "NOT_FOUND"]);
    await session.client.writeFile("big/after.txt", "fine");
    expect(await session.client.readFile("big/after.txt")).toBe("fine");
  });

  it("keeps parallel calls apart on the kept connections", async () => {
    const texts = Array.from({ length: 24 }, (_, index) => `${index}:`.repeat(1 + index * 997));
    await Promise.all(texts.map((text, index) => session.client.writeFile(`p/${index}`, text)));
    const read = await Promise.all(texts.map((_, index) => session.client.readFile(`p/${index}`)));
    expect(read).toEqual(texts);
  });

  it("refuses a raw body over the limit with TOO_LARGE without reading it all, and keeps serving", async () => {
    const small = await createSandboxServer({
      root: path.join(serverRoot, "raw-limits"),
      token: TOKEN,
      maxRequestBytes: 64 * 1024,
    });
    const client = createHttpStreamSandboxProvider({ baseURL: small.url, auth });
    try {
      const box = await client.acquire();
      // 1 GiB declared, 1 KiB sent and the rest never: the answer cannot wait for the body.
      let pending: http.ClientRequest | undefined;
      const declared = await new Promise<{ status: number; json: { error?: { code: string } } }>(
        (resolve, reject) => {
          pending = http.request(
            new URL(fileRoute(box.id, "huge.bin"), small.url),
            { method: "PUT", headers: { ...octets, "content-length": String(1024 ** 3) } },
            (response) => {
              const chunks: Buffer[] = [];
              response.on("data", (chunk: Buffer) => chunks.push(chunk));
              response.on("end", () =>
                resolve({
                  status: response.statusCode ?? 0,
                  json: JSON.parse(Buffer.concat(chunks).toString("utf8")),
                }),
              );
            },
          );
          pending.on("error", reject);
          pending.write(Buffer.alloc(1024, 0x61));
        },
      );
      pending?.destroy();
      expect(declared).toMatchObject({ status: 413, json: { error: { code: "TOO_LARGE" } } });
      // A chunked body has no length to refuse on: it is cut as soon as it passes the limit.
      const chunked = await new Promise<number>((resolve, reject) => {
        const request = http.request(
          new URL(fileRoute(box.id, "huge.bin"), small.url),
          { method: "PUT", headers: octets },
          (response) => {
            response.resume();
            resolve(response.statusCode ?? 0);
          },
        );
        request.on("error", reject);
        for (let index = 0; index < 8; index += 1) request.write(Buffer.alloc(16 * 1024, 0x62));
        request.end();
      });
      expect(chunked).toBe(413);
      await expect(box.client.writeFile("big.txt", "x".repeat(100_000))).rejects.toMatchObject({
        code: "TOO_LARGE",
      });
      await expect(stat(path.join(box.root, "huge.bin"))).rejects.toThrow();
      await expect(stat(path.join(box.root, "big.txt"))).rejects.toThrow();
      expect(await client.health()).toMatchObject({ sandboxes: 1 });
      await box.client.writeFile("fits.txt", "y".repeat(60 * 1024));
      expect(await box.client.readFile("fits.txt")).toBe("y".repeat(60 * 1024));
    } finally {
      client.close();
      await small.close();
    }
  });

  it("refuses a read over its maxBytes from the file's size, and read_file says so in its own words", async () => {
    const bytes = Buffer.alloc(5_000, 0x61);
    await writeFile(path.join(session.root, "sized.bin"), bytes);
    expect(
      await session.client.readFile("sized.bin", { encoding: "base64", maxBytes: 5_000 }),
    ).toBe(bytes.toString("base64"));
    await expect(
      session.client.readFile("sized.bin", { encoding: "base64", maxBytes: 4_999 }),
    ).rejects.toMatchObject({ code: "TOO_LARGE", details: { bytes: 5_000, maxBytes: 4_999 } });
    const answer = await raw({
      method: "GET",
      route: `${fileRoute(session.id, "sized.bin")}&maxBytes=0`,
      headers: bearer,
    });
    expect([answer.status, answer.json.error?.code]).toEqual([413, "TOO_LARGE"]);
    const tool = createReadFileTool(session.client, { maxBase64Bytes: 1_000, maxTextBytes: 2_000 });
    await expect(tool.execute({ path: "sized.bin", encoding: "base64" })).rejects.toMatchObject({
      code: "TOO_LARGE",
      message: expect.stringMatching(
        /^sized\.bin has 5,000 bytes; read_file returns at most 1,000 bytes as base64\./,
      ),
    });
    await expect(tool.execute({ path: "sized.bin" })).rejects.toMatchObject({
      code: "TOO_LARGE",
      message: expect.stringMatching(
        /^sized\.bin has 5,000 bytes; read_file reads text files of at most 2,000 bytes\./,
      ),
    });
  });

  it("sends a read's maxBytes on the wire, and refuses one no server would take before sending", async () => {
    const id = "a".repeat(32);
    const targets: string[] = [];
    const fake = http.createServer((request, response) => {
      targets.push(`${request.method} ${request.url}`);
      const [status, body] =
        request.method === "POST"
          ? [201, { id, root: "/workspace" }]
          : [
              413,
              {
                error: {
                  code: "TOO_LARGE",
                  message: "big.bin has 5000 bytes, more than the 1000 this sandbox reads",
                  details: { bytes: 5_000, maxBytes: 1_000 },
                },
              },
            ];
      const text = JSON.stringify(body);
      response.writeHead(status, {
        "content-type": "application/json",
        "content-length": Buffer.byteLength(text),
      });
      response.end(text);
    });
    await new Promise<void>((resolve) => fake.listen(0, "127.0.0.1", resolve));
    const { port } = fake.address() as net.AddressInfo;
    const client = createHttpStreamSandboxProvider({ baseURL: `http://127.0.0.1:${port}/`, auth });
    try {
      const box = await client.acquire();
      await expect(
        box.client.readFile("big.bin", { encoding: "base64", maxBytes: 1_000 }),
      ).rejects.toMatchObject({ code: "TOO_LARGE", details: { bytes: 5_000, maxBytes: 1_000 } });
      for (const maxBytes of [undefined, Number.POSITIVE_INFINITY]) {
        await expect(box.client.readFile("big.bin", { maxBytes })).rejects.toMatchObject({
          code: "TOO_LARGE",
        });
      }
      for (const maxBytes of [-1, 1.5, Number.NaN, 2 ** 53]) {
        await expect(box.client.readFile("big.bin", { maxBytes })).rejects.toMatchObject({
          code: "INVALID_INPUT",
          message: expect.stringContaining("maxBytes must be a whole number of bytes"),
        });
      }
      expect(targets).toEqual([
        "POST /v1/sandboxes",
        `GET /v1/sandboxes/${id}/file?path=big.bin&maxBytes=1000`,
        `GET /v1/sandboxes/${id}/file?path=big.bin`,
        `GET /v1/sandboxes/${id}/file?path=big.bin`,
      ]);
    } finally {
      client.close();
      await new Promise((resolve) => fake.close(resolve));
    }
  });

  it("refuses the file route without the right token, and reads or writes nothing", async () => {
    await session.client.writeFile("secret.txt", "the sandbox's secret");
    const attempts: Array<Record<string, string>> = [
      {},
      { authorization: "Bearer wrong-token-0123456789abcdef" },
      { authorization: `Bearer ${TOKEN}x` },
      { authorization: `Basic ${TOKEN}` },
    ];
    for (const headers of attempts) {
      const put = await raw({
        method: "PUT",
        route: fileRoute(session.id, "intruder.txt"),
        body: "pwned",
        headers: { ...headers, "content-type": "application/octet-stream" },
      });
      expect(put.status).toBe(401);
      expect(put.json.error?.code).toBe("PERMISSION_DENIED");
      expect(put.headers["www-authenticate"]).toMatch(/^Bearer /);
      const get = await raw({ method: "GET", route: fileRoute(session.id, "secret.txt"), headers });
      expect(get.status).toBe(401);
      expect(get.json.error?.code).toBe("PERMISSION_DENIED");
      expect(get.body.toString("utf8")).not.toContain("secret");
    }
    await expect(stat(path.join(session.root, "intruder.txt"))).rejects.toThrow();
  });

  it("refuses paths that escape the workspace on the file route", async () => {
    const outside = await makeTempDir("pleach-outside-raw-");
    cleanups.push(outside.cleanup);
    const escaping = [
      "../x",
      "/etc/passwd",
      `${session.root}/../x`,
      `../${path.basename(session.root)}-evil/x`,
      path.join(outside.dir, "planted.txt"),
    ];
    for (const filePath of escaping) {
      const get = await raw({
        method: "GET",
        route: fileRoute(session.id, filePath),
        headers: bearer,
      });
      expect([filePath, get.status, get.json.error?.code]).toEqual([filePath, 400, "PATH_ESCAPE"]);
      const put = await raw({
        method: "PUT",
        route: fileRoute(session.id, filePath),
        body: "pwned",
        headers: octets,
      });
      expect([filePath, put.status, put.json.error?.code]).toEqual([filePath, 400, "PATH_ESCAPE"]);
    }
    expect(await readdir(outside.dir)).toEqual([]);
    const nul = await raw({ method: "GET", route: fileRoute(session.id, "a\0b"), headers: bearer });
    expect(nul.json.error?.code).toBe("INVALID_PATH");
  });

  it("refuses a malformed query, body type or method with a JSON error that says what is wrong", async () => {
    const base = `/v1/sandboxes/${session.id}/file`;
    const cases: Array<{
      method: string;
      query: string;
      headers?: Record<string, string>;
      status: number;
      code: string;
      message: RegExp;
    }> = [
      { method: "GET", query: "", status: 400, code: "INVALID_INPUT", message: /\?path=FILE/ },
      { method: "PUT", query: "", status: 400, code: "INVALID_INPUT", message: /\?path=FILE/ },
      {
        method: "GET",
        query: "?path=a.txt&path=b",
        status: 400,
        code: "INVALID_INPUT",
        message: /twice/,
      },
      { method: "GET", query: "?path", status: 400, code: "INVALID_INPUT", message: /no value/ },
      ...["-1", "1.5", "", "1e3", "0x10", "99999999999999999"].map((value) => ({
        method: "GET",
        query: `?path=a.txt&maxBytes=${value}`,
        status: 400,
        code: "INVALID_INPUT",
        message: /maxBytes must be a whole number of bytes/,
      })),
      {
        method: "GET",
        query: "?path=a.txt&maxBytes",
        status: 400,
        code: "INVALID_INPUT",
        message: /maxBytes query parameter has no value/,
      },
      {
        method: "GET",
        query: "?maxBytes=1&path=a.txt&maxBytes=2",
        status: 400,
        code: "INVALID_INPUT",
        message: /maxBytes query parameter is given twice/,
      },
      {
        method: "PUT",
        query: "?path=a.txt&maxBytes=10",
        status: 400,
        code: "INVALID_INPUT",
        message: /unknown query parameter "maxBytes": a file write takes only \?path=FILE/,
      },
      {
        method: "PUT",
        query: "?path=a.txt&encoding=base64",
        status: 400,
        code: "INVALID_INPUT",
        message: /unknown query parameter "encoding"/,
      },
      {
        method: "GET",
        query: "?path=%E0%A4%A",
        status: 400,
        code: "INVALID_INPUT",
        message: /malformed/,
      },
      {
        method: "PUT",
        query: "?path=%FF.txt",
        status: 400,
        code: "INVALID_INPUT",
        message: /malformed/,
      },
      {
        method: "PUT",
        query: "?path=a.txt",
        headers: { "content-type": "application/json" },
        status: 415,
        code: "INVALID_INPUT",
        message: /application\/octet-stream/,
      },
      {
        method: "PUT",
        query: "?path=a.txt",
        headers: { "content-encoding": "gzip" },
        status: 415,
        code: "INVALID_INPUT",
        message: /Content-Encoding "gzip"/,
      },
      {
        method: "POST",
        query: "?path=a.txt",
        status: 405,
        code: "UNSUPPORTED",
        message: /GET, PUT/,
      },
    ];
    for (const { method, query, headers, status, code, message } of cases) {
      const answer = await raw({
        method,
        route: `${base}${query}`,
        body: method === "GET" ? undefined : "data",
        headers: { ...octets, ...headers },
      });
      expect([method, query, answer.status, answer.json.error?.code]).toEqual([
        method,
        query,
        status,
        code,
      ]);
      expect(answer.json.error?.message).toMatch(message);
    }
    await expect(stat(path.join(session.root, "a.txt"))).rejects.toThrow();
    // The JSON routes this one replaced are gone.
    for (const gone of ["read", "write?args=%7B%22path%22%3A%22a.txt%22%7D"]) {
      const answer = await raw({
        route: `/v1/sandboxes/${session.id}/${gone}`,
        body: '{"path":"a.txt"}',
        headers: { ...bearer, "content-type": "application/json" },
      });
      expect([gone, answer.status, answer.json.error?.code]).toEqual([gone, 404, "UNSUPPORTED"]);
    }
  });

  it("answers a request that is not even HTTP with a JSON error", async () => {
    const { port } = server.url;
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(Number(port), server.url.hostname, () => {
        socket.end(
          `PUT ${fileRoute(session.id, "x.txt")} HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${TOKEN}\r\ncontent-length: twelve\r\n\r\n`,
        );
      });
      let text = "";
      socket.setEncoding("utf8");
      socket.on("data", (chunk: string) => {
        text += chunk;
      });
      socket.on("end", () => resolve(text));
      socket.on("error", reject);
    });
    const [head, body] = answer.split("\r\n\r\n");
    expect(head).toMatch(/^HTTP\/1\.1 400 /);
    expect(head).toMatch(/content-type: application\/json/i);
    expect(JSON.parse(body ?? "")).toMatchObject({ error: { code: "INVALID_INPUT" } });
    await expect(stat(path.join(session.root, "x.txt"))).rejects.toThrow();
  });

  it("follows no redirect: a 3xx is an error, and its Location is never asked", async () => {
    let followed = 0;
    const elsewhere = http.createServer((_request, response) => {
      followed += 1;
      response.writeHead(200).end("{}");
    });
    await new Promise<void>((resolve) => elsewhere.listen(0, "127.0.0.1", resolve));
    const target = `http://127.0.0.1:${(elsewhere.address() as net.AddressInfo).port}`;
    const redirecting = http.createServer((request, response) => {
      const location = `${target}${request.url}`;
      if (request.method === "POST" && request.url === "/v1/sandboxes") {
        response.writeHead(201, { "content-type": "application/json" });
        response.end(JSON.stringify({ id: "e".repeat(32), root: "/nowhere" }));
        return;
      }
      response.writeHead(307, { location }).end();
    });
    await new Promise<void>((resolve) => redirecting.listen(0, "127.0.0.1", resolve));
    const { port } = redirecting.address() as net.AddressInfo;
    const client = createHttpStreamSandboxProvider({ baseURL: `http://127.0.0.1:${port}/`, auth });
    try {
      const box = await client.acquire();
      for (const call of [
        () => box.client.readFile("a.txt"),
        () => box.client.writeFile("a.txt", "x"),
        () => box.client.exec("true"),
      ]) {
        await expect(call()).rejects.toMatchObject({
          code: "INTERNAL",
          message: expect.stringMatching(/answered HTTP 307 without a pleach error/),
        });
      }
      expect(followed).toBe(0);
    } finally {
      client.close();
      await new Promise((resolve) => redirecting.close(resolve));
      await new Promise((resolve) => elsewhere.close(resolve));
    }
  });

  it("takes an answer cut short for an unavailable server", async () => {
    const fake = http.createServer((request, response) => {
      if (request.method === "POST") {
        response.writeHead(201, { "content-type": "application/json" });
        response.end(JSON.stringify({ id: "f".repeat(32), root: "/nowhere" }));
        return;
      }
      response.writeHead(200, {
        "content-type": "application/octet-stream",
        "content-length": 100_000,
      });
      response.write(Buffer.alloc(1000), () => response.socket?.destroy());
    });
    await new Promise<void>((resolve) => fake.listen(0, "127.0.0.1", resolve));
    const address = fake.address() as { port: number };
    const client = createHttpStreamSandboxProvider({
      baseURL: `http://127.0.0.1:${address.port}/`,
      auth,
    });
    try {
      const box = await client.acquire();
      await expect(box.client.readFile("x")).rejects.toSatisfy(isSandboxUnavailable);
    } finally {
      client.close();
      await new Promise((resolve) => fake.close(resolve));
    }
  });
});
