import type { SandboxMode } from "@pleach/core/sandbox";
import type { NetworkOption } from "../network/domain-rules.js";
import type { CommandWrapper } from "../os/command-wrapper.js";
import type { LocalSessionOptions } from "../session/local-session.js";
import type { ConnectionLimitsOptions } from "./connection-limits.js";
import type { SandboxTemplate } from "./protocol.js";

/** Options of {@link createSandboxServer}. */
export interface SandboxServerOptions {
  /** The folder the sandboxes' workspaces are made in (one folder each). Created if missing. */
  root: string;
  /** The bearer token every request must carry (`Authorization: Bearer TOKEN`). */
  token: string;
  /**
   * The address to listen on. Anything but loopback exposes the server: do it deliberately.
   * @default "127.0.0.1"
   */
  host?: string;
  /**
   * The port; `0` picks a free one (read it from `url`).
   * @default 0
   */
  port?: number;
  /**
   * Hosts accepted in a request's `Host` and `Origin` headers beside loopback (`localhost`,
   * `127.0.0.0/8`, `[::1]`) and the address the server listens on (every address of this machine
   * for `0.0.0.0` or `::`): names or addresses, any port, `.example.com` for a domain and every
   * name under it. Any other `Host` or `Origin` is refused with 403 before the token is checked
   * (DNS rebinding protection). See `createRequestGuard`.
   * @default []
   */
  allowedHosts?: readonly string[];
  /**
   * Listen on this Unix socket instead of `host` and `port` (a container with no network at all,
   * reached through a socket in a mounted folder).
   */
  socketPath?: string;
  /**
   * The mode of the socket: who may connect (the token is still needed).
   * @default 0o600
   */
  socketMode?: number;
  /**
   * The sandbox mode of every sandbox, as for the local client.
   * @default "workspace-write"
   */
  mode?: SandboxMode;
  /**
   * Which network commands may reach, as for the local client: `false`, `true`, or
   * `{ allowDomains, denyDomains? }` through a domain proxy of each command's own.
   * @default false
   */
  network?: NetworkOption;
  /**
   * The most sandboxes alive at once; creating one more is refused (503) until one goes.
   * @default 64
   */
  maxSandboxes?: number;
  /**
   * The largest request body, in bytes (a `writeFile`'s content travels in it).
   * @default 33_554_432
   */
  maxRequestBytes?: number;
  /**
   * The largest file `readFile` returns, in bytes.
   * @default 33_554_432
   */
  maxFileBytes?: number;
  /**
   * Bytes kept of each of stdout and stderr of a command, and the most a call may ask for.
   * @default 10_485_760
   */
  maxOutputBytes?: number;
  /**
   * Time limit of a command when the call gives none, in milliseconds.
   * @default 600_000
   */
  defaultExecTimeoutMs?: number;
  /**
   * The longest time limit a call may ask for; longer ones are cut to it.
   * @default 3_600_000
   */
  maxExecTimeoutMs?: number;
  /**
   * A sandbox with no request and no running command for this long is destroyed.
   * @default 1_800_000
   */
  idleTimeoutMs?: number;
  /** Where `{ folder }` templates are looked up; without it they are refused. */
  templateRoot?: string;
  /**
   * URL schemes `{ git }` templates may use; `[]` refuses them. A git template is cloned inside
   * the new sandbox, by its own confinement and network rule (`network`; a read-only sandbox is
   * cloned in a workspace-write invocation of the same wrapper before it is handed out): with the
   * network off, only `file://` repositories the sandbox can see clone. The server never runs git.
   * @default ["https"]
   */
  gitProtocols?: readonly string[];
  /**
   * How long a template's clone may take, in milliseconds.
   * @default 120_000
   */
  gitTimeoutMs?: number;
  /**
   * Limits on connections: header and request timeouts, the most connections open at once (then
   * 503 with `Retry-After`), and on connections that have made no authorised request yet (408 and
   * closed past a count or a deadline). See {@link ConnectionLimitsOptions} for the defaults.
   * @default {}
   */
  connectionLimits?: ConnectionLimitsOptions;
  /**
   * How often a running command's stream carries a heartbeat line, so that clients can tell a
   * silent command from a dead server.
   * @default 5_000
   */
  heartbeatMs?: number;
  /**
   * The limits of each sandbox's session, as `session` of `createLocalSandbox`: background jobs
   * running at once (`maxJobs`, default 8), output kept per job (`maxJobOutputBytes`, 1 MiB), whole
   * outputs of long results kept (`maxKeptOutputBytes`, 256 MiB).
   * @default {}
   */
  session?: LocalSessionOptions;
  /**
   * The longest a job output request (`GET .../jobs/:jobId/output?waitMs=`) is held waiting for
   * output, in milliseconds; a longer `waitMs` is cut to it (the client asks again).
   * @default 20_000
   */
  maxJobWaitMs?: number;
  /**
   * On `close()`, how long requests in flight have to finish (running commands are killed at once).
   * @default 5_000
   */
  shutdownGraceMs?: number;
  /** Files confined commands must not read, such as the token file. */
  hiddenFiles?: readonly string[];
  /**
   * Where the workspace of a new sandbox is made.
   * @default (id) => path.join(root, id)
   */
  workspacePath?: (sandboxId: string) => string;
  /** How commands are confined; by default the host's OS sandbox. */
  commandWrapper?: CommandWrapper;
  /**
   * The protocol spoken: pleach's own (`PROTOCOL.md`, for `createHttpStreamSandboxProvider`), or
   * E2B's, for the `e2b` SDK pointed at this server (`apiUrl` and `sandboxUrl` both its URL, the
   * token as its API key): the sandbox API, envd's process and filesystem services and `/files`,
   * on this one port, over the same sandboxes, policy and limits. See docs/remote.md.
   * @default "pleach"
   */
  protocol?: "pleach" | "e2b";
  /**
   * With `protocol: "e2b"`: E2B template names and the pleach templates they make; other names are
   * folders of `templateRoot` when there is one.
   * @default { base: "empty" }
   */
  e2bTemplates?: Record<string, SandboxTemplate>;
  /** Called with errors no request can be told of (a failed cleanup). */
  onError?: (error: Error) => void;
}

/** A running sandbox server. */
export interface SandboxServer {
  /** Where it listens, such as `http://127.0.0.1:41234/` (`http://localhost/` on a socket). */
  readonly url: URL;
  /** The Unix socket it listens on, when it does. */
  readonly socketPath: string | undefined;
  /** How many sandboxes are alive. */
  readonly sandboxCount: number;
  /**
   * Stop: refuse new requests, kill running commands (their callers get an `ABORTED` error event
   * that says the server is shutting down), let other requests finish, destroy every sandbox.
   */
  close(): Promise<void>;
}
