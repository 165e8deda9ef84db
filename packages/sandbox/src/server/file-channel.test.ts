import { readFile } from "node:fs/promises";
import net from "node:net";
import path from "node:path";
import { makeTempDir } from "@pleach/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHttpStreamSandboxProvider } from "../http-provider.js";
import { FILE_CHANNEL_PROTOCOL, FILE_CHANNEL_ROUTE } from "./protocol.js";
import { createSandboxServer, type SandboxServer } from "./sandbox-server.js";

const TOKEN = "channel-token-0123456789abcdef";
const MAX_REQUEST_BYTES = 2 * 1024 * 1024;
let server: SandboxServer;
let readOnly: SandboxServer;
let sandboxId: string;
let sandboxRoot: string;
let readOnlyId: string;
const cleanups: Array<() => Promise<void>> = [];

async function acquire(on: SandboxServer): Promise<{ id: string; root: string }> {
  const provider = createHttpStreamSandboxProvider({
    baseURL: on.url,
    auth: () => ({ headers: { Authorization: `Bearer ${TOKEN}` } }),
  });
  cleanups.push(async () => provider.close());
  const session = await provider.acquire();
  return { id: path.basename(session.root), root: session.root };
}

beforeAll(async () => {
  const folder = await makeTempDir("pleach-channel-");
  cleanups.push(folder.cleanup);
  server = await createSandboxServer({
    root: path.join(folder.dir, "rw"),
    token: TOKEN,
    maxRequestBytes: MAX_REQUEST_BYTES,
  });
  readOnly = await createSandboxServer({
    root: path.join(folder.dir, "ro"),
    token: TOKEN,
    mode: "read-only",
  });
  ({ id: sandboxId, root: sandboxRoot } = await acquire(server));
  ({ id: readOnlyId } = await acquire(readOnly));
});

afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await server.close();
  await readOnly.close();
});

/** A raw connection to `to`, reading everything it is sent. */
async function connect(to: SandboxServer = server) {
  const socket = net.connect(Number(to.url.port), to.url.hostname);
  await new Promise((resolve) => socket.once("connect", resolve));
  let received = Buffer.alloc(0);
  let waiting: (() => void) | undefined;
  let ended = false;
  socket.on("data", (chunk: Buffer) => {
    received = Buffer.concat([received, chunk]);
    waiting?.();
  });
  socket.on("close", () => {
    ended = true;
    waiting?.();
  });
  /**
   * Wait until `ready(received)` holds or the connection closes; takes what was received, or
   * only its first `ready(received)` bytes when that is a number.
   */
  const until = async (ready: (bytes: Buffer) => boolean | number) => {
    let verdict = ready(received);
    while (verdict === false && !ended) {
      await new Promise<void>((resolve) => (waiting = resolve));
      verdict = ready(received);
    }
    const count = typeof verdict === "number" ? verdict : received.length;
    const taken = received.subarray(0, count);
    received = received.subarray(count);
    return taken;
  };
  return { socket, until, closed: () => ended };
}

function upgradeRequest(headers: Record<string, string> = {}, route = FILE_CHANNEL_ROUTE): string {
  const all = {
    host: "localhost",
    authorization: `Bearer ${TOKEN}`,
    connection: "upgrade",
    upgrade: FILE_CHANNEL_PROTOCOL,
    ...headers,
  };
  const lines = Object.entries(all).map(([name, value]) => `${name}: ${value}`);
  return `GET ${route} HTTP/1.1\r\n${lines.join("\r\n")}\r\n\r\n`;
}

/** An open channel on `to`. */
async function channel(to: SandboxServer = server) {
  const connection = await connect(to);
  connection.socket.write(upgradeRequest());
  const head = await connection.until((bytes) => bytes.includes("\r\n\r\n"));
  expect(head.toString("latin1")).toMatch(/^HTTP\/1\.1 101 /);
  /** Send one frame and read its answer: status and parsed body. */
  const send = async (id: string, filePath: string, body: Buffer, extra = Buffer.alloc(0)) => {
    connection.socket.write(
      Buffer.concat([
        Buffer.from(`PUT ${id} ${body.length} ${encodeURIComponent(filePath)}\n`),
        body,
        extra,
      ]),
    );
    const answer = await connection.until((bytes) => {
      const match = /^(\d{3}) (\d+)\n/.exec(bytes.toString("latin1", 0, 64));
      const length = match === null ? Number.POSITIVE_INFINITY : match[0].length + Number(match[2]);
      return bytes.length >= length ? length : false;
    });
    const match = /^(\d{3}) (\d+)\n/.exec(answer.toString("latin1", 0, 64));
    const text = answer.subarray(match?.[0].length ?? 0).toString("utf8");
    return { status: Number(match?.[1]), error: text === "" ? undefined : JSON.parse(text).error };
  };
  return { ...connection, send };
}

describe("file channel", () => {
  it("writes files byte-exact, one frame after another on one connection", async () => {
    const open = await channel();
    const bytes = Buffer.from(Array.from({ length: 1_200_000 }, (_, index) => (index * 7) % 256));
    expect(await open.send(sandboxId, "dir/all bytes.bin", bytes)).toEqual({ status: 204 });
    expect(await open.send(sandboxId, "empty.txt", Buffer.alloc(0))).toEqual({ status: 204 });
    expect(await open.send(sandboxId, "dir/all bytes.bin", Buffer.from("again"))).toEqual({
      status: 204,
    });
    expect(await readFile(path.join(sandboxRoot, "dir/all bytes.bin"), "utf8")).toBe("again");
    expect(await open.send(sandboxId, "big.bin", bytes)).toEqual({ status: 204 });
    expect(Buffer.compare(await readFile(path.join(sandboxRoot, "big.bin")), bytes)).toBe(0);
    expect((await readFile(path.join(sandboxRoot, "empty.txt"))).length).toBe(0);
    open.socket.destroy();
  });

  it("answers a refused write with its code and goes on", async () => {
    const open = await channel();
    expect(await open.send(sandboxId, "../escape.txt", Buffer.from("x"))).toMatchObject({
      error: { code: "PATH_ESCAPE" },
    });
    expect(await open.send(sandboxId, ".git/hooks/pre-commit", Buffer.from("x"))).toMatchObject({
      error: { code: "PROTECTED_PATH" },
    });
    expect(await open.send("0".repeat(32), "a.txt", Buffer.from("x"))).toMatchObject({
      status: 410,
      error: { code: "NOT_FOUND" },
    });
    expect(await open.send(sandboxId, "fine.txt", Buffer.from("fine"))).toEqual({ status: 204 });
    expect(open.closed()).toBe(false);
    open.socket.destroy();
    const frozen = await channel(readOnly);
    expect(await frozen.send(readOnlyId, "a.txt", Buffer.from("x"))).toMatchObject({
      error: { code: "READ_ONLY" },
    });
    frozen.socket.destroy();
  });

  it("refuses a frame over the size limit, a malformed head or extra bytes, and closes", async () => {
    const tooLarge = await channel();
    tooLarge.socket.write(`PUT ${sandboxId} ${MAX_REQUEST_BYTES + 1} big.bin\n`);
    const answer = await tooLarge.until((bytes) => bytes.includes("}}"));
    expect(answer.toString()).toMatch(/^413 \d+\n.*TOO_LARGE/s);
    await tooLarge.until(() => false);
    expect(tooLarge.closed()).toBe(true);

    const malformed = await channel();
    malformed.socket.write("DELETE everything\n");
    expect((await malformed.until(() => false)).toString()).toMatch(/^400 \d+\n.*not `PUT/s);
    expect(malformed.closed()).toBe(true);

    const extra = await channel();
    const written = await extra.send(sandboxId, "x.txt", Buffer.from("abc"), Buffer.from("more\n"));
    expect(written.status).toBe(204);
    expect((await extra.until(() => false)).toString()).toMatch(/^400 \d+\n.*before the answer/s);
    expect(extra.closed()).toBe(true);
    expect(await readFile(path.join(sandboxRoot, "x.txt"), "utf8")).toBe("abc");
  });

  it("opens only with the token, the protocol and the route", async () => {
    for (const [headers, route, status] of [
      [{ authorization: "Bearer wrong" }, FILE_CHANNEL_ROUTE, 401],
      [{ authorization: "" }, FILE_CHANNEL_ROUTE, 401],
      [{ upgrade: "websocket" }, FILE_CHANNEL_ROUTE, 400],
      [{}, "/v1/elsewhere", 404],
    ] as const) {
      const connection = await connect();
      connection.socket.write(upgradeRequest(headers, route));
      const answer = (await connection.until(() => false)).toString("latin1");
      expect(answer).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
      expect(answer).toContain('"error"');
      expect(connection.closed()).toBe(true);
    }
  });

  it("is closed when the server shuts down", async () => {
    const folder = await makeTempDir("pleach-channel-close-");
    cleanups.push(folder.cleanup);
    const closing = await createSandboxServer({ root: folder.dir, token: TOKEN });
    const open = await channel(closing);
    await closing.close();
    await open.until(() => false);
    expect(open.closed()).toBe(true);
  });

  it("carries the client's large writes, and its refusals keep their codes", async () => {
    const provider = createHttpStreamSandboxProvider({
      baseURL: server.url,
      auth: () => ({ headers: { Authorization: `Bearer ${TOKEN}` } }),
    });
    cleanups.push(async () => provider.close());
    const { client } = await provider.acquire();
    const bytes = Buffer.from(Array.from({ length: 300_000 }, (_, index) => (index * 13) % 256));
    for (const name of ["a.bin", "b.bin", "a.bin"]) {
      await client.writeFile(name, bytes.toString("base64"), { encoding: "base64" });
      expect(await client.readFile(name, { encoding: "base64" })).toBe(bytes.toString("base64"));
    }
    const big = "x".repeat(MAX_REQUEST_BYTES + 1);
    await expect(client.writeFile("too-big.txt", big)).rejects.toMatchObject({ code: "TOO_LARGE" });
    await expect(client.writeFile(".git/config", big.slice(0, 100_000))).rejects.toMatchObject({
      code: "PROTECTED_PATH",
    });
  });
});
