import http from "node:http";
import { describe, expect, it } from "vitest";
import { createRequestGuard } from "./request-guard.js";

const TOKEN = "s3cret-token-value";
const server = http.createServer();
const guard = createRequestGuard({ token: TOKEN, server, host: "127.0.0.1", realm: "test" });

/** A request with these headers, as the guard sees it. */
function request(headers: http.IncomingHttpHeaders): http.IncomingMessage {
  return { headers } as http.IncomingMessage;
}

describe("createRequestGuard", () => {
  it("accepts the token after Bearer, in any case of the scheme", () => {
    for (const authorization of [`Bearer ${TOKEN}`, `bearer   ${TOKEN}  `]) {
      expect(guard(request({ host: "localhost", authorization }))).toBeUndefined();
    }
  });

  it("refuses any other Authorization with a 401 that names the realm", () => {
    for (const authorization of [
      undefined,
      "",
      "Bearer",
      "Bearer ",
      `Bearer ${TOKEN.slice(0, -1)}`,
      `Bearer ${TOKEN}2`,
      `Bearer ${TOKEN} extra`,
      `Basic ${TOKEN}`,
      TOKEN,
    ]) {
      expect([authorization, guard(request({ host: "localhost", authorization }))]).toEqual([
        authorization,
        {
          status: 401,
          message: "missing or wrong bearer token: send Authorization: Bearer TOKEN",
          headers: { "www-authenticate": 'Bearer realm="test"' },
        },
      ]);
    }
  });

  it("refuses a foreign Host or Origin with a 403 before looking at the token", () => {
    const authorization = `Bearer ${TOKEN}`;
    expect(guard(request({ host: "evil.example.com", authorization }))).toMatchObject({
      status: 403,
      details: {
        refused: "Host",
        value: "evil.example.com",
        allowWith: "--allow-host evil.example.com",
      },
    });
    expect(guard(request({ host: "evil.example.com" }))?.status).toBe(403);
    expect(
      guard(request({ host: "localhost", origin: "http://evil.example.com", authorization })),
    ).toMatchObject({ status: 403, details: { refused: "Origin" } });
  });

  it("accepts the host it was told to listen on, and the allowed hosts", () => {
    const allowing = createRequestGuard({
      token: TOKEN,
      server,
      host: "box.lan",
      allowedHosts: [".example.test"],
      realm: "test",
    });
    const authorization = `Bearer ${TOKEN}`;
    for (const host of ["box.lan:8700", "a.example.test", "localhost"]) {
      expect([host, allowing(request({ host, authorization }))]).toEqual([host, undefined]);
    }
    expect(allowing(request({ host: "other.lan", authorization }))?.status).toBe(403);
  });

  it("refuses a token too short or with whitespace, and a bad allowed host, when made", () => {
    for (const token of ["", "short", "sixteen chars ok", `${TOKEN}\n`]) {
      expect(() => createRequestGuard({ token, server, realm: "test" })).toThrow(
        /at least 16 characters without whitespace/,
      );
    }
    expect(() =>
      createRequestGuard({ token: TOKEN, server, allowedHosts: ["a.test:80"], realm: "test" }),
    ).toThrow(/without a port/);
  });
});
