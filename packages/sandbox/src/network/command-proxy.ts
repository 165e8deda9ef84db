import { mkdtemp, rm } from "node:fs/promises";
import path from "node:path";
import type { ProxiedNetwork } from "../os/sandbox-policy.js";
import { type DomainProxyOptions, startDomainProxy } from "./domain-proxy.js";
import type { DomainRules } from "./domain-rules.js";
import { PROXY_SOCKET_NAME, SANDBOX_PROXY_PORT } from "./proxy-forwarder.js";
import type { ProxyRequest } from "./proxy-log.js";

/** The domain proxy of one command: the policy's network, its log, and how to stop it. */
export interface CommandProxy {
  network: ProxiedNetwork;
  log: readonly ProxyRequest[];
  close(): Promise<void>;
}

/**
 * Start a proxy of its own for one command, so that its log is that command's requests (or for a
 * session sandbox, which holds one for its life: see `SessionSandbox`). Under
 * bubblewrap it listens on a Unix socket in a fresh private folder of the host's `/tmp` (mode 700,
 * made by `mkdtemp`) that is bound into the sandbox; under Seatbelt, which has no network
 * namespace, on a free port of the host's loopback that the profile lets the command reach.
 */
export async function startCommandProxy(
  rules: DomainRules,
  backend: "bubblewrap" | "seatbelt",
  options: Omit<DomainProxyOptions, "rules" | "listen"> = {},
): Promise<CommandProxy> {
  if (backend === "seatbelt") {
    const proxy = await startDomainProxy({ ...options, rules, listen: { loopbackPort: 0 } });
    return { network: { proxyPort: proxy.port }, log: proxy.log, close: () => proxy.close() };
  }
  // Never TMPDIR's folder: every sandbox replaces /tmp with its own, so a command confined before
  // this socket was bound (and not masked from it) cannot reach it; elsewhere it could.
  const socketFolder = await mkdtemp("/tmp/pleach-proxy-");
  try {
    const proxy = await startDomainProxy({
      ...options,
      rules,
      listen: { socketPath: path.join(socketFolder, PROXY_SOCKET_NAME) },
    });
    return {
      network: { proxyPort: SANDBOX_PROXY_PORT, socketFolder },
      log: proxy.log,
      async close() {
        await proxy.close();
        await rm(socketFolder, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await rm(socketFolder, { recursive: true, force: true });
    throw error;
  }
}
