import type { HostFacts } from "./host-facts.js";
import type { SandboxPolicy } from "./sandbox-policy.js";

/** The only `sandbox-exec` pleach runs. */
export const SANDBOX_EXEC_PATH = "/usr/bin/sandbox-exec";

/** Options of {@link seatbeltProfile}. */
export interface SeatbeltProfileOptions {
  policy: SandboxPolicy;
  hostFacts: HostFacts;
}

/** Mach services ordinary command-line tools need: user lookup, logging, TLS trust, DNS. */
const MACH_SERVICES = [
  "com.apple.system.opendirectoryd.libinfo",
  "com.apple.system.logger",
  "com.apple.system.notification_center",
  "com.apple.trustd.agent",
  "com.apple.SystemConfiguration.configd",
  "com.apple.dnssd.service",
];

/**
 * The Seatbelt profile (SBPL) for `policy`: deny by default, read anywhere but the hidden paths,
 * write only to the workspace (`workspace-write`), its cache folder and the temporary folders, never to protected
 * paths, no network unless allowed (with a domain list, only the proxy's port of loopback), and
 * never host Unix sockets. Seatbelt matches paths rather than mounts, so a missing protected path
 * is refused by its name too, and a `.git` anywhere below the root is covered by one pattern, also one
 * created later.
 *
 * Writable paths are combined with `require-not` inside a single `allow` so the result does not
 * depend on how Seatbelt orders rules.
 */
export function seatbeltProfile({ policy, hostFacts }: SeatbeltProfileOptions): string {
  const { root } = hostFacts;
  const temporaryRoots = [...new Set(["/private/tmp", hostFacts.temporaryDirectory])];
  const lines = [
    "(version 1)",
    "(deny default)",
    "(allow process-exec)",
    "(allow process-fork)",
    "(allow signal (target same-sandbox))",
    "(allow process-info* (target same-sandbox))",
    ...readRules(hostFacts),
    "(allow sysctl-read)",
    "(allow pseudo-tty)",
    "(allow ipc-posix-sem)",
    "(allow ipc-posix-shm)",
    `(allow mach-lookup ${MACH_SERVICES.map((service) => `(global-name ${quote(service)})`).join(" ")})`,
    '(allow file-write-data file-ioctl (literal "/dev/null") (literal "/dev/zero") (regex #"^/dev/tty") (regex #"^/dev/fd/"))',
  ];
  const writableRoots = [
    ...temporaryRoots,
    ...(policy.mode === "workspace-write" ? [root, ...(hostFacts.writableFolders ?? [])] : []),
    ...(policy.caches === undefined ? [] : [policy.caches]),
  ];
  // The one protection policy (protectedPaths, missing ones included): Seatbelt matches paths, so
  // a missing one cannot be made either.
  const protectedFilters = hostFacts.protectedPaths.map(
    ({ path: protectedPath }) => `(require-not (subpath ${quote(protectedPath)}))`,
  );
  for (const top of [root, ...(hostFacts.writableFolders ?? [])]) {
    protectedFilters.push(
      `(require-not (regex ${regexLiteral(`^${escapeRegex(top)}/(.*/)?\\.git(/|$)`)}))`,
    );
  }
  lines.push(
    "(allow file-write*",
    `  (require-all (require-any ${writableRoots.map((writable) => `(subpath ${quote(writable)})`).join(" ")})`,
    ...protectedFilters.map((filter) => `    ${filter}`),
    "  ))",
  );
  if (typeof policy.network === "object") {
    // Only the domain proxy, which listens on this port of the host's loopback.
    lines.push(
      `(allow network-outbound (remote ip ${quote(`localhost:${policy.network.proxyPort}`)}))`,
    );
  } else if (policy.network) {
    lines.push(
      "(allow network-outbound (remote ip))",
      "(allow network-inbound (local ip))",
      "(allow network-bind (local ip))",
      "(allow system-socket)",
      '(allow network-outbound (literal "/private/var/run/mDNSResponder"))',
    );
  }
  return `${lines.join("\n")}\n`;
}

/**
 * Read anywhere but the hidden paths (credential stores, `hideReads`): each as reached through a
 * link and at its target, and a missing one too, since Seatbelt matches paths as they are opened.
 */
function readRules(hostFacts: HostFacts): string[] {
  if (hostFacts.hiddenPaths.length === 0) return ["(allow file-read*)"];
  return [
    "(allow file-read* (require-all",
    ...hostFacts.hiddenPaths.map(
      ({ path: hidden }) => `    (require-not (subpath ${quote(hidden)}))`,
    ),
    "  ))",
  ];
}

/** An SBPL string literal. */
function quote(value: string): string {
  return `"${value.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}

/** An SBPL regular-expression literal; backslashes inside `#"..."` reach the regex engine as they are. */
function regexLiteral(pattern: string): string {
  return `#"${pattern.replace(/"/g, '\\"')}"`;
}

function escapeRegex(value: string): string {
  return value.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
