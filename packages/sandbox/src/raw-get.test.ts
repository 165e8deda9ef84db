import http from "node:http";
import net from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { type RawGetOptions, RawGetter } from "./raw-get.js";
import { SpareBuffer } from "./spare-buffer.js";

const closers: Array<() => void> = [];
afterEach(() => {
  for (const close of closers.splice(0)) close();
});

/** A server on a free loopback port; counts the connections it accepted. */
async function serve(handler: (socket: net.Socket, request: string) => void) {
  const connections: net.Socket[] = [];
  const server = net.createServer((socket) => {
    connections.push(socket);
    let text = "";
    socket.on("data", (chunk) => {
      text += chunk.toString("latin1");
      const end = text.indexOf("\r\n\r\n");
      if (end < 0) return;
      const request = text.slice(0, end);
      text = text.slice(end + 4);
      handler(socket, request);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  closers.push(() => {
    for (const socket of connections) socket.destroy();
    server.close();
  });
  const getter = new RawGetter({ host: "127.0.0.1", port }, `127.0.0.1:${port}`, 1024 * 1024);
  closers.push(() => getter.close());
  return { getter, connections };
}

function options(extra: Partial<RawGetOptions> = {}): RawGetOptions {
  return {
    headers: { authorization: "Bearer t" },
    timeoutMs: 5_000,
    into: new SpareBuffer(1024 * 1024),
    timeoutError: () => new Error("timed out"),
    brokenError: (cause) => new Error(`broken: ${cause.message}`),
    ...extra,
  };
}

function answer(socket: net.Socket, status: number, body: Buffer, extra = ""): void {
  socket.write(`HTTP/1.1 ${status} X\r\ncontent-length: ${body.length}\r\n${extra}\r\n`, "latin1");
  socket.write(body);
}

describe("RawGetter", () => {
  it("reads a body byte-exact, in pieces, and keeps one connection for many requests", async () => {
    const payload = Buffer.from(Array.from({ length: 300_000 }, (_, index) => index % 256));
    const seen: string[] = [];
    const { getter, connections } = await serve((socket, request) => {
      seen.push(request);
      socket.write(`HTTP/1.1 200 OK\r\ncontent-length: ${payload.length}\r\n\r\n`);
      // Written in uneven pieces, the head split from the body.
      for (let at = 0; at < payload.length; at += 70_001) {
        socket.write(payload.subarray(at, at + 70_001));
      }
    });
    for (let round = 0; round < 5; round += 1) {
      const result = await getter.get("/v1/x?path=a%20b", options());
      expect(result?.status).toBe(200);
      expect(Buffer.compare(result?.body as Buffer, payload)).toBe(0);
    }
    expect(connections).toHaveLength(1);
    expect(seen[0]).toMatch(/^GET \/v1\/x\?path=a%20b HTTP\/1\.1\r\nhost: 127\.0\.0\.1:\d+\r\n/);
    expect(seen[0]).toContain("\r\nauthorization: Bearer t");
  });

  it("gives a non-2xx answer's body, and an empty 204", async () => {
    let count = 0;
    const { getter } = await serve((socket) => {
      count += 1;
      if (count === 1) answer(socket, 404, Buffer.from('{"error":{"code":"NOT_FOUND"}}'));
      else socket.write("HTTP/1.1 204 No Content\r\n\r\n");
    });
    const missing = await getter.get("/f", options());
    expect(missing?.status).toBe(404);
    expect(missing?.body.toString()).toContain("NOT_FOUND");
    expect(await getter.get("/f", options())).toMatchObject({ status: 204 });
  });

  it("asks again on a new connection when the server closed the kept one", async () => {
    const { getter, connections } = await serve((socket) => {
      answer(socket, 200, Buffer.from("hello"));
    });
    expect((await getter.get("/f", options()))?.body.toString()).toBe("hello");
    // The server drops the idle connection; the next request must not fail for it.
    connections[0]?.destroy();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect((await getter.get("/f", options()))?.body.toString()).toBe("hello");
    expect(connections).toHaveLength(2);
  });

  it("leaves to Node's client what it cannot carry: chunked bodies, no length, bad headers", async () => {
    let mode = "chunked";
    const { getter } = await serve((socket) => {
      if (mode === "chunked") {
        socket.write(
          "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
        );
      } else socket.end("HTTP/1.1 200 OK\r\nconnection: close\r\n\r\nhello");
    });
    expect(await getter.get("/f", options())).toBeUndefined();
    mode = "close-delimited";
    expect(await getter.get("/f", options())).toBeUndefined();
    expect(await getter.get("/f", options({ headers: { bad: "a\r\nx: y" } }))).toBeUndefined();
    expect(await getter.get("/f", options({ headers: { "bad name": "v" } }))).toBeUndefined();
    expect(await getter.get("/f x", options())).toBeUndefined();
  });

  it("refuses an answer longer than its Content-Length, and one cut short", async () => {
    const long = await serve((socket) => {
      socket.write("HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nhello");
    });
    await expect(long.getter.get("/f", options())).rejects.toThrow(/more than its Content-Length/);
    const short = await serve((socket) => {
      socket.end("HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nshort");
    });
    await expect(short.getter.get("/f", options())).rejects.toThrow(/broken/);
  });

  it("times out and aborts, closing the connection", async () => {
    const { getter, connections } = await serve(() => {
      // Never answers.
    });
    await expect(getter.get("/f", options({ timeoutMs: 100 }))).rejects.toThrow("timed out");
    const controller = new AbortController();
    const pending = getter.get("/f", options({ abortSignal: controller.signal }));
    setTimeout(() => controller.abort(), 50);
    await expect(pending).rejects.toMatchObject({ code: "ABORTED" });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(connections.every((socket) => socket.destroyed || socket.readableEnded)).toBe(true);
  });

  it("reads from a real Node HTTP server", async () => {
    const server = http.createServer((_request, response) => {
      response.writeHead(200, { "content-length": 3 });
      response.end("abc");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    closers.push(() => server.close());
    const { port } = server.address() as net.AddressInfo;
    const getter = new RawGetter({ host: "127.0.0.1", port }, `127.0.0.1:${port}`, 1024);
    closers.push(() => getter.close());
    expect((await getter.get("/", options()))?.body.toString()).toBe("abc");
  });

  it("uploads over a file channel only where the server offers one", async () => {
    const id = "a".repeat(32);
    const upgrade = { upgrade: "pleach-file-channel" };
    // A server with no file channel answers the route as unknown: the write must go another way.
    const chunked = false;
    const plain = http.createServer((_request, response) => {
      // With a length, then chunked (writeHead without one).
      if (chunked) response.writeHead(404, { "content-type": "application/json" }).end("{}");
      else response.writeHead(404, { "content-length": 2 }).end("{}");
    });
    await new Promise<void>((resolve) => plain.listen(0, "127.0.0.1", resolve));
    closers.push(() => plain.close());
    const plainPort = (plain.address() as net.AddressInfo).port;
    const withoutChannels = new RawGetter({ host: "127.0.0.1", port: plainPort }, "h", 1024);
    closers.push(() => withoutChannels.close());
    const body = Buffer.from("hello");
    expect(
      await withoutChannels.upload(
        "/v1/file-channel",
        upgrade.upgrade,
        id,
        "a.txt",
        body,
        options(),
      ),
    ).toBeUndefined();
    // Nor if it closes the connection without a word.
    const silent = await serve((socket) => socket.destroy());
    expect(
      await silent.getter.upload("/v1/file-channel", upgrade.upgrade, id, "a.txt", body, options()),
    ).toBeUndefined();
    // A server that refuses the channel answers, and that answer is the result.
    const { getter } = await serve((socket) => {
      socket.end("HTTP/1.1 401 Unauthorized\r\nconnection: close\r\ncontent-length: 2\r\n\r\n{}");
    });
    expect(
      await getter.upload("/v1/file-channel", upgrade.upgrade, id, "a.txt", body, options()),
    ).toMatchObject({ status: 401 });
    // One that takes it gets the frame and answers it; the channel is kept for the next write.
    const frames: string[] = [];
    const accepting = await serve((socket) => {
      socket.write("HTTP/1.1 101 Switching Protocols\r\n\r\n");
      socket.removeAllListeners("data");
      socket.on("data", (chunk) => {
        frames.push(chunk.toString("latin1"));
        socket.write("204 0\n");
      });
    });
    for (const name of ["dir/a b.txt", "é.txt"]) {
      const answer = await accepting.getter.upload(
        "/v1/file-channel",
        upgrade.upgrade,
        id,
        name,
        body,
        options(),
      );
      expect(answer).toMatchObject({ status: 204 });
    }
    expect(frames).toEqual([`PUT ${id} 5 dir%2Fa%20b.txt\nhello`, `PUT ${id} 5 %C3%A9.txt\nhello`]);
    expect(accepting.connections).toHaveLength(1);
  });
});
