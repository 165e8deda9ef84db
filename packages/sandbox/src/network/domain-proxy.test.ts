import { execFile } from "node:child_process";
import { stat } from "node:fs/promises";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { useTempDir } from "@pleach/core/testing";
import { afterEach, describe, expect, it } from "vitest";
import { startCommandProxy } from "./command-proxy.js";
import { type DomainProxy, startDomainProxy } from "./domain-proxy.js";
import { type DomainRules, parseNetworkOption } from "./domain-rules.js";
import { forwardingShell } from "./proxy-forwarder.js";
import { LookupSlots } from "./proxy-lookups.js";

/** An address of one of this machine's interfaces other than loopback, if it has one. */
const ownAddress = Object.values(os.networkInterfaces())
  .flat()
  .find(
    (each) => each !== undefined && !each.internal && !each.address.startsWith("fe80:"),
  )?.address;

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** A loopback HTTP server that records the Host of every request it gets, and raw TCP bytes. */
async function upstreamServer() {
  const hosts: string[] = [];
  const server = http.createServer((request, response) => {
    hosts.push(request.headers.host ?? "");
    response.end(`upstream saw ${request.headers.host}\n`);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return { port: (server.address() as net.AddressInfo).port, hosts };
}

/**
 * A proxy on a Unix socket over `rules`, whose names resolve through `names` (a name missing
 * there does not resolve); every lookup is recorded.
 */
async function proxyFor(allowDomains: string[], names: Record<string, string[]> = {}) {
  const socketPath = path.join(await useTempDir(), "proxy.sock");
  const lookups: string[] = [];
  const proxy: DomainProxy = await startDomainProxy({
    rules: parseNetworkOption({ allowDomains }) as DomainRules,
    listen: { socketPath },
    lookup: async (host) => {
      lookups.push(host);
      const found = names[host];
      if (found === undefined) throw Object.assign(new Error("not found"), { code: "ENOTFOUND" });
      return found;
    },
  });
  closers.push(() => proxy.close());
  return { proxy, socketPath, lookups };
}

/** Send `text` on a fresh connection to the proxy and read until it closes (or `until` is seen). */
function exchange(socketPath: string, text: string | Buffer, until?: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(socketPath);
    let received = "";
    socket.on("data", (chunk) => {
      received += chunk.toString("latin1");
      if (until?.test(received)) {
        socket.destroy();
        resolve(received);
      }
    });
    socket.on("error", reject);
    socket.on("close", () => resolve(received));
    socket.write(text);
  });
}

describe("the domain proxy", () => {
  it("refuses a host outside the list with a 403 naming it, before any lookup", async () => {
    const { proxy, socketPath, lookups } = await proxyFor(["registry.npmjs.org"]);
    const answer = await exchange(
      socketPath,
      "CONNECT evil.example:443 HTTP/1.1\r\nHost: evil.example:443\r\n\r\n",
    );
    expect(answer).toMatch(/^HTTP\/1.1 403 Forbidden/);
    expect(answer).toContain(
      "pleach's sandbox refused a connection to evil.example:443: not in the allowed domains (registry.npmjs.org). To allow it, start pleach with --allow-domain evil.example (or allowDomains).",
    );
    expect(lookups).toEqual([]);
    expect(proxy.log).toMatchObject([{ host: "evil.example", port: 443, connected: false }]);
  });

  it("keeps a bounded log under a flood: the first requests, then each new destination once", async () => {
    const { proxy, socketPath } = await proxyFor(["registry.npmjs.org"]);
    const refuse = (host: string) =>
      exchange(socketPath, `CONNECT ${host}:443 HTTP/1.1\r\nHost: ${host}:443\r\n\r\n`);
    for (let batch = 0; batch < 24; batch += 1) {
      await Promise.all(Array.from({ length: 50 }, () => refuse("flood.example")));
    }
    expect(await refuse("other.example")).toMatch(/^HTTP\/1.1 403 Forbidden/);
    await refuse("flood.example");
    expect(proxy.log).toHaveLength(1_001);
    expect(proxy.log.at(-1)).toMatchObject({ host: "other.example", connected: false });
  });

  it("tunnels to an allowed name, connecting to the address it checked", async () => {
    const upstream = await upstreamServer();
    const { proxy, socketPath } = await proxyFor(["allowed.test", "127.0.0.1"], {
      "allowed.test": ["127.0.0.1"],
    });
    const answer = await exchange(
      socketPath,
      `CONNECT allowed.test:${upstream.port} HTTP/1.1\r\n\r\nGET / HTTP/1.1\r\nHost: allowed.test\r\nConnection: close\r\n\r\n`,
    );
    expect(answer).toMatch(/^HTTP\/1.1 200 Connection Established\r\n\r\nHTTP\/1.1 200 OK/);
    expect(proxy.log).toMatchObject([{ host: "allowed.test", connected: true }]);
  });

  it("refuses an allowed name that resolves to loopback or link-local, unless the address is named", async () => {
    const upstream = await upstreamServer();
    const names = { "allowed.test": ["127.0.0.1"], "metadata.test": ["169.254.169.254"] };
    const { proxy, socketPath } = await proxyFor(["allowed.test", "metadata.test"], names);
    const loopback = await exchange(
      socketPath,
      `CONNECT allowed.test:${upstream.port} HTTP/1.1\r\n\r\n`,
    );
    expect(loopback).toMatch(/^HTTP\/1.1 403/);
    expect(loopback).toContain(
      `allowed.test resolves to 127.0.0.1, a loopback address, which only a rule naming that address reaches. To allow it, start pleach with --allow-domain 127.0.0.1:${upstream.port}`,
    );
    const metadata = await exchange(
      socketPath,
      "GET http://metadata.test/latest/meta-data HTTP/1.1\r\n\r\n",
    );
    expect(metadata).toMatch(
      /^HTTP\/1.1 403[\s\S]*169.254.169.254, a link-local \(cloud metadata\) address/,
    );
    expect(upstream.hosts).toEqual([]);
    expect(proxy.log.map(({ connected }) => connected)).toEqual([false, false]);
  });

  it("refuses the other cloud metadata addresses an allowed name may resolve to", async () => {
    // A forged DNS answer is all it takes: AWS's IPv6 endpoint and Alibaba's are not link-local.
    const names = { "aws.test": ["fd00:ec2::254"], "alibaba.test": ["100.100.100.200"] };
    const { proxy, socketPath } = await proxyFor(["aws.test", "alibaba.test"], names);
    for (const host of Object.keys(names)) {
      const answer = await exchange(socketPath, `CONNECT ${host}:80 HTTP/1.1\r\n\r\n`);
      expect(answer).toMatch(/^HTTP\/1.1 403[\s\S]*a cloud metadata address/);
    }
    expect(proxy.log.map(({ connected }) => connected)).toEqual([false, false]);
  });

  it.skipIf(ownAddress === undefined)(
    `refuses an allowed name that resolves to this machine's own address${ownAddress === undefined ? " (skipped: no interface but loopback)" : ""}`,
    async () => {
      // The host's services listening on every address are as near as its loopback's.
      const { proxy, socketPath } = await proxyFor(["own.test"], {
        "own.test": [ownAddress as string],
      });
      const answer = await exchange(socketPath, "CONNECT own.test:5432 HTTP/1.1\r\n\r\n");
      expect(answer).toMatch(/^HTTP\/1.1 403/);
      expect(answer).toContain(`own.test resolves to ${ownAddress}, an address of this machine,`);
      expect(proxy.log).toMatchObject([{ connected: false }]);
    },
  );

  it("refuses a CONNECT to an allowed host's address, which the list does not name", async () => {
    const upstream = await upstreamServer();
    const { proxy, socketPath } = await proxyFor(["allowed.test"], {
      "allowed.test": ["127.0.0.1"],
    });
    const answer = await exchange(
      socketPath,
      `CONNECT 127.0.0.1:${upstream.port} HTTP/1.1\r\nHost: allowed.test\r\n\r\n`,
    );
    expect(answer).toMatch(/^HTTP\/1.1 403/);
    expect(answer).toContain("refused a connection to 127.0.0.1:");
    expect(proxy.log).toMatchObject([{ host: "127.0.0.1", connected: false }]);
  });

  it("sends upstream the URL's host, whatever Host header the request names", async () => {
    const upstream = await upstreamServer();
    const { socketPath } = await proxyFor(["allowed.test", "127.0.0.1"], {
      "allowed.test": ["127.0.0.1"],
    });
    const answer = await exchange(
      socketPath,
      `GET http://allowed.test:${upstream.port}/ HTTP/1.1\r\nHost: evil.example\r\n\r\n`,
      /upstream saw/,
    );
    expect(answer).toContain(`upstream saw allowed.test:${upstream.port}`);
    expect(upstream.hosts).toEqual([`allowed.test:${upstream.port}`]);
  });

  it("judges every request of a kept-alive connection by its own URL", async () => {
    const upstream = await upstreamServer();
    const { proxy, socketPath } = await proxyFor(["127.0.0.1"]);
    const answer = await exchange(
      socketPath,
      `GET http://127.0.0.1:${upstream.port}/ HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n` +
        "GET http://evil.example/ HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
    );
    expect(answer).toContain("upstream saw");
    expect(answer).toContain("refused a connection to evil.example:80");
    expect(upstream.hosts).toHaveLength(1);
    expect(proxy.log.map(({ host, connected }) => [host, connected])).toEqual([
      ["127.0.0.1", true],
      ["evil.example", false],
    ]);
  });

  it("refuses a request that is not for a proxy, and a request line too long to read", async () => {
    const { proxy, socketPath } = await proxyFor(["allowed.test"]);
    expect(await exchange(socketPath, "GET / HTTP/1.1\r\nHost: allowed.test\r\n\r\n")).toMatch(
      /^HTTP\/1.1 400/,
    );
    expect(await exchange(socketPath, "GET https://allowed.test/ HTTP/1.1\r\n\r\n")).toMatch(
      /^HTTP\/1.1 400/,
    );
    const long = await exchange(
      socketPath,
      `GET http://allowed.test/${"a".repeat(100_000)} HTTP/1.1\r\n\r\n`,
    );
    expect(long).toMatch(/^HTTP\/1.1 4(00|31)/);
    expect(proxy.log).toEqual([]);
  });

  it("answers 502 to an upstream status below 100, and stays up", async () => {
    // Node's parser takes any three digits, and writeHead throws below 100: before, the throw
    // ended the whole host process, so whoever answered for an allowed host could crash it.
    const upstream = net.createServer((socket) => {
      socket.once("data", () => socket.end("HTTP/1.1 099 Odd\r\ncontent-length: 0\r\n\r\n"));
    });
    await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
    closers.push(() => new Promise((resolve) => upstream.close(() => resolve())));
    const { port } = upstream.address() as net.AddressInfo;
    const { proxy, socketPath } = await proxyFor([`127.0.0.1:${port}`]);
    const answer = await exchange(
      socketPath,
      `GET http://127.0.0.1:${port}/ HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`,
    );
    expect(answer).toMatch(/^HTTP\/1.1 502 Bad Gateway/);
    expect(answer).toContain("invalid status 99");
    expect(proxy.log).toMatchObject([{ connected: true, error: "invalid status 99" }]);
    const again = await exchange(socketPath, "CONNECT evil.example:443 HTTP/1.1\r\n\r\n");
    expect(again).toMatch(/^HTTP\/1.1 403 Forbidden/);
  });

  it("ends the answer when the upstream stops mid-body, rather than leaving the command waiting", async () => {
    const upstream = net.createServer((socket) => {
      socket.once("data", () =>
        socket.end("HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nonly ten b"),
      );
    });
    await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
    closers.push(() => new Promise((resolve) => upstream.close(() => resolve())));
    const { port } = upstream.address() as net.AddressInfo;
    const { socketPath } = await proxyFor([`127.0.0.1:${port}`]);
    // exchange resolves when the proxy closes the connection: before, it never did.
    const answer = await exchange(
      socketPath,
      `GET http://127.0.0.1:${port}/ HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`,
    );
    expect(answer).toMatch(/^HTTP\/1.1 200 OK/);
    expect(answer).toContain("only ten b");
  });

  it("bounds a command's lookups: names that never answer leave the host threads, and the ones past the bound are refused", async () => {
    // A stand-in for libuv's thread pool (four threads): a lookup holds a thread until it
    // answers, and a name under .hang never answers, as behind a resolver that is not there.
    let freeThreads = 4;
    const queued: (() => void)[] = [];
    const poolLookup = async (host: string): Promise<string[]> => {
      if (freeThreads === 0) await new Promise<void>((resolve) => queued.push(resolve));
      else freeThreads -= 1;
      if (host.endsWith(".hang")) return new Promise<string[]>(() => {});
      const next = queued.shift();
      if (next === undefined) freeThreads += 1;
      else next();
      return ["192.0.2.1"];
    };
    const socketPath = path.join(await useTempDir(), "proxy.sock");
    const proxy = await startDomainProxy({
      rules: parseNetworkOption({ allowDomains: ["*.hang"] }) as DomainRules,
      listen: { socketPath },
      lookup: poolLookup,
      lookupLimits: { slots: new LookupSlots(2), maxPending: 8 },
    });
    const answers = Array.from({ length: 20 }, (_, index) =>
      exchange(socketPath, `CONNECT n${index}.hang:443 HTTP/1.1\r\n\r\n`),
    );
    await expect.poll(() => proxy.log.length).toBe(20);
    // The command ends: its proxy closes, cutting every connection still waiting.
    await proxy.close();
    const refused = (await Promise.all(answers)).filter((answer) =>
      answer.includes("(TOO_MANY_LOOKUPS)"),
    );
    expect(refused).toHaveLength(12);
    expect(refused[0]).toMatch(/^HTTP\/1.1 502 Bad Gateway/);
    // Two lookups still hold their threads (they cannot be stopped); the host has the others.
    expect(freeThreads).toBe(2);
    expect(await poolLookup("registry.test")).toEqual(["192.0.2.1"]);
  });

  it("answers 502 when a lookup gives no answer in time", async () => {
    const socketPath = path.join(await useTempDir(), "proxy.sock");
    const proxy = await startDomainProxy({
      rules: parseNetworkOption({ allowDomains: ["never.test"] }) as DomainRules,
      listen: { socketPath },
      lookup: () => new Promise<string[]>(() => {}),
      lookupLimits: { slots: new LookupSlots(2), timeoutMs: 50 },
    });
    closers.push(() => proxy.close());
    const answer = await exchange(socketPath, "CONNECT never.test:443 HTTP/1.1\r\n\r\n");
    expect(answer).toMatch(/^HTTP\/1.1 502 Bad Gateway/);
    expect(answer).toContain("got no answer when looking up never.test (LOOKUP_TIMEOUT)");
  });

  it("answers 502 for a name that resolves nowhere", async () => {
    const { proxy, socketPath } = await proxyFor(["nowhere.test"]);
    const answer = await exchange(socketPath, "CONNECT nowhere.test:443 HTTP/1.1\r\n\r\n");
    expect(answer).toMatch(/^HTTP\/1.1 502[\s\S]*found no address for nowhere.test \(ENOTFOUND\)/);
    expect(proxy.log).toMatchObject([
      { host: "nowhere.test", connected: false, error: "ENOTFOUND" },
    ]);
  });

  it("serves many connections at once and stays up", async () => {
    const upstream = await upstreamServer();
    const { proxy, socketPath } = await proxyFor(["127.0.0.1"]);
    const many = await Promise.all(
      Array.from({ length: 100 }, () =>
        exchange(
          socketPath,
          `GET http://127.0.0.1:${upstream.port}/ HTTP/1.1\r\n\r\n`,
          /upstream saw/,
        ),
      ),
    );
    expect(many.every((answer) => answer.includes("upstream saw"))).toBe(true);
    expect(proxy.log).toHaveLength(100);
  });

  it("keeps a command's socket in a private folder, removed when it stops", async () => {
    const proxy = await startCommandProxy(
      parseNetworkOption({ allowDomains: [] }) as DomainRules,
      "bubblewrap",
    );
    const folder = proxy.network.socketFolder as string;
    expect((await stat(folder)).mode & 0o777).toBe(0o700);
    expect((await stat(path.join(folder, "proxy.sock"))).isSocket()).toBe(true);
    await proxy.close();
    await expect(stat(folder)).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("stops a command whose forwarder cannot start, saying why", async () => {
    const run = promisify(execFile);
    const failure = await run(
      "/bin/bash",
      forwardingShell(["-c", "echo RAN"], "/nonexistent/perl"),
    ).catch((error: { code: number; stdout: string; stderr: string }) => error);
    expect(failure).toMatchObject({
      code: 126,
      stdout: "",
      stderr: expect.stringContaining(
        "the network proxy forwarder did not start in the sandbox (/nonexistent/perl exited)",
      ),
    });
  });
});
