#!/usr/bin/env node
// A loopback proxy for the MCP conformance suite, which cannot send a bearer token: every request
// is forwarded to TARGET as it came (method, path, body, and the Host and Origin headers, so the
// server judges what the suite sent) with `Authorization: Bearer <token>` added; answers stream
// back as they come (SSE included).
//   node scripts/mcp-conformance-proxy.mjs --target http://127.0.0.1:8931 --token-file FILE
// Prints its own URL (http://127.0.0.1:PORT) as its first line of stdout; stops on SIGTERM/SIGINT.
import { readFile } from "node:fs/promises";
import http from "node:http";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  options: { target: { type: "string" }, "token-file": { type: "string" } },
});
if (values.target === undefined || values["token-file"] === undefined) {
  process.stderr.write("usage: mcp-conformance-proxy.mjs --target URL --token-file FILE\n");
  process.exit(2);
}
const target = new URL(values.target);
const token = (await readFile(values["token-file"], "utf8")).trim();
// Hop-by-hop headers belong to each connection, not to the request.
const HOP = new Set(["connection", "keep-alive", "proxy-connection", "te", "upgrade", "trailer"]);

const server = http.createServer((request, response) => {
  const headers = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (HOP.has(name) || name === "authorization" || value === undefined) continue;
    headers[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  headers.authorization = `Bearer ${token}`;
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
  request.pipe(upstream);
});
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`http://127.0.0.1:${server.address().port}\n`);
});
const stop = () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
};
process.once("SIGTERM", stop);
process.once("SIGINT", stop);
