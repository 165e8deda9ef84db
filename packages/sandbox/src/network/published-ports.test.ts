import net from "node:net";
import os from "node:os";
import { freeLoopbackPort, useTempDir } from "@pleach/core/testing";
import { describe, expect, it } from "vitest";
import { createLocalSandbox, type LocalSandbox } from "../local-sandbox.js";
import { sessionServerSupported } from "../os/session-server.js";
import { attackSuiteSkipReason, runningAs } from "../os/test-support/suite.js";
import { publishedPorts, SANDBOX_PUBLISH_FOLDER } from "./published-ports.js";

const skipReason =
  (await attackSuiteSkipReason()) ??
  (sessionServerSupported() ? undefined : "no trusted /usr/bin/perl for the session sandbox");

/** An HTTP server on 127.0.0.1:PORT inside the sandbox, as a job: it says "listening". */
const jobServer = (port: number) =>
  `python3 -c "
import http.server
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = ('hello from the job at ' + self.path).encode()
        self.send_response(200); self.send_header('content-length', str(len(body))); self.end_headers(); self.wfile.write(body)
    def log_message(self, *args): pass
server = http.server.ThreadingHTTPServer(('127.0.0.1', ${port}), H)
print('listening', flush=True)
server.serve_forever()
"`;

/** One HTTP/1.0 GET of `path` at host:port, its whole answer; or the connection's error code. */
function get(host: string, port: number, path = "/"): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    let answer = "";
    socket.on("connect", () => socket.write(`GET ${path} HTTP/1.0\r\nHost: x\r\n\r\n`));
    socket.on("data", (chunk) => {
      answer += chunk.toString("utf8");
    });
    socket.on("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    socket.on("close", () => resolve(answer));
  });
}

async function startJob(client: LocalSandbox, command: string, until: string) {
  const jobs = client.jobs;
  if (jobs === undefined) throw new Error("the session has no jobs");
  const job = await jobs.start(command);
  return jobs.output(job.jobId, { waitMs: 20_000, until });
}

describe("publish's ports", () => {
  it("takes whole ports from 1 to 65535, each once, and refuses others saying so", () => {
    expect(publishedPorts([3000, 3000, 8080])).toEqual([3000, 8080]);
    expect(publishedPorts(undefined)).toEqual([]);
    for (const bad of [0, 65_536, 3000.5, "3000", -1]) {
      expect(() => publishedPorts([bad])).toThrow(/publish takes TCP ports from 1 to 65535/);
    }
  });
});

describe.skipIf(skipReason !== undefined)(
  `a session's published ports ${runningAs()}${skipReason === undefined ? "" : ` (skipped: ${skipReason})`}`,
  () => {
    it("reach a job's server from the host's loopback, and only there, until the session ends", async () => {
      const port = await freeLoopbackPort();
      const root = await useTempDir();
      const client = await createLocalSandbox({ root, session: { publish: [port] } });
      try {
        // Before any job listens: the host's client is closed, not left hanging.
        await client.exec("true");
        expect(await get("127.0.0.1", port)).toBe("");
        const started = await startJob(client, jobServer(port), "listening");
        expect(started.matched).toBe(true);
        const answers = await Promise.all([1, 2, 3].map((n) => get("127.0.0.1", port, `/${n}`)));
        for (const [n, answer] of answers.entries()) {
          expect(answer).toMatch(/^HTTP\/1\.0 200/);
          expect(answer).toContain(`hello from the job at /${n + 1}`);
        }
        // The job's port is not on the host's other addresses.
        const outside = Object.values(os.networkInterfaces())
          .flat()
          .find((address) => address?.family === "IPv4" && !address.internal)?.address;
        if (outside !== undefined) expect(await get(outside, port)).toBe("ECONNREFUSED");
      } finally {
        await client.close();
      }
      // Closed with the session: nothing listens there any more.
      expect(await get("127.0.0.1", port)).toBe("ECONNREFUSED");
    }, 60_000);

    it("keeps a command that talks to the publisher's socket from taking its place", async () => {
      const port = await freeLoopbackPort();
      const root = await useTempDir();
      const client = await createLocalSandbox({ root, session: { publish: [port] } });
      try {
        await startJob(client, jobServer(port), "listening");
        // A second control connection, and an answer for a client nobody asked for, are closed.
        const hijack = await client.exec(
          `python3 -c "
import socket
for line in (b'control\\n', b'data 00000000-0000-0000-0000-000000000000\\n', b'x' * 200):
    s = socket.socket(socket.AF_UNIX); s.connect('${SANDBOX_PUBLISH_FOLDER}/publish.sock'); s.sendall(line)
    s.settimeout(5); print(repr(s.recv(100)))
"`,
        );
        expect(hijack.stdout).toBe("b''\nb''\nb''\n");
        // The socket's folder is read-only for commands: it cannot be replaced.
        const replace = await client.exec(`rm -f ${SANDBOX_PUBLISH_FOLDER}/publish.sock; echo $?`);
        expect(replace.stdout.trim()).not.toBe("0");
        expect(await get("127.0.0.1", port, "/still")).toContain("hello from the job at /still");
      } finally {
        await client.close();
      }
    }, 60_000);

    it("says when a port cannot be published because another program listens there", async () => {
      const taken = net.createServer();
      await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
      const { port } = taken.address() as net.AddressInfo;
      const root = await useTempDir();
      const client = await createLocalSandbox({ root, session: { publish: [port] } });
      try {
        const result = await client.exec("echo hi");
        expect(result.stdout).toBe("hi\n");
        expect(result.sandboxNotes?.join("\n")).toContain(
          `port ${port} could not be published on the host's loopback (EADDRINUSE: another program listens there)`,
        );
      } finally {
        await client.close();
        await new Promise<void>((resolve) => taken.close(() => resolve()));
      }
    }, 60_000);
  },
);
