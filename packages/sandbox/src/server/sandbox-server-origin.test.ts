// The sandbox server's DNS-rebinding guard: Host and Origin are checked before the token, on plain
// requests and on upgrade requests, over TCP and over a Unix socket.
import http from "node:http";
import path from "node:path";
import { makeTempDir } from "@pleach/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHttpStreamSandboxProvider } from "../http-provider.js";
import { createSandboxServer, type SandboxServer } from "./sandbox-server.js";

const TOKEN = "origin-token-0123456789abcdef";
const cleanups: Array<() => Promise<void>> = [];
let server: SandboxServer;
let allowing: SandboxServer;

beforeAll(async () => {
  const folder = await makeTempDir("pleach-server-origin-");
  cleanups.push(folder.cleanup);
  server = await createSandboxServer({ root: path.join(folder.dir, "a"), token: TOKEN });
  allowing = await createSandboxServer({
    root: path.join(folder.dir, "b"),
    token: TOKEN,
    allowedHosts: ["sandbox.internal", ".fleet.example"],
  });
  cleanups.unshift(
    () => server.close(),
    () => allowing.close(),
  );
});

afterAll(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

interface Answer {
  status: number;
  body: string;
  headers: http.IncomingHttpHeaders;
}

/** A GET of the health route with exactly these headers (the token unless `token: false`). */
function health({
  to = server,
  host,
  origin,
  token = true,
  socketPath,
}: {
  to?: SandboxServer;
  host?: string;
  origin?: string;
  token?: boolean;
  socketPath?: string;
}): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (host !== undefined) headers.host = host;
  if (origin !== undefined) headers.origin = origin;
  if (token) headers.authorization = `Bearer ${TOKEN}`;
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        ...(socketPath === undefined
          ? { host: to.url.hostname, port: to.url.port }
          : { socketPath }),
        path: "/v1/health",
        headers,
        agent: false,
      },
      (response) => {
        let body = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => {
          body += chunk;
        });
        response.on("end", () =>
          resolve({ status: response.statusCode ?? 0, body, headers: response.headers }),
        );
      },
    );
    request.on("error", reject);
    request.end();
  });
}

describe("sandbox server Host and Origin checks", () => {
  it("answers requests addressed to loopback, with any port", async () => {
    const port = server.url.port;
    for (const host of [
      `127.0.0.1:${port}`,
      `localhost:${port}`,
      "localhost",
      "127.0.0.2:1",
      "[::1]:8700",
    ]) {
      const answer = await health({ host });
      expect(answer.status, host).toBe(200);
      expect(JSON.parse(answer.body), host).toMatchObject({ ok: true });
    }
    const browser = await health({ host: "localhost", origin: "http://localhost:5173" });
    expect(browser.status).toBe(200);
  });

  it("refuses a foreign Host with 403 and the reason, before the token is looked at", async () => {
    for (const token of [true, false]) {
      const answer = await health({ host: "evil.example.com", token });
      expect(answer.status).toBe(403);
      expect(answer.headers["www-authenticate"]).toBeUndefined();
      const { error } = JSON.parse(answer.body);
      expect(error).toMatchObject({
        code: "PERMISSION_DENIED",
        details: {
          refused: "Host",
          value: "evil.example.com",
          allowWith: "--allow-host evil.example.com",
        },
      });
      expect(error.message).toMatch(/refused Host "evil\.example\.com"/);
      expect(error.message).toMatch(/--allow-host evil\.example\.com/);
    }
    // The token check still follows for a request the guard lets through.
    expect((await health({ host: "localhost", token: false })).status).toBe(401);
  });

  it("refuses a foreign Origin with 403 even when the Host is loopback", async () => {
    const answer = await health({
      host: `127.0.0.1:${server.url.port}`,
      origin: "http://evil.example.com",
    });
    expect(answer.status).toBe(403);
    const { error } = JSON.parse(answer.body);
    expect(error.details).toMatchObject({ refused: "Origin", value: "http://evil.example.com" });
    expect(error.message).toMatch(/browser page from evil\.example\.com/);
    expect((await health({ host: "localhost", origin: "null" })).status).toBe(403);
  });

  it("takes no upgrade: one asked for is a plain request, refused for a foreign Host first", async () => {
    const upgrade = (host: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const request = http.request({
          host: server.url.hostname,
          port: server.url.port,
          path: "/v1/health",
          headers: {
            host,
            connection: "upgrade",
            upgrade: "websocket",
            authorization: `Bearer ${TOKEN}`,
          },
          agent: false,
        });
        request.on("upgrade", () => reject(new Error("upgraded")));
        request.on("response", (response) => {
          let body = "";
          response.setEncoding("utf8");
          response.on("data", (chunk: string) => {
            body += chunk;
          });
          response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
        });
        request.on("error", reject);
        request.end();
      });
    const refused = await upgrade("evil.example.com");
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.body).error.details.refused).toBe("Host");
    const plain = await upgrade("localhost");
    expect(plain.status).toBe(200);
    expect(JSON.parse(plain.body)).toMatchObject({ ok: true });
  });

  it("accepts the hosts given in allowedHosts, in Host and in Origin", async () => {
    for (const host of ["sandbox.internal:8700", "fleet.example", "a.fleet.example:1"]) {
      expect((await health({ to: allowing, host })).status, host).toBe(200);
      const origin = `https://${host}`;
      expect((await health({ to: allowing, host: "localhost", origin })).status, host).toBe(200);
    }
    expect((await health({ to: allowing, host: "localhost" })).status).toBe(200);
    expect((await health({ to: allowing, host: "other.internal" })).status).toBe(403);
    // Without the option, the same names are refused.
    expect((await health({ host: "sandbox.internal" })).status).toBe(403);
    await expect(
      createSandboxServer({ root: "/tmp/unused", token: TOKEN, allowedHosts: ["a.test:80"] }),
    ).rejects.toThrow(/without a port/);
  });

  it("the HTTP client is answered: it sends the Host of its base URL", async () => {
    const provider = createHttpStreamSandboxProvider({
      baseURL: server.url,
      auth: () => ({ headers: { Authorization: `Bearer ${TOKEN}` } }),
    });
    try {
      await expect(provider.health()).resolves.toMatchObject({ sandboxes: 0 });
    } finally {
      provider.close();
    }
  });

  it("over a Unix socket, answers Host: localhost (what the client and Docker send)", async () => {
    const folder = await makeTempDir("pleach-server-origin-socket-");
    const socketPath = path.join(folder.dir, "sandbox.sock");
    const onSocket = await createSandboxServer({
      root: path.join(folder.dir, "root"),
      token: TOKEN,
      socketPath,
    });
    const provider = createHttpStreamSandboxProvider({
      baseURL: "http://localhost/",
      socketPath,
      auth: () => ({ headers: { Authorization: `Bearer ${TOKEN}` } }),
    });
    try {
      expect(onSocket.url.href).toBe("http://localhost/");
      await expect(provider.health()).resolves.toMatchObject({ sandboxes: 0 });
      expect((await health({ socketPath, host: "localhost" })).status).toBe(200);
      expect((await health({ socketPath, host: "evil.example.com" })).status).toBe(403);
    } finally {
      provider.close();
      await onSocket.close();
      await folder.cleanup();
    }
  });
});
