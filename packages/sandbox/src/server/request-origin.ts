import type { IncomingHttpHeaders } from "node:http";
import { isIPv6 } from "node:net";
import os from "node:os";
import { ToolError } from "@pleach/core";

/** Options of {@link createRequestOriginCheck}. */
export interface RequestOriginCheckOptions {
  /**
   * Hosts accepted beside loopback, each with any port: a name (`sandbox.internal`), an address
   * (`10.0.0.5`, `fd00::5` or `[fd00::5]`), or a name with a leading dot (`.example.com`) for that
   * name and every name under it. Checked by {@link parseAllowedHost}.
   */
  allowedHosts?: readonly string[];
  /**
   * Where the server was told to listen and where it is bound (the host as given, and
   * `server.address().address`). Each one that is not loopback is accepted too; a wildcard
   * (`0.0.0.0`, `::`) accepts every address of this machine's network interfaces (looked up again
   * when they change) and its host name (`os.hostname()`).
   */
  listenAddresses?: readonly (string | undefined)[];
  /**
   * The command-line flag that adds a host, named in refusals.
   * @default "--allow-host"
   */
  flag?: string;
}

/** Why a request was refused: answer it with status 403 and {@link RequestOriginRefusal.message}. */
export interface RequestOriginRefusal {
  /** The header refused. */
  header: "Host" | "Origin";
  /** Its value as sent (`undefined` when a request has no Host). */
  value: string | undefined;
  /** The host it names, when it names one, e.g. `evil.example.com`. */
  host: string | undefined;
  /** What would accept it, e.g. `--allow-host evil.example.com`, when something would. */
  allowWith: string | undefined;
  /** One sentence for a person: what was refused, why, and how to allow it. */
  message: string;
}

/** Checks a request's `Host` and `Origin` headers; `undefined` when both are accepted. */
export type RequestOriginCheck = (headers: IncomingHttpHeaders) => RequestOriginRefusal | undefined;

/** A `Host` value: a bracketed IPv6 address or a name or IPv4 address, and an optional port. */
const HOST_HEADER = /^(\[[0-9a-f:.]+\]|[a-z0-9_.-]+)(?::\d*)?$/i;
/** How long the interface addresses of a wildcard listener are trusted before a miss looks again. */
const INTERFACES_TTL_MS = 5_000;

/**
 * Make the DNS-rebinding guard of an HTTP server (the MCP specification's Streamable HTTP security
 * warning): a request is accepted only when its `Host` names loopback (`localhost`, `127.0.0.0/8`,
 * `[::1]`, any port or none), an allowed host, or an address the server listens on; and when it
 * carries an `Origin` (browsers do, other clients do not), that origin's host must pass the same
 * test. Run it before anything else is done for a request, the token check included.
 */
export function createRequestOriginCheck({
  allowedHosts = [],
  listenAddresses = [],
  flag = "--allow-host",
}: RequestOriginCheckOptions = {}): RequestOriginCheck {
  const exact = new Set<string>();
  const suffixes: string[] = [];
  for (const entry of allowedHosts) {
    const host = parseAllowedHost(entry);
    if (host.startsWith(".")) suffixes.push(host);
    else exact.add(host);
  }
  let wildcard = false;
  for (const address of listenAddresses) {
    if (address === undefined) continue;
    const bare = address.replace(/^\[|\]$/g, "");
    if (bare === "" || bare === "0.0.0.0" || (isIPv6(bare) && /^[0:]+$/.test(bare))) {
      wildcard = true;
      continue;
    }
    const host = canonicalHost(isIPv6(bare) ? `[${bare}]` : bare);
    if (host !== undefined) exact.add(host);
  }

  let machine: { hosts: Set<string>; at: number } | undefined;
  const machineHosts = (refresh: boolean): Set<string> => {
    if (machine === undefined || (refresh && Date.now() - machine.at > INTERFACES_TTL_MS)) {
      const hosts = new Set<string>();
      const name = canonicalHost(os.hostname());
      if (name !== undefined) hosts.add(name);
      for (const addresses of Object.values(os.networkInterfaces())) {
        for (const { address, family } of addresses ?? []) {
          const host = canonicalHost(family === "IPv6" ? `[${address}]` : address);
          if (host !== undefined) hosts.add(host);
        }
      }
      machine = { hosts, at: Date.now() };
    }
    return machine.hosts;
  };
  const allowedStatically = (host: string): boolean =>
    isLoopbackHost(host) ||
    exact.has(host) ||
    suffixes.some((suffix) => host.endsWith(suffix) || host === suffix.slice(1));
  const allowed = (host: string): boolean => {
    if (allowedStatically(host)) return true;
    if (!wildcard) return false;
    return machineHosts(false).has(host) || machineHosts(true).has(host);
  };

  const whatIsAccepted = `loopback (localhost, 127.0.0.0/8, [::1]), the address it listens on and hosts allowed with ${flag}`;
  const refuse = (
    header: "Host" | "Origin",
    value: string | undefined,
    host: string | undefined,
    why: string,
  ): RequestOriginRefusal => {
    const allowWith = host === undefined ? undefined : `${flag} ${host}`;
    const how = allowWith === undefined ? "" : `. To accept it, start the server with ${allowWith}`;
    return { header, value, host, allowWith, message: `refused ${why}${how}` };
  };

  /** The refused host of a Host value (`""` when malformed), or `undefined` when accepted. */
  const checkHost = (value: string): string | undefined => {
    const host = HOST_HEADER.test(value) ? canonicalHost(value) : undefined;
    if (host === undefined) return "";
    return allowed(host) ? undefined : host;
  };

  return (headers) => {
    const hostValue = headers.host;
    if (hostValue === undefined) {
      return refuse(
        "Host",
        undefined,
        undefined,
        "a request without a Host header: send the host the server was reached at, such as localhost:PORT",
      );
    }
    const refusedHost = checkHost(hostValue);
    if (refusedHost === "") {
      return refuse(
        "Host",
        hostValue,
        undefined,
        `the malformed Host ${JSON.stringify(hostValue)}: send the host the server was reached at, such as localhost:PORT`,
      );
    }
    if (refusedHost !== undefined) {
      return refuse(
        "Host",
        hostValue,
        refusedHost,
        `Host ${JSON.stringify(hostValue)}: this server answers only requests addressed to ${whatIsAccepted}; a request addressed to another name may be a DNS rebinding attack`,
      );
    }
    const origin = headers.origin;
    if (origin === undefined) return undefined;
    const host = originHost(origin);
    if (host === undefined) {
      return refuse(
        "Origin",
        origin,
        undefined,
        `Origin ${JSON.stringify(origin)}: a page whose origin has no host (a sandboxed frame, a local file, an extension) may not call this server`,
      );
    }
    if (allowed(host)) return undefined;
    return refuse(
      "Origin",
      origin,
      host,
      `Origin ${JSON.stringify(origin)}: a browser page from ${host} may not call this server (DNS rebinding protection); it accepts pages from ${whatIsAccepted}`,
    );
  };
}

/**
 * Check one allowed host (an `allowedHosts` entry or an `--allow-host` value) and return it in the
 * form requests are compared with: lower case, IPv6 in brackets, `.example.com` kept as a suffix.
 * A port, a scheme, a path or `*` is refused with a `ToolError` `INVALID_INPUT` saying why.
 */
export function parseAllowedHost(entry: string): string {
  const text = entry.trim().toLowerCase();
  const suffix = text.startsWith(".");
  const bare = suffix ? text.slice(1) : text;
  const bracketed = isIPv6(bare) ? `[${bare}]` : bare;
  const fail = (why: string) =>
    new ToolError(
      "INVALID_INPUT",
      `${JSON.stringify(entry)} is not a host to allow: ${why} (e.g. sandbox.internal, .example.com, 10.0.0.5 or fd00::5)`,
    );
  if (bracketed === "" || bracketed === "*") {
    throw fail("give a host name or address; every port of it is accepted");
  }
  const match = HOST_HEADER.exec(bracketed);
  if (match === null) throw fail("give a host name or address alone, without a scheme or path");
  if (match[1] !== bracketed) throw fail("give it without a port; every port is accepted");
  const host = canonicalHost(bracketed);
  if (host === undefined || (suffix && (host.startsWith("[") || /^[\d.]+$/.test(host)))) {
    throw fail("it is not a valid host name or address");
  }
  return suffix ? `.${host}` : host;
}

/** Whether a canonical host is a loopback name: `localhost`, `127.0.0.0/8` or `[::1]`. */
function isLoopbackHost(host: string): boolean {
  return host === "localhost" || host === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/**
 * A host (with an optional port) as the WHATWG URL parser writes it (lower case, IPv4 in dotted
 * decimal, IPv6 compressed in brackets), with no trailing dot; `undefined` when it is none.
 */
function canonicalHost(text: string): string | undefined {
  try {
    const { hostname } = new URL(`http://${text}/`);
    if (hostname === "") return undefined;
    return hostname.endsWith(".") ? hostname.slice(0, -1) : hostname;
  } catch {
    return undefined;
  }
}

/** The canonical host of an `Origin` value (`http://example.com:8080`); `undefined` for `null`. */
function originHost(origin: string): string | undefined {
  try {
    const url = new URL(origin);
    if (url.host === "" || url.origin === "null") return undefined;
    return canonicalHost(url.host);
  } catch {
    return undefined;
  }
}
