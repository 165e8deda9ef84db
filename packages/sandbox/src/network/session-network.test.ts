import net from "node:net";
import { useTempDir } from "@pleach/core/testing";
import { describe, expect, it } from "vitest";
import { createLocalSandbox, type LocalSandbox } from "../local-sandbox.js";
import { sessionServerSupported } from "../os/session-server.js";
import { attackSuiteSkipReason, runningAs } from "../os/test-support/suite.js";
import type { NetworkOption } from "./domain-rules.js";
import { SANDBOX_PROXY_PORT } from "./proxy-forwarder.js";

const skipReason =
  (await attackSuiteSkipReason()) ??
  (sessionServerSupported() ? undefined : "no trusted /usr/bin/perl for the session sandbox");

/** A TCP server on the host's loopback that keeps what each connection sent and whether it is open. */
async function listenTcp() {
  const connections: { data: string; open: boolean }[] = [];
  const server = net.createServer((socket) => {
    const connection = { data: "", open: true };
    connections.push(connection);
    socket.on("data", (chunk) => {
      connection.data += chunk.toString("utf8");
    });
    socket.on("error", () => {});
    socket.on("close", () => {
      connection.open = false;
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    port,
    connections,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of connections) socket.open = false;
      }),
  };
}

/**
 * A job's shell step that opens a tunnel through the sandbox's proxy to `target` (bash alone, as
 * a tool reading HTTPS_PROXY would ask), prints the proxy's status line, and when it is a 200
 * sends `from-job` and holds the tunnel open.
 */
function tunnel(target: string): string {
  return [
    `exec 3<>/dev/tcp/127.0.0.1/${SANDBOX_PROXY_PORT}`,
    `printf 'CONNECT ${target} HTTP/1.1\\r\\n\\r\\n' >&3`,
    `IFS= read -r status <&3; echo "status: $status"`,
    `case "$status" in *" 200 "*) printf 'from-job\\n' >&3; sleep 300 ;; *) cat <&3 ;; esac`,
  ].join("; ");
}

/** Start `command` as a job of `client` and wait until its output matches `until`. */
async function jobSays(client: LocalSandbox, command: string, until: string) {
  const jobs = client.jobs;
  if (jobs === undefined) throw new Error("the session has no jobs");
  const job = await jobs.start(command);
  const read = await jobs.output(job.jobId, { waitMs: 20_000, until });
  return read;
}

describe.skipIf(skipReason !== undefined)(
  `background jobs with the network, through the session's proxy ${runningAs()}${skipReason === undefined ? "" : ` (skipped: ${skipReason})`}`,
  () => {
    const cases: [string, (port: number) => NetworkOption][] = [
      // `network: true` allows every name, not this machine's addresses: the way in is to name one.
      ["every domain ('*')", (port) => ({ allowDomains: ["*", `127.0.0.1:${port}`] })],
      ["a domain list", (port) => ({ allowDomains: [`127.0.0.1:${port}`] })],
    ];
    for (const [name, rules] of cases) {
      it(`reaches an allowed server from a job with ${name}, and the connection ends with the session`, async () => {
        const server = await listenTcp();
        const root = await useTempDir();
        const client = await createLocalSandbox({
          root,
          network: rules(server.port),
          session: true,
        });
        try {
          expect(client.jobs).toBeDefined();
          const read = await jobSays(
            client,
            tunnel(`127.0.0.1:${server.port}`),
            "status: HTTP/1.1 200",
          );
          expect(read.matched).toBe(true);
          await expect
            .poll(() => server.connections.map(({ data }) => data))
            .toEqual(["from-job\n"]);
          expect(server.connections[0]?.open).toBe(true);
          // A foreground command of the session shares the job's sandbox and proxy.
          const foreground = await client.exec(
            `exec 3<>/dev/tcp/127.0.0.1/${SANDBOX_PROXY_PORT} && echo reached`,
          );
          expect(foreground.stdout).toBe("reached\n");
        } finally {
          await client.close();
        }
        // Closed, the session cut the job's tunnel: the host's server sees its connection end.
        await expect.poll(() => server.connections[0]?.open, { timeout: 5_000 }).toBe(false);
        await server.close();
      }, 60_000);
    }

    it("refuses from a job what the rules refuse: another domain, and this machine's other ports", async () => {
      const server = await listenTcp();
      const other = await listenTcp();
      const root = await useTempDir();
      const client = await createLocalSandbox({
        root,
        network: { allowDomains: ["*", `127.0.0.1:${server.port}`], denyDomains: ["evil.example"] },
        session: true,
      });
      try {
        const denied = await jobSays(client, tunnel("evil.example:443"), "To allow it");
        expect(denied.output).toContain("status: HTTP/1.1 403 Forbidden");
        expect(denied.output).toContain(
          "pleach's sandbox refused a connection to evil.example:443: it matches the denied pattern evil.example.",
        );
        const loopback = await jobSays(client, tunnel(`127.0.0.1:${other.port}`), "To allow it");
        expect(loopback.output).toContain("status: HTTP/1.1 403 Forbidden");
        expect(loopback.output).toContain(`127.0.0.1 resolves to 127.0.0.1, a loopback address`);
        expect(other.connections).toEqual([]);
      } finally {
        await client.close();
        await server.close();
        await other.close();
      }
    }, 60_000);

    it("runs a foreground network command in the session sandbox, with the proxy's refusal in its notes", async () => {
      const root = await useTempDir();
      const client = await createLocalSandbox({
        root,
        network: { allowDomains: [] },
        session: true,
      });
      try {
        const failed = await client.exec(
          `echo kept > /tmp/note; (${tunnel("evil.example:443")}) && exit 1`,
        );
        expect(failed.exitCode).toBe(1);
        expect(failed.sandboxNotes).toEqual([
          "pleach's sandbox refused a connection to evil.example:443: not in the allowed domains (none). To allow it, start pleach with --allow-domain evil.example (or allowDomains).",
        ]);
        // One refused later is that command's, not the first one's again.
        const next = await client.exec("cat /tmp/note; exit 1");
        expect(next.stdout).toBe("kept\n");
        expect(next.sandboxNotes).toBeUndefined();
      } finally {
        await client.close();
      }
    }, 60_000);
  },
);
