import net from "node:net";
import { ToolError } from "@pleach/core";

/**
 * Which network sandboxed commands reach: `false` none, `true` all, or only the domains of a list,
 * through pleach's proxy on the host (see `domain-proxy.ts`). A denied pattern wins over an
 * allowed one.
 */
export type NetworkOption = boolean | DomainList;

/** The list form of {@link NetworkOption}: patterns as {@link parseDomainPattern} reads them. */
export interface DomainList {
  /** Hosts commands may connect to, such as `registry.npmjs.org`, `*.github.com`, `example.com:8443`. */
  allowDomains: readonly string[];
  /** Hosts refused even when an allowed pattern matches them. @default [] */
  denyDomains?: readonly string[];
}

/** One pattern of a {@link DomainList}, read. */
export interface DomainPattern {
  /** The pattern as normalized: lower case, ASCII (punycode), no trailing dot. */
  text: string;
  /** The host, or for a wildcard the domain below which every name matches. */
  host: string;
  /** `*.host`: any name below `host`, not `host` itself. */
  wildcard: boolean;
  /** The one port it covers; every port when absent. */
  port?: number;
}

/** A {@link DomainList}, read and checked. */
export interface DomainRules {
  allow: readonly DomainPattern[];
  deny: readonly DomainPattern[];
}

/** {@link NetworkOption} read: `true`, `false`, or the rules of a list. */
export type NetworkAccess = boolean | DomainRules;

/** What a domain policy decides for one host and port. */
export type DomainDecision =
  | { allowed: true; pattern: DomainPattern }
  | { allowed: false; rule: "not-allowed" }
  | { allowed: false; rule: "denied"; pattern: DomainPattern };

const ACCEPTED_PATTERNS =
  "a host name (registry.npmjs.org), *. and a domain for every name below it (*.github.com), " +
  "or an IP address (10.0.0.5, [fd00::1]), each optionally followed by :PORT (example.com:8443); " +
  "or * for every host";

/** Check `option` and read its patterns; a wrong one is `INVALID_INPUT` naming it. */
export function parseNetworkOption(option: unknown): NetworkAccess {
  if (typeof option === "boolean") return option;
  if (typeof option !== "object" || option === null || Array.isArray(option)) {
    throw invalid(
      `network must be true, false, or { allowDomains: [...], denyDomains?: [...] }, got ${JSON.stringify(option)}`,
    );
  }
  const { allowDomains, denyDomains = [], ...rest } = option as Record<string, unknown>;
  const unknown = Object.keys(rest);
  if (unknown.length > 0) {
    throw invalid(
      `network has unknown keys ${unknown.join(", ")}; it takes allowDomains and denyDomains`,
    );
  }
  return {
    allow: patternList(allowDomains, "allowDomains"),
    deny: patternList(denyDomains, "denyDomains"),
  };
}

function patternList(value: unknown, name: string): DomainPattern[] {
  if (!Array.isArray(value) || !value.every((each) => typeof each === "string")) {
    throw invalid(`network.${name} must be an array of domain patterns: ${ACCEPTED_PATTERNS}`);
  }
  return value.map(parseDomainPattern);
}

/** The pattern `*`: every host, at every port. */
const EVERY_HOST: DomainPattern = { text: "*", host: "", wildcard: true };

/**
 * The rules of `network: true` under bubblewrap: every name, through the proxy, which still
 * refuses the addresses of this machine (loopback, its own interfaces) and of cloud metadata
 * unless a rule names the address.
 */
export function everyDomain(): DomainRules {
  return { allow: [EVERY_HOST], deny: [] };
}

/** Whether `rules` allow every host (`*`). */
export function allowsEveryDomain(rules: DomainRules): boolean {
  return rules.allow.some((pattern) => pattern.wildcard && pattern.host === "");
}

/** Read one pattern ({@link ACCEPTED_PATTERNS}); a wrong one is `INVALID_INPUT` naming it. */
export function parseDomainPattern(pattern: string): DomainPattern {
  if (pattern === "*") return { ...EVERY_HOST };
  const wildcard = pattern.startsWith("*.");
  const target = parseHostPort(wildcard ? pattern.slice(2) : pattern);
  if (target === undefined || (wildcard && net.isIP(target.host) !== 0)) {
    throw invalid(`${JSON.stringify(pattern)} is not a domain pattern; use ${ACCEPTED_PATTERNS}`);
  }
  const text = `${wildcard ? "*." : ""}${formatHostPort(target.host, target.port)}`;
  return {
    text,
    host: target.host,
    wildcard,
    ...(target.port === undefined ? {} : { port: target.port }),
  };
}

/**
 * `host[:port]` (an IPv6 address in brackets) with the host normalized as a URL's is: lower case,
 * punycode, IPv4 in dotted decimal, IPv6 compressed, without its trailing dot. `undefined` when it
 * is not a host name or an IP address.
 */
export function parseHostPort(authority: string): { host: string; port?: number } | undefined {
  let hostText = authority;
  let portText: string | undefined;
  if (authority.startsWith("[")) {
    const end = authority.indexOf("]");
    if (end < 0) return undefined;
    hostText = authority.slice(0, end + 1);
    const after = authority.slice(end + 1);
    if (after !== "") {
      if (!after.startsWith(":")) return undefined;
      portText = after.slice(1);
    }
  } else if (net.isIPv6(authority)) {
    hostText = `[${authority}]`;
  } else {
    const colon = authority.lastIndexOf(":");
    if (colon >= 0) {
      hostText = authority.slice(0, colon);
      portText = authority.slice(colon + 1);
    }
  }
  let port: number | undefined;
  if (portText !== undefined) {
    if (!/^[0-9]{1,5}$/.test(portText)) return undefined;
    port = Number(portText);
    if (port < 1 || port > 65_535) return undefined;
  }
  const host = normalizeHost(hostText);
  return host === undefined ? undefined : { host, ...(port === undefined ? {} : { port }) };
}

function normalizeHost(hostText: string): string | undefined {
  // Only what a host may hold reaches the URL parser, which would take a path or a user otherwise.
  if (hostText === "" || /[\s/\\?#@%]/.test(hostText)) return undefined;
  let hostname: string;
  try {
    hostname = new URL(`http://${hostText}/`).hostname;
  } catch {
    return undefined;
  }
  if (hostname.startsWith("[")) return hostname.slice(1, -1);
  const host = hostname.endsWith(".") ? hostname.slice(0, -1) : hostname;
  if (net.isIPv4(host)) return host;
  const labels = host.split(".");
  const valid = labels.every((label) => /^[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?$/.test(label));
  return valid && host.length <= 253 ? host : undefined;
}

/** `host:port` as written in a URL, the port left out when absent. */
export function formatHostPort(host: string, port: number | undefined): string {
  const shown = net.isIPv6(host) ? `[${host}]` : host;
  return port === undefined ? shown : `${shown}:${port}`;
}

function matches(pattern: DomainPattern, host: string, port: number): boolean {
  if (pattern.port !== undefined && pattern.port !== port) return false;
  if (pattern.wildcard && pattern.host === "") return true;
  return pattern.wildcard ? host.endsWith(`.${pattern.host}`) : host === pattern.host;
}

/** Whether `rules` let a command connect to `host` (normalized, see {@link parseHostPort}) at `port`. */
export function decideDomain(rules: DomainRules, host: string, port: number): DomainDecision {
  const denied = rules.deny.find((pattern) => matches(pattern, host, port));
  if (denied !== undefined) return { allowed: false, rule: "denied", pattern: denied };
  const allowed = rules.allow.find((pattern) => matches(pattern, host, port));
  return allowed === undefined
    ? { allowed: false, rule: "not-allowed" }
    : { allowed: true, pattern: allowed };
}

/** Whether `rules` name the IP address `address` itself, at `port` (not through a wildcard). */
export function namesAddress(rules: DomainRules, address: string, port: number): boolean {
  return rules.allow.some(
    (pattern) => !pattern.wildcard && pattern.host === address && (pattern.port ?? port) === port,
  );
}

function invalid(message: string): ToolError {
  return new ToolError("INVALID_INPUT", message);
}
