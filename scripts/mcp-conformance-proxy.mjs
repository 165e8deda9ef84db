#!/usr/bin/env node
// A loopback front for the MCP conformance suite, which speaks only Streamable HTTP and cannot
// send a bearer token. Two ways to reach pleach:
//
//   node scripts/mcp-conformance-proxy.mjs --target http://127.0.0.1:8931 --token-file FILE
//     Forward every request to `pleach mcp --http` as it came (method, path, body, and the Host
//     and Origin headers, so the server judges what the suite sent) with
//     `Authorization: Bearer <token>` added; answers stream back as they come (SSE included).
//
//   node scripts/mcp-conformance-proxy.mjs --stdio -- node pleach.js mcp --workspace DIR ...
//     Serve each client session by its own child speaking MCP over stdio, as a host runs
//     `pleach mcp`: the MCP SDK's Streamable HTTP server transport on this side, its stdio client
//     transport on the other, messages passed through unchanged. A notification goes out on the
//     stream of the request it belongs to (by its progress token, else the latest open request).
//
// In both ways, a `tools/call` of one of the suite's fixture tools (which only its reference
// server has) becomes the pleach call that exercises the same feature: see FIXTURE_CALLS.
// Prints its own URL (http://127.0.0.1:PORT) as its first line of stdout; stops on SIGTERM/SIGINT.
import { randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import http from "node:http";
import { parseArgs } from "node:util";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";

/**
 * The suite's fixture tools, as pleach calls that test the same thing (the script gives the
 * workspace a hello.txt and serves with a short --progress-interval).
 */
const FIXTURE_CALLS = {
  // A result with text content.
  test_simple_text: { name: "read_file", arguments: { path: "hello.txt" } },
  // A tool that fails: isError with a message.
  test_error_handling: { name: "read_file", arguments: { path: "no-such-file.txt" } },
  // A long call: at least three progress notifications, increasing.
  test_tool_with_progress: { name: "bash", arguments: { command: "sleep 1" } },
  // A long call: at least three log messages once the client set the level to debug.
  test_tool_with_logging: { name: "bash", arguments: { command: "sleep 1" } },
  // MCP 2026-07-28: a call that logs at debug (its start and end), sent without a log level: no
  // log message at all. Quick, as the suite waits only half a second for the answer.
  test_logging_tool: { name: "read_file", arguments: { path: "hello.txt" } },
};

const { values, positionals } = parseArgs({
  options: {
    target: { type: "string" },
    "token-file": { type: "string" },
    stdio: { type: "boolean" },
  },
  allowPositionals: true,
});
const usage =
  "usage: mcp-conformance-proxy.mjs --target URL --token-file FILE | --stdio -- COMMAND [ARGS...]\n";
if (values.stdio ? positionals.length === 0 : !values.target || !values["token-file"]) {
  process.stderr.write(usage);
  process.exit(2);
}

/** The JSON-RPC message with a fixture tool's call replaced by its pleach call. */
function renameFixtureCall(message) {
  if (message?.method !== "tools/call") return message;
  const call = FIXTURE_CALLS[message.params?.name];
  return call === undefined ? message : { ...message, params: { ...message.params, ...call } };
}

/** The fixture tool a single `tools/call` body calls, if it calls one. */
function fixtureNameOf(text) {
  try {
    const message = JSON.parse(text);
    const name = message?.method === "tools/call" ? message.params?.name : undefined;
    return Object.hasOwn(FIXTURE_CALLS, name ?? "") ? name : undefined;
  } catch {
    return undefined;
  }
}

function rewriteBody(text) {
  try {
    const parsed = JSON.parse(text);
    return Array.isArray(parsed) ? parsed.map(renameFixtureCall) : renameFixtureCall(parsed);
  } catch {
    return undefined;
  }
}

async function readBody(request) {
  const chunks = [];
  for await (const chunk of request) chunks.push(chunk);
  return Buffer.concat(chunks).toString("utf8");
}

const handle = values.stdio ? await bridgeStdio(positionals) : await forwardHttp(values);
const server = http.createServer((request, response) => {
  handle(request, response).catch((error) => {
    if (!response.headersSent) response.writeHead(502, { "content-type": "text/plain" });
    response.end(`proxy: ${error.message}\n`);
  });
});
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`http://127.0.0.1:${server.address().port}\n`);
});
const stop = async () => {
  await handle.close?.();
  server.close(() => process.exit(0));
  server.closeAllConnections();
};
process.once("SIGTERM", stop);
process.once("SIGINT", stop);

async function forwardHttp({ target: targetUrl, "token-file": tokenFile }) {
  const target = new URL(targetUrl);
  const token = (await readFile(tokenFile, "utf8")).trim();
  // Hop-by-hop headers belong to each connection, not to the request.
  const hop = new Set(["connection", "keep-alive", "proxy-connection", "te", "upgrade", "trailer"]);
  return async (request, response) => {
    const headers = {};
    for (const [name, value] of Object.entries(request.headers)) {
      if (hop.has(name) || name === "authorization" || value === undefined) continue;
      headers[name] = Array.isArray(value) ? value.join(", ") : value;
    }
    headers.authorization = `Bearer ${token}`;
    let body = await readBody(request);
    const fixture = request.method === "POST" ? fixtureNameOf(body) : undefined;
    const rewritten = request.method === "POST" ? rewriteBody(body) : undefined;
    if (rewritten !== undefined) body = JSON.stringify(rewritten);
    // MCP 2026-07-28 repeats a call's tool name in the Mcp-Name header, which the server checks
    // against the body: a renamed fixture call carries its new name there too, but only when the
    // header named that fixture, so that a mismatch the suite sends on purpose still reaches pleach.
    if (fixture !== undefined && headers["mcp-name"]?.trim() === fixture) {
      headers["mcp-name"] = FIXTURE_CALLS[fixture].name;
    }
    if (body !== "" || headers["content-length"] !== undefined) {
      headers["content-length"] = String(Buffer.byteLength(body));
    }
    // Host is forwarded as the suite sent it (`headers.host`), not replaced by the target's.
    const upstream = http.request(
      {
        host: target.hostname.replace(/^\[|\]$/g, ""),
        port: target.port,
        method: request.method,
        path: request.url,
        headers,
        agent: false,
      },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      },
    );
    upstream.on("error", (error) => {
      if (!response.headersSent) response.writeHead(502, { "content-type": "text/plain" });
      response.end(`proxy: ${error.message}\n`);
    });
    response.on("close", () => upstream.destroy());
    upstream.end(body);
  };
}

async function bridgeStdio([command, ...args]) {
  const sessions = new Map();
  const handle = async (request, response) => {
    const text = request.method === "POST" ? await readBody(request) : undefined;
    const body = text === undefined ? undefined : rewriteBody(text);
    const sessionId = request.headers["mcp-session-id"];
    let session = sessionId === undefined ? undefined : sessions.get(sessionId);
    if (session === undefined) {
      // MCP 2026-07-28 has no session: a request without one that does not initialize goes to the
      // one child that serves them all, as a host's single `pleach mcp` process would.
      if (sessionId === undefined && body !== undefined && !isInitializeRequest(body)) {
        await serveStateless(response, body);
        return;
      }
      if (sessionId !== undefined || !isInitializeRequest(body)) {
        response.writeHead(sessionId === undefined ? 400 : 404, {
          "content-type": "application/json",
        });
        response.end(
          JSON.stringify({
            jsonrpc: "2.0",
            id: null,
            error: { code: -32000, message: "no such session: initialize first" },
          }),
        );
        return;
      }
      session = await openSession();
    }
    await session.handleRequest(request, response, body);
  };
  let stateless;
  handle.close = async () => {
    await Promise.all([...sessions.values()].map((session) => session.close()));
    await stateless?.close();
  };
  return handle;

  /**
   * The stateless side (MCP 2026-07-28). Over stdio a host opens a connection with
   * server/discover, which decides its era, then sends its requests on it; so each server/discover
   * of the suite (that claims a version) opens a new child (its answer is the suite's), which then takes the requests that
   * follow, and the previous child goes once its last request is answered. Requests before any
   * discover get a child the bridge opens itself. Each request goes under an id of the bridge's
   * own; its answer comes back as JSON, or as an event stream once a notification for it comes
   * first (by its progress token, else the latest open request). A notification gets 202.
   */
  async function serveStateless(response, message) {
    if (Array.isArray(message) || message === null || typeof message !== "object") {
      response.writeHead(400, { "content-type": "application/json" });
      response.end(
        JSON.stringify({
          jsonrpc: "2.0",
          id: null,
          error: { code: -32600, message: "one JSON-RPC message per request" },
        }),
      );
      return;
    }
    // A discover that claims no protocol version cannot open a 2026-07-28 connection: the current
    // one answers it (with the error the revision asks for).
    const opens =
      message.method === "server/discover" &&
      message.params?._meta?.["io.modelcontextprotocol/protocolVersion"] !== undefined;
    if (opens || stateless === undefined) {
      const previous = stateless;
      const opening = opens ? { message, response } : undefined;
      stateless = await openStateless(opening);
      previous?.retire();
      if (opening !== undefined) return;
    }
    await stateless.send(response, message);
  }

  async function openStateless(opening) {
    const child = new StdioClientTransport({ command, args, stderr: "inherit" });
    const open = new Map();
    let next = 0;
    let retired = false;
    const closeIfDone = () => {
      if (retired && open.size === 0) void child.close();
    };
    child.onmessage = (message) => {
      let exchange;
      if ("id" in message && !("method" in message)) exchange = open.get(message.id);
      else if (message.method === "notifications/progress") {
        const token = message.params?.progressToken;
        exchange = [...open.values()].find((entry) => entry.progressToken === token);
      } else if ("method" in message && !("id" in message)) exchange = [...open.values()].at(-1);
      if (exchange === undefined) return;
      const { response, id } = exchange;
      if ("method" in message) {
        if (!response.headersSent) {
          response.writeHead(200, {
            "content-type": "text/event-stream",
            "cache-control": "no-cache",
          });
        }
        response.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
        return;
      }
      open.delete(message.id);
      const answer = JSON.stringify({ ...message, id });
      if (response.headersSent) response.end(`event: message\ndata: ${answer}\n\n`);
      else {
        response.writeHead(200, { "content-type": "application/json" });
        response.end(answer);
      }
      closeIfDone();
    };
    const send = async (response, message) => {
      if (!("id" in message)) {
        await child.send(message);
        response.writeHead(202).end();
        return;
      }
      const bridgeId = `bridge-${next++}`;
      const progressToken = message.params?._meta?.progressToken;
      open.set(bridgeId, { response, id: message.id, progressToken });
      response.on("close", () => {
        open.delete(bridgeId);
        closeIfDone();
      });
      await child.send({ ...message, id: bridgeId });
    };
    await child.start();
    if (opening !== undefined) await send(opening.response, opening.message);
    else {
      // The bridge's own opening, so that the suite's first request is served as 2026-07-28.
      await new Promise((resolve, reject) => {
        const sink = { headersSent: false, writeHead() {}, write() {}, end: resolve, on() {} };
        const discover = {
          jsonrpc: "2.0",
          id: "bridge-discover",
          method: "server/discover",
          params: {
            _meta: {
              "io.modelcontextprotocol/protocolVersion": "2026-07-28",
              "io.modelcontextprotocol/clientInfo": { name: "conformance-bridge", version: "1" },
              "io.modelcontextprotocol/clientCapabilities": {},
            },
          },
        };
        send(sink, discover).catch(reject);
      });
    }
    return {
      send,
      retire() {
        retired = true;
        closeIfDone();
      },
      close: () => child.close(),
    };
  }

  async function openSession() {
    const child = new StdioClientTransport({ command, args, stderr: "inherit" });
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => sessions.set(id, transport),
    });
    // The client's open requests, in order, with their progress tokens.
    const open = new Map();
    transport.onmessage = (message) => {
      if ("method" in message && "id" in message) {
        open.set(message.id, message.params?._meta?.progressToken);
      }
      void child.send(message);
    };
    child.onmessage = (message) => {
      let relatedRequestId;
      if ("id" in message && !("method" in message)) {
        relatedRequestId = message.id;
        open.delete(message.id);
      } else if (message.method === "notifications/progress") {
        const token = message.params?.progressToken;
        relatedRequestId = [...open].find(([, progressToken]) => progressToken === token)?.[0];
      } else if ("method" in message && !("id" in message)) {
        relatedRequestId = [...open.keys()].at(-1);
      }
      void transport.send(message, relatedRequestId === undefined ? {} : { relatedRequestId });
    };
    let closed = false;
    const closeBoth = async () => {
      if (closed) return;
      closed = true;
      if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
      await Promise.allSettled([transport.close(), child.close()]);
    };
    transport.onclose = closeBoth;
    child.onclose = closeBoth;
    await child.start();
    await transport.start();
    return transport;
  }
}
