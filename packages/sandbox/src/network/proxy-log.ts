import {
  allowsEveryDomain,
  type DomainDecision,
  type DomainRules,
  formatHostPort,
} from "./domain-rules.js";

/** One request a command made to the domain proxy, as the proxy's log keeps it. */
export interface ProxyRequest {
  /** `CONNECT` (a tunnel: https, or any TCP), or the method of a plain-http request. */
  method: string;
  /** The host asked for, normalized (lower case, punycode, no trailing dot). */
  host: string;
  port: number;
  /** Whether a connection to the destination was opened. */
  connected: boolean;
  /** Set when the policy refused the request: the line that explains it to the model. */
  refusal?: string;
  /** Why an allowed request failed: the lookup's or the connection's error code. */
  error?: string;
}

/** Why a request was refused: a rule of the list, or the address its name resolved to. */
export type Refusal =
  | Exclude<DomainDecision, { allowed: true }>
  | {
      allowed: false;
      rule: "special-address";
      address: string;
      /** What the address is, with its article: "a loopback address". */
      kind: string;
    };

/**
 * The line that tells the model which rule refused `request` and how the user allows it, e.g.
 * "pleach's sandbox refused a connection to evil.example:443: not in the allowed domains
 * (registry.npmjs.org). To allow it, start pleach with --allow-domain evil.example (or allowDomains)."
 */
export function refusalLine(
  request: Pick<ProxyRequest, "host" | "port">,
  rules: DomainRules,
  refusal: Refusal,
): string {
  const start = `pleach's sandbox refused a connection to ${formatHostPort(request.host, request.port)}`;
  if (refusal.rule === "denied") {
    return (
      `${start}: it matches the denied pattern ${refusal.pattern.text}. ` +
      `To allow it, start pleach without --deny-domain ${refusal.pattern.text} (or take it out of denyDomains).`
    );
  }
  if (refusal.rule === "special-address") {
    const named = formatHostPort(refusal.address, request.port);
    const way = allowsEveryDomain(rules)
      ? `start pleach with --allow-domain '*' --allow-domain ${named} in place of --network (or allowDomains: ["*", "${named}"])`
      : `start pleach with --allow-domain ${named} (or allowDomains)`;
    return `${start}: ${request.host} resolves to ${refusal.address}, ${refusal.kind}, which only a rule naming that address reaches. To allow it, ${way}.`;
  }
  const allowed = rules.allow.map((pattern) => pattern.text).join(", ") || "none";
  return (
    `${start}: not in the allowed domains (${allowed}). ` +
    `To allow it, start pleach with --allow-domain ${formatHostPort(request.host, undefined)} (or allowDomains).`
  );
}

/** The refusal lines of a command's requests, each once, in order: its `sandboxNotes`. */
export function refusalNotes(log: readonly ProxyRequest[]): string[] {
  return [...new Set(log.flatMap(({ refusal }) => (refusal === undefined ? [] : [refusal])))];
}
