import http from "node:http";
import net from "node:net";
import os from "node:os";
import type { Duplex } from "node:stream";
import { type DomainRules, decideDomain, namesAddress, parseHostPort } from "./domain-rules.js";
import { type ProxyRequest, refusalLine } from "./proxy-log.js";
import {
  createProxyLookups,
  type HostLookup,
  type ProxyLookupsOptions,
  systemLookup,
} from "./proxy-lookups.js";

/** Where {@link startDomainProxy} listens: a Unix socket path, or a free port of 127.0.0.1. */
export type ProxyListen = { socketPath: string } | { loopbackPort: 0 };

/** Options of {@link startDomainProxy}. */
export interface DomainProxyOptions {
  rules: DomainRules;
  listen: ProxyListen;
  /** Resolves a host name to its addresses. @default node's `dns.lookup`, every address */
  lookup?: HostLookup;
  /**
   * How the proxy's lookups are bounded in number and time (see `proxy-lookups.ts`).
   * @default two at once for the whole process, 8 pending for this proxy, 10 s each
   */
  lookupLimits?: Omit<ProxyLookupsOptions, "lookup">;
  /**
   * The most connections from commands open at once; more are dropped.
   * @default 256
   */
  maxConnections?: number;
  /** Told each refusal's line as it is made (a session's proxy outlives its log's bound). */
  onRefusal?: (line: string) => void;
}

/** A running proxy: what it was asked, and how to stop it. */
export interface DomainProxy {
  /** The port on 127.0.0.1 it listens on, with `loopbackPort`; else 0. */
  readonly port: number;
  /**
   * The requests it received, in order: the first 1,000, then only the first to each destination
   * not seen yet, 10,000 at most (a command flooding the proxy cannot grow the host's memory).
   */
  readonly log: readonly ProxyRequest[];
  /** Stop listening and cut every connection. */
  close(): Promise<void>;
}

/** Requests logged whatever they ask for; past them only a first request to each destination. */
const LOGGED_IN_FULL = 1_000;
/** The most requests a proxy's log keeps. */
const MAX_LOGGED = 10_000;

/**
 * Addresses no name may lead to, unless a rule names the address itself, each with what it is as
 * a refusal says it. A forged DNS answer can give any name any address.
 */
const SPECIAL_ADDRESSES: readonly [string, number, "ipv4" | "ipv6", string][] = [
  ["0.0.0.0", 8, "ipv4", "an unspecified address"],
  ["127.0.0.0", 8, "ipv4", "a loopback address"],
  ["169.254.0.0", 16, "ipv4", "a link-local (cloud metadata) address"],
  ["100.100.100.200", 32, "ipv4", "a cloud metadata address"],
  ["224.0.0.0", 4, "ipv4", "a multicast or broadcast address"],
  ["::", 128, "ipv6", "an unspecified address"],
  ["::1", 128, "ipv6", "a loopback address"],
  ["fe80::", 10, "ipv6", "a link-local address"],
  ["fd00:ec2::254", 128, "ipv6", "a cloud metadata address"],
  ["ff00::", 8, "ipv6", "a multicast address"],
];

/**
 * What kind of special address `address` is ({@link SPECIAL_ADDRESSES}, or one of this machine's
 * own interfaces, whose services listening on every address are as near as its loopback's), if it
 * is one.
 */
function specialAddressKind(address: string): string | undefined {
  const family = net.isIPv6(address) ? "ipv6" : "ipv4";
  for (const [prefix, bits, type, kind] of SPECIAL_ADDRESSES) {
    const list = new net.BlockList();
    list.addSubnet(prefix, bits, type);
    if (list.check(address, family)) return kind;
  }
  const own = new net.BlockList();
  const interfaces = Object.values(os.networkInterfaces()).flatMap((each) => each ?? []);
  for (const { address: local, family: type } of interfaces) {
    own.addAddress(local, type === "IPv6" ? "ipv6" : "ipv4");
  }
  return own.check(address, family) ? "an address of this machine" : undefined;
}

/** What a command is told when `host` got no address, by the lookup's error `code`. */
function noAddress(host: string, code: string): string {
  if (code === "TOO_MANY_LOOKUPS") {
    return `pleach's proxy is looking up too many names for this command at once, so ${host} was not looked up (${code}); retry once the others are answered`;
  }
  if (code === "LOOKUP_TIMEOUT") {
    return `pleach's proxy got no answer when looking up ${host} (${code}); check the name, or retry`;
  }
  return `pleach's proxy found no address for ${host} (${code}); check the name`;
}

/** Headers a proxy does not pass on. */
const HOP_HEADERS = new Set([
  "connection",
  "keep-alive",
  "proxy-authorization",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "host",
]);

/**
 * The host side of a domain policy: an HTTP proxy that opens a tunnel (`CONNECT host:port`, for
 * https and anything else over TCP) or forwards a plain-http request (`GET http://host/...`) only
 * to a host `rules` allow. A refused host gets a 403 naming it, the rule and the way out, before
 * any name lookup or connection. An allowed name that resolves to a loopback, link-local,
 * unspecified or multicast address is refused too, unless a rule names that address; one that
 * resolves nowhere gets a 502. The proxy connects to the address it checked, never the name again.
 */
export async function startDomainProxy({
  rules,
  listen,
  lookup = systemLookup,
  lookupLimits = {},
  maxConnections = 256,
  onRefusal,
}: DomainProxyOptions): Promise<DomainProxy> {
  const lookups = createProxyLookups({ lookup, ...lookupLimits });
  const log: ProxyRequest[] = [];
  const logged = new Set<string>();
  const sockets = new Set<Duplex>();
  const track = (socket: Duplex) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  };

  /** Decide on `host:port`, then resolve and check: the address to connect to, or a reply sent. */
  const admit = async (
    record: ProxyRequest,
    reply: (status: number, body: string) => void,
  ): Promise<string | undefined> => {
    // Bounded, so that a command flooding the proxy cannot grow the host's memory: the first
    // requests in full, then one record per destination not seen yet.
    const destination = `${record.host}:${record.port}`;
    if (log.length < LOGGED_IN_FULL || (!logged.has(destination) && log.length < MAX_LOGGED)) {
      log.push(record);
      logged.add(destination);
    }
    const decision = decideDomain(rules, record.host, record.port);
    if (!decision.allowed) {
      record.refusal = refusalLine(record, rules, decision);
      onRefusal?.(record.refusal);
      reply(403, record.refusal);
      return undefined;
    }
    let addresses: string[];
    if (net.isIP(record.host) !== 0) {
      addresses = [record.host];
    } else {
      try {
        addresses = await lookups.lookup(record.host);
      } catch (error) {
        addresses = [];
        record.error = (error as NodeJS.ErrnoException).code ?? String(error);
      }
    }
    if (addresses.length === 0) {
      record.error ??= "no address";
      reply(502, noAddress(record.host, record.error));
      return undefined;
    }
    const address = addresses.find(
      (each) => specialAddressKind(each) === undefined || namesAddress(rules, each, record.port),
    );
    if (address === undefined) {
      const first = addresses[0] as string;
      record.refusal = refusalLine(record, rules, {
        allowed: false,
        rule: "special-address",
        address: first,
        kind: specialAddressKind(first) as string,
      });
      onRefusal?.(record.refusal);
      reply(403, record.refusal);
      return undefined;
    }
    return address;
  };

  // The Host header is not needed: a request is judged and sent by its URL.
  const server = http.createServer(
    { maxHeaderSize: 16 * 1024, requireHostHeader: false },
    (request, response) => {
      track(request.socket);
      const send = (status: number, body: string) => {
        if (!response.headersSent) {
          response.writeHead(status, {
            "content-type": "text/plain; charset=utf-8",
            connection: "close",
          });
        }
        response.end(`${body}\n`);
      };
      let target: URL | undefined;
      try {
        target = new URL(request.url ?? "");
      } catch {
        target = undefined;
      }
      const authority = target?.protocol === "http:" ? parseHostPort(target.host) : undefined;
      if (target === undefined || authority === undefined || target.username || target.password) {
        send(
          400,
          "pleach's proxy takes CONNECT host:port, or a plain-http request with an absolute URL (GET http://host/path); set HTTP_PROXY and HTTPS_PROXY to it",
        );
        return;
      }
      const port = authority.port ?? 80;
      const record: ProxyRequest = {
        method: request.method ?? "GET",
        host: authority.host,
        port,
        connected: false,
      };
      void admit(record, send).then((address) => {
        if (address === undefined) return;
        const headers: http.OutgoingHttpHeaders = {};
        for (const [name, value] of Object.entries(request.headers)) {
          if (!HOP_HEADERS.has(name)) headers[name] = value;
        }
        // The Host is the URL's: a request cannot name one host to the proxy and another upstream.
        headers.host = target.host;
        headers.connection = "close";
        const upstream = http.request({
          host: address,
          port,
          method: request.method,
          path: `${target.pathname}${target.search}`,
          headers,
          agent: false,
          setHost: false,
        });
        upstream.on("socket", (socket) => {
          track(socket);
          socket.once("connect", () => {
            record.connected = true;
          });
        });
        upstream.on("response", (answer) => {
          // Node reads any three digits as a status, but writeHead throws below 100, and a throw
          // here would end the host process: an upstream (or whoever is on its path) is not trusted.
          if ((answer.statusCode ?? 0) < 100) {
            record.error ??= `invalid status ${answer.statusCode}`;
            answer.destroy();
            send(502, `pleach's proxy got an invalid answer from ${target.host}: ${record.error}`);
            return;
          }
          const passed: http.OutgoingHttpHeaders = {};
          for (const [name, value] of Object.entries(answer.headers)) {
            if (!HOP_HEADERS.has(name)) passed[name] = value;
          }
          response.writeHead(answer.statusCode ?? 502, passed);
          answer.pipe(response);
          // An upstream that stops mid-body must not leave the command waiting for the rest.
          answer.once("close", () => {
            if (!answer.complete) response.destroy();
          });
        });
        upstream.on("error", (error) => {
          record.error ??= (error as NodeJS.ErrnoException).code ?? error.message;
          if (response.headersSent) response.destroy();
          else send(502, `pleach's proxy could not reach ${target.host}: ${record.error}`);
        });
        request.pipe(upstream);
      });
    },
  );

  server.on("connect", (request: http.IncomingMessage, client: Duplex, head: Buffer) => {
    track(client);
    client.on("error", () => client.destroy());
    const reply = (status: number, body: string) => {
      const reason = status === 403 ? "Forbidden" : status === 400 ? "Bad Request" : "Bad Gateway";
      const bytes = Buffer.from(`${body}\n`);
      client.end(
        `HTTP/1.1 ${status} ${reason}\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: ${bytes.length}\r\nconnection: close\r\n\r\n${bytes}`,
      );
    };
    const authority = parseHostPort(request.url ?? "");
    if (authority?.port === undefined) {
      reply(400, "pleach's proxy takes CONNECT host:port");
      return;
    }
    const record: ProxyRequest = {
      method: "CONNECT",
      host: authority.host,
      port: authority.port,
      connected: false,
    };
    void admit(record, reply).then((address) => {
      if (address === undefined || client.destroyed) return;
      const upstream = net.connect({ host: address, port: record.port });
      track(upstream);
      upstream.once("connect", () => {
        record.connected = true;
        client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
        if (head.length > 0) upstream.write(head);
        upstream.pipe(client);
        client.pipe(upstream);
      });
      upstream.on("error", (error) => {
        record.error ??= (error as NodeJS.ErrnoException).code ?? error.message;
        if (record.connected) client.destroy();
        else reply(502, `pleach's proxy could not reach ${request.url}: ${record.error}`);
      });
      upstream.on("close", () => client.destroy());
      client.on("close", () => upstream.destroy());
    });
  });
  server.on("clientError", (_error, socket) => {
    if (socket.writable) socket.end("HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n");
    else socket.destroy();
  });
  server.maxConnections = maxConnections;

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    const done = () => {
      server.off("error", reject);
      resolve();
    };
    if ("socketPath" in listen) server.listen(listen.socketPath, done);
    else server.listen(0, "127.0.0.1", done);
  });
  const address = server.address();
  return {
    port: typeof address === "object" && address !== null ? address.port : 0,
    log,
    async close() {
      lookups.close();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      server.closeAllConnections();
      await closed;
    },
  };
}
