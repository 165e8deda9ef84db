/** What a confined command may do: the OS sandbox to use, the mode, where it runs, the network. */
export interface SandboxPolicy {
  backend: "bubblewrap" | "seatbelt";
  mode: "read-only" | "workspace-write";
  /** Real path of the folder to run in, inside the workspace. */
  cwd: string;
  /** Whether the command may reach the network: not at all, freely, or only through the domain proxy. */
  network: boolean | ProxiedNetwork;
  /** The caller's explicit variables; secret-looking names are dropped. */
  env: Readonly<Record<string, string>>;
  /** Real path of the workspace's private cache folder (`workspaceCacheFolder`), writable in every mode. */
  caches?: string;
}

/** A network reached only through pleach's domain proxy (see `domain-proxy.ts`). */
export interface ProxiedNetwork {
  /** The port of 127.0.0.1 commands reach the proxy at: the forwarder's under bubblewrap. */
  proxyPort: number;
  /** The host folder (mode 700) holding the proxy's socket, bound into a bubblewrap sandbox. */
  socketFolder?: string;
}
