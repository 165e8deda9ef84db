import type { SandboxMode } from "@pleach/core/sandbox";
import type { NetworkOption } from "./network/domain-rules.js";
import type { CommandWrapper } from "./os/command-wrapper.js";
import type { LocalSessionOptions } from "./session/local-session.js";

/** Options of {@link createLocalSandbox}. */
export interface LocalSandboxOptions {
  /** The workspace folder. Must exist. */
  root: string;
  /**
   * What the sandbox allows: `read-only` refuses every write; `workspace-write` writes inside the
   * workspace only; `danger-full-access` confines file paths but runs commands unconfined.
   * @default "workspace-write"
   */
  mode?: SandboxMode;
  /**
   * Which network commands may reach (in `danger-full-access`, all of it): none (`false`), all
   * (`true`), or only the hosts of `{ allowDomains, denyDomains? }` through a proxy on the host
   * (`*.` wildcards, `*` for every host, and `:PORT` accepted, a denied pattern winning). Under
   * bubblewrap `true` goes through the same proxy allowing every name (`*`): never the host's
   * network namespace, its abstract sockets or this machine's own addresses (name one to reach
   * it). A refused request gets a 403, and a command that fails after one gets a line naming the
   * rule in `sandboxNotes`.
   * @default false
   */
  network?: NetworkOption;
  /**
   * Time limit of a command when the call gives none, in milliseconds.
   * @default 600_000
   */
  defaultTimeoutMs?: number;
  /**
   * Bytes kept of each of stdout and stderr when the call gives no `maxOutputBytes`.
   * @default 10_485_760
   */
  defaultMaxOutputBytes?: number;
  /**
   * The largest file `readFile` reads, in bytes; larger files are refused with `TOO_LARGE`.
   * @default 104_857_600
   */
  maxFileBytes?: number;
  /**
   * More paths commands in `read-only` and `workspace-write` cannot read (`hideReads` of
   * {@link createCommandWrapper}); only without `commandWrapper`, which has its own.
   * @default []
   */
  hideReads?: readonly string[];
  /**
   * Hidden paths commands may read again (`allowReads` of {@link createCommandWrapper}); only
   * without `commandWrapper`, which has its own.
   * @default []
   */
  allowReads?: readonly string[];
  /**
   * Let commands in `workspace-write` commit, branch, stash and rebase (`allowGitWrites` of
   * {@link createCommandWrapper}); only without `commandWrapper`, which has its own.
   * @default false
   */
  allowGitWrites?: boolean;
  /**
   * Kept caches for commands, a private folder per workspace (`caches` of
   * {@link createCommandWrapper}); only without `commandWrapper`, which has its own.
   * @default { maxBytes: 4 GiB }
   */
  caches?: boolean | { maxBytes?: number };
  /**
   * Folders besides the workspace that commands in `workspace-write` may write, under the
   * workspace's rules (`allowWrites` of {@link createCommandWrapper}); only without
   * `commandWrapper`, which has its own.
   * @default []
   */
  allowWrites?: readonly string[];
  /** How commands are confined; by default the host's OS sandbox, probed once. */
  commandWrapper?: CommandWrapper;
  /**
   * Make the client a session: all its commands run in one sandbox kept for the client's life
   * (sharing its loopback network and private `/tmp`, and with `network` one domain proxy on the
   * host), which also holds background jobs (`jobs`) and the whole output of long results
   * (`fullOutput`, at `/run/pleach-output/NAME` inside the sandbox, never in the workspace). `close()` ends it and all in it, their connections
   * too; so does the death of this process. Needs bubblewrap in `read-only` or `workspace-write`
   * mode and `/usr/bin/perl`; elsewhere commands run as without it and jobs refuse with
   * `UNSUPPORTED`. `true` takes the defaults of {@link LocalSessionOptions}.
   * @default false
   */
  session?: boolean | LocalSessionOptions;
}
