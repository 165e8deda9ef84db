import type { SandboxMode } from "@pleach/core/sandbox";
import type { NetworkAccess } from "../network/domain-rules.js";
import type { ProxyRequest } from "../network/proxy-log.js";
import { type HiddenPath, type HiddenScope, hiddenReads } from "../policy/hidden-reads.js";
import type { ProtectedPath, WorkspaceProtection } from "../policy/protection.js";
import type { FailurePolicy } from "./failure-notes.js";
import { currentProtection, type HostFactsCache, sharedHostFactsCache } from "./host-facts.js";
import type { SessionCommand } from "./session-processes.js";
import type { SessionSandbox, SessionSandboxSpec } from "./session-sandbox.js";
import type { WrappedCommand } from "./wrap-command.js";

/** What a confined command runs under, and what its end found: the notes of its result. */
export interface Confinement {
  /** The rules the command runs under, for `failureNotes` to tie its failures to. */
  policy: FailurePolicy;
  /**
   * With a domain policy: the requests the command made to a proxy of its own, filled as it runs
   * (read it once the command is done); empty otherwise.
   */
  proxyLog: readonly ProxyRequest[];
  /**
   * In workspace-write, filled by `release`: one note for each protected path the command made
   * (moved aside, see `moveAsideAppeared`) and each repository it made (made inert, see
   * `makeNewRepositoriesInert`), and what the look once it ended found, for the next
   * {@link InvocationRequest.since}.
   */
  afterwards?: { notes: string[]; look: WorkspaceLook };
  /** Notes for the result that are no failure's: about the workspace's caches (`WorkspaceCaches`). */
  notes?: string[];
}

/**
 * What a look at a workspace found, to tell what a command (or a session's jobs) made since: the
 * git directory entries of its walk, and the protected paths that were missing.
 */
export interface WorkspaceLook {
  gitEntries: readonly string[];
  missing: readonly ProtectedPath[];
  /**
   * The folders that could not be listed then (protected whole): one a command closes later is
   * opened again for its owner when it ends (`reopenClosedFolders`).
   */
  unreadable: readonly string[];
  /**
   * Real paths of the folders besides the workspace it covers (`allowWrites`, as checked when it
   * was taken): the next look looks at these, never at a folder resolved afresh.
   * @default none
   */
  folders?: readonly string[];
}

/** What every invocation has: its launch (how to start it in a process of its own), its release, and what confines it. */
interface InvocationBase extends WrappedCommand {
  /**
   * Call once the process group is gone (after exit, timeout, abort, or a failed spawn): it moves
   * aside what the command made at missing protected paths, makes inert the repositories it made,
   * and stops the command's own proxy. Safe to call twice.
   */
  release(): Promise<void>;
  /** Absent where nothing is confined (`danger-full-access`). */
  confinement?: Confinement;
  /**
   * Aborted when the command must be stopped before it ends: it made something through which git
   * on the host would run a program (with git writes, see `watchGitRunEntries`). The runner stops
   * it as it stops an aborted one.
   */
  stop?: AbortSignal;
}

/** A command that runs in a sandbox of its own (or unconfined): spawn the launch. */
export interface OneOffInvocation extends InvocationBase {
  kind: "one-off";
}

/**
 * A command that runs in a session sandbox: the caller's (asked for with
 * {@link InvocationRequest.session}), or, for a command outside a session, the wrapper's warm one
 * (see `warmSandbox`). The launch is for when that sandbox cannot take it (it cannot start, is
 * busy or gone, or the command has stdin): then it runs apart, as a one-off.
 */
export interface SessionInvocation extends InvocationBase {
  kind: "session";
  confinement: Confinement;
  /** What a session sandbox must match to run it: its argv and every protected path's identity. */
  key: string;
  /**
   * What a session sandbox for it is built from (with a domain policy, the rules of the proxy
   * the sandbox holds for the session).
   */
  spec: Omit<SessionSandboxSpec, "kept" | "cleanFolders" | "idleMs">;
  /** The command as a session sandbox runs it. */
  command: SessionCommand;
  /** The wrapper's warm sandbox, idle and ready for it (`runWarm`); absent in a session. */
  warm?: SessionSandbox;
}

/** How to start a command: a one-off launch, or a run in a session sandbox. */
export type CommandInvocation = OneOffInvocation | SessionInvocation;

/** `invocation` as a one-off: its launch, release and confinement, without a session sandbox. */
export function runApart({
  file,
  args,
  env,
  inputs,
  release,
  confinement,
  stop,
}: CommandInvocation): OneOffInvocation {
  return {
    kind: "one-off",
    file,
    args,
    env,
    ...(inputs === undefined ? {} : { inputs }),
    release,
    ...(confinement === undefined ? {} : { confinement }),
    ...(stop === undefined ? {} : { stop }),
  };
}

/** What {@link CommandWrapper.invocation} needs to know about one command. */
export interface InvocationRequest {
  /** The shell command the caller asked for. */
  command: string;
  /** Realpath of the workspace root. */
  root: string;
  /** Realpath of the folder to run in (inside `root`). */
  cwd: string;
  mode: SandboxMode;
  /** Extra environment variables the caller passed. */
  env: Record<string, string>;
  /**
   * Which network the command may reach: none, all, or the domains of the rules, through a proxy
   * of its own (`parseNetworkOption`). Ignored in `danger-full-access`.
   */
  network: NetworkAccess;
  /**
   * The command is for the caller's session sandbox: a {@link SessionInvocation} without a warm
   * sandbox of the wrapper's wherever a session sandbox can run it (bubblewrap, trusted Perl).
   */
  session?: boolean;
  /**
   * What the session's last look found (`Confinement.afterwards`), when its jobs may have run
   * since: what appeared since then is taken for the session's and moved aside or made inert when
   * this command ends, not only what the command itself made.
   * @default this call's look: only what the command itself made
   */
  since?: WorkspaceLook;
}

/** Turns a command into a confined invocation, or refuses. */
export interface CommandWrapper {
  readonly backend: "bubblewrap" | "seatbelt" | "none";
  /** The invocation for `request`; throws `ToolError` `NO_SANDBOX` when it cannot confine it. */
  invocation(request: InvocationRequest): Promise<CommandInvocation>;
  /** Stop its warm sandboxes now, rather than after their idle time. The wrapper stays usable. */
  close?(): Promise<void>;
  /**
   * What is protected in the workspace `root` now, by the same policy, walk and options the
   * wrapper confines commands with: what host-side writers (the file tools, the server's file
   * route) refuse to write. Optional: without it they use {@link currentProtection}'s defaults.
   */
  protection?(root: string): Promise<WorkspaceProtection>;
  /**
   * Move aside what appeared at protected paths of the workspace `root` and make inert every
   * repository that appeared there since the look `since` (a session's jobs ran meanwhile): what
   * `release` does after a command, asked before a host-side tool call. Returns the notes and
   * what this look found. Optional: a wrapper that confines nothing has nothing to look at.
   */
  madeSince?(root: string, since: WorkspaceLook): Promise<{ notes: string[]; look: WorkspaceLook }>;
  /** What a look at the workspace `root` finds now: the baseline of {@link madeSince}. */
  look?(root: string): Promise<WorkspaceLook>;
  /**
   * What commands in `read-only` and `workspace-write` cannot read, for the workspace `root` (a
   * real path), by the wrapper's read policy: what host-side readers and writers (the file tools,
   * the server's file route) refuse outside `danger-full-access`; in the `workspace` scope only
   * those that can apply to a path in it (see {@link HiddenScope}). Optional: without it they use
   * {@link hiddenReads}'s defaults.
   */
  hiddenReads?(root: string, scope?: HiddenScope): HiddenPath[];
}

/**
 * What `wrapper` protects in the workspace `root` now ({@link CommandWrapper.protection}), or the
 * default policy when the wrapper does not say.
 */
export function protectionWith(
  wrapper: CommandWrapper,
  root: string,
): Promise<WorkspaceProtection> {
  return wrapper.protection?.(root) ?? currentProtection({ root, cache: sharedHostFactsCache() });
}

/**
 * What `wrapper` hides from commands in `mode` in the workspace `root` now, in `scope`
 * ({@link CommandWrapper.hiddenReads}, or the default read policy when the wrapper does not say):
 * nothing in `danger-full-access`.
 */
export function hiddenWith(
  wrapper: CommandWrapper,
  root: string,
  mode: SandboxMode,
  scope: HiddenScope,
): HiddenPath[] {
  if (mode === "danger-full-access") return [];
  return wrapper.hiddenReads?.(root, scope) ?? hiddenReads({ root, scope });
}

/** Options of {@link createCommandWrapper}. */
export interface CommandWrapperOptions {
  /**
   * Which OS sandbox to use. `"auto"` picks bubblewrap on Linux and Seatbelt on macOS; `"none"`
   * runs only in `danger-full-access`. A backend that does not work on this host (found by running
   * it once per process) makes every mode but `danger-full-access` refuse with `NO_SANDBOX`.
   * @default "auto"
   */
  backend?: "auto" | "bubblewrap" | "seatbelt" | "none";
  /**
   * The most folders of the workspace searched for nested `.git` folders and sockets per command.
   * The first command of a workspace reads them all; later ones read only those that changed,
   * found by an `lstat` of each (see `createWorkspaceWalker`). A workspace with more is refused in
   * `workspace-write` (`TOO_LARGE`), for commands and writes alike: a repository past the limit
   * could not be protected.
   * @default 200_000
   */
  maxDirectories?: number;
  /**
   * How long a warm sandbox (see `warmSandbox`) waits unused for the next command before it stops.
   * @default 200
   */
  warmIdleMs?: number;
  /**
   * Entries at the top of the workspace that commands may not create or change.
   * @default PROTECTED_WORKSPACE_ENTRIES
   */
  protectedEntries?: readonly string[];
  /**
   * The environment commands inherit from (through an allow-list when confined).
   * @default process.env
   */
  hostEnvironment?: Readonly<Record<string, string | undefined>>;
  /**
   * Where the wrapper keeps what it learnt about each workspace between commands (the folder
   * walk), brought up to date on every command.
   * @default a cache of its own
   */
  hostFactsCache?: HostFactsCache;
  /**
   * Keep a bubblewrap sandbox running between commands that come in a burst (a command starting
   * within `warmIdleMs` of the last one's end in the same workspace, mode and network), and
   * run the next ones in it: a fork and an exec instead of a new sandbox. It is used only while
   * the sandbox's argv and the identity of every protected path are unchanged, kills everything a
   * command left before the next one starts, empties its private folders, and stops after
   * `warmIdleMs` unused. Needs `/usr/bin/perl` (the server inside, `session-server.ts`);
   * without them, or with `warmIdleMs: 0`, every command gets a sandbox of its own, as
   * does every command with a domain list (its proxy and the proxy's log are its own).
   * @default true
   */
  warmSandbox?: boolean;
  /**
   * More paths that commands in `read-only` and `workspace-write` cannot read, besides what their
   * view of the host leaves out (every home, see `readView`) and the system's secret files (see
   * `hiddenReads`):
   * absolute, or relative to the current folder; globs (`**\/.env`), matched against what exists
   * at each use; presets (`@secrets`: the workspace's `.env` and `.env.*` files but examples and
   * templates). Reading one fails with "Permission denied" (a folder is covered by an empty one
   * nobody may list, a file by a `/dev/null` nobody may open).
   * @default []
   */
  hideReads?: readonly string[];
  /**
   * Paths to give back to commands, read-only (`~/.npmrc`, say): one outside their view of the
   * host (in a home, or a folder at the top of the host that is not the system's) is shown again,
   * and every hidden path at or inside one of these is readable again. A path inside a hidden
   * folder that is not itself hidden is refused with `INVALID_INPUT`: allow the folder.
   * @default []
   */
  allowReads?: readonly string[];
  /**
   * Let commands in `workspace-write` write git's objects, refs, index, `HEAD`, logs and lock
   * files, so that `git commit`, `checkout -b`, `stash`, `rebase` and `merge` work. What git runs
   * programs through stays protected in every repository of the workspace (config, hooks,
   * `commondir`, ... see `GIT_RUN_ENTRIES`); submodules' git directories and a `.git` file's stay
   * protected whole; exec lines a command leaves in a rebase's todo list are commented out when
   * it ends. A command can then rewrite or delete the repository's history.
   * @default false
   */
  allowGitWrites?: boolean;
  /**
   * Kept caches for confined commands: a private folder per workspace,
   * `${XDG_CACHE_HOME:-~/.cache}/pleach/caches/<first 16 hex digits of the sha256 of its real
   * path>/`, writable in `read-only` and `workspace-write`, that `GOCACHE`, `GOMODCACHE`,
   * `CARGO_HOME`, `PIP_CACHE_DIR`, `UV_CACHE_DIR`, `npm_config_cache` and `XDG_CACHE_HOME` point
   * into (the caller's `env` still wins). Never the host's own caches, which a command could
   * poison. Emptied once found over `maxBytes` (measured at the first command of a workspace in
   * the process, then at most once a minute after a command ends). The default bound holds a
   * mid-sized project's Go build cache and module cache, or a cargo registry, several times over,
   * while keeping the disk a workspace can take to a few percent of a laptop's. `false`: none,
   * commands write caches in their private `/tmp`, emptied after each command.
   * @default { maxBytes: 4 GiB }
   */
  caches?: boolean | { maxBytes?: number };
  /**
   * Folders besides the workspace that commands in `workspace-write` may write (a build output, a
   * scratch folder): absolute, or relative to the current folder, existing. Each is checked at
   * every command (`writableFolders`) and refused with `INVALID_INPUT` when it overlaps the
   * workspace, a system folder, a home or a home's dot-entries, a folder a host variable with a
   * role names (`PATH`, ...), a hidden path or pleach's own caches and state. Inside each the
   * workspace's rules hold: its repositories' git machinery and its host-run entries stay
   * read-only, and what a command makes at a missing protected path or as a new repository is
   * moved aside or made inert when it ends. In `read-only` mode they are shown read-only.
   * @default []
   */
  allowWrites?: readonly string[];
  /**
   * The home folders whose credential stores are hidden.
   * @default the running user's home in the user database (`os.userInfo().homedir`) and `HOME`
   */
  credentialHomes?: readonly string[];
}
