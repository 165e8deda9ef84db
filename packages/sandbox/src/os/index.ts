import { ToolError } from "@pleach/core";
import type { ExecResult, SandboxMode } from "@pleach/core/sandbox";
import { bubblewrapSandboxArguments } from "./bubblewrap.js";
import {
  createHostFactsCache,
  currentProtection,
  gatherHostFacts,
  type HostFactsCache,
  type WorkspaceProtection,
} from "./host-facts.js";
import {
  acquirePlaceholders,
  removeIdlePlaceholders,
  withPlaceholdersVariable,
} from "./placeholders.js";
import { installHint, probeSandboxBackend } from "./probe.js";
import { PROTECTED_WORKSPACE_ENTRIES, requestedEnvironment } from "./protected-entries.js";
import {
  pathIdentities,
  type WarmRunOptions,
  WarmSandbox,
  warmSandboxSupported,
} from "./warm-sandbox.js";
import { wrapCommand } from "./wrap-command.js";

export type { BubblewrapArgumentsOptions } from "./bubblewrap.js";
export {
  BUBBLEWRAP_PATH,
  bubblewrapArguments,
  bubblewrapSandboxArguments,
} from "./bubblewrap.js";
export type { WorkspaceScan, WorkspaceWalker, WorkspaceWalkerOptions } from "./folder-walk.js";
export { createWorkspaceWalker } from "./folder-walk.js";
export type {
  BubblewrapFacts,
  CurrentProtectionOptions,
  GatherHostFactsOptions,
  HostFacts,
  HostFactsCache,
  HostFactsCacheOptions,
  ProtectedPath,
  ProtectedPathState,
  WorkspaceProtection,
} from "./host-facts.js";
export { createHostFactsCache, currentProtection, gatherHostFacts } from "./host-facts.js";
export type { BackendProbe, ProbeSandboxBackendOptions } from "./probe.js";
export { installHint, probeSandboxBackend } from "./probe.js";
export type { InheritedEnvironmentOptions } from "./protected-entries.js";
export {
  HOME_FOLDER_ENTRIES,
  inheritedEnvironment,
  isSecretLookingName,
  PROTECTED_ENTRIES,
  PROTECTED_WORKSPACE_ENTRIES,
  requestedEnvironment,
} from "./protected-entries.js";
export type { SeatbeltProfileOptions } from "./seatbelt.js";
export { SANDBOX_EXEC_PATH, seatbeltProfile } from "./seatbelt.js";
export type { WarmRunOptions } from "./warm-sandbox.js";
export { warmSandboxSupported } from "./warm-sandbox.js";
export type { SandboxPolicy, WrapCommandOptions, WrappedCommand } from "./wrap-command.js";
export { wrapCommand } from "./wrap-command.js";

/** How to start a command: an argv and an environment, never a shell string built by us. */
export interface CommandInvocation {
  file: string;
  args: string[];
  env: Record<string, string>;
  /**
   * What `file` reads from its file descriptors 3, 4, ..., in order: spawn it with one pipe per
   * input past stdio, each holding its data and then closed (`inputPipes` and `feedInputs` in
   * `launcher-inputs.ts`). Bubblewrap reads its seccomp filter from fd 3 this way and refuses to
   * start without it. Absent when there is none.
   */
  inputs?: readonly Uint8Array[];
  /**
   * Call once the process group is gone (after exit, timeout, abort, or a failed spawn): it lets
   * go of the placeholder folders that kept missing protected paths uncreatable, which are removed
   * once no command has used them for `placeholderIdleMs`. Safe to call twice; absent when there
   * is nothing to undo.
   */
  release?: () => Promise<void>;
  /**
   * A warm sandbox ready for this very command (see `warmSandbox`): `run` runs it there and
   * settles as a spawn of `file` would, or returns `undefined` if the sandbox was taken or went
   * away meanwhile (then spawn `file`). Only for commands without stdin.
   */
  warm?: { run(options: WarmRunOptions): Promise<ExecResult> | undefined };
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
  /** Whether the command may reach the network (ignored in `danger-full-access`). */
  network: boolean;
}

/** Turns a command into a confined invocation, or refuses. */
export interface CommandWrapper {
  readonly backend: "bubblewrap" | "seatbelt" | "none";
  /** The invocation for `request`; throws `ToolError` `NO_SANDBOX` when it cannot confine it. */
  invocation(request: InvocationRequest): Promise<CommandInvocation>;
  /**
   * Remove now the placeholder folders no running command holds (in this process), rather than
   * after the idle time. The wrapper stays usable. Optional: wrappers with nothing to tidy leave
   * it out.
   */
  close?(): Promise<void>;
  /**
   * What is protected in the workspace `root` now, by the same policy, walk and options the
   * wrapper confines commands with: what host-side writers (the file tools, the server's file
   * route) refuse to write. Optional: without it they use {@link currentProtection}'s defaults.
   */
  protection?(root: string): Promise<WorkspaceProtection>;
}

/**
 * What `wrapper` protects in the workspace `root` now ({@link CommandWrapper.protection}), or the
 * default policy when the wrapper does not say.
 */
export function protectionWith(
  wrapper: CommandWrapper,
  root: string,
): Promise<WorkspaceProtection> {
  return wrapper.protection?.(root) ?? currentProtection({ root, cache: defaultHostFactsCache() });
}

let sharedCache: HostFactsCache | undefined;

/** One cache for the wrappers and writers made without one, so that they share a walk. */
function defaultHostFactsCache(): HostFactsCache {
  sharedCache ??= createHostFactsCache();
  return sharedCache;
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
   * The first command of a workspace reads them all; later ones `lstat` each and read only those
   * that changed (see `createWorkspaceWalker`). A workspace with more is refused in
   * `workspace-write` (`TOO_LARGE`), for commands and writes alike: a repository past the limit
   * could not be protected.
   * @default 200_000
   */
  maxDirectories?: number;
  /**
   * How long the placeholder folders at missing protected paths (`.envrc/`, `.vscode/`, ...: empty,
   * mode 555) stay in the workspace after the last command that used them, so that commands run
   * back to back (a tool's several commands, a script, a test run) make them once rather than
   * each time. `0` removes them as each command ends, leaving the workspace exactly as it was.
   * They are also removed by `close()` and at process exit.
   * @default 200
   */
  placeholderIdleMs?: number;
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
   * walk), revalidated on every command.
   * @default a cache of its own
   */
  hostFactsCache?: HostFactsCache;
  /**
   * Keep a bubblewrap sandbox running between commands that come in a burst (a command starting
   * within `placeholderIdleMs` of the last one's end in the same workspace, mode and network), and
   * run the next ones in it: a fork and an exec instead of a new sandbox. It is used only while
   * the sandbox's argv and the identity of every protected path are unchanged, kills everything a
   * command left before the next one starts, empties its private folders, and stops after
   * `placeholderIdleMs` unused. Needs `/usr/bin/perl` (the server inside) and `/usr/bin/mkfifo`;
   * without them, or with `placeholderIdleMs: 0`, every command gets a sandbox of its own.
   * @default true
   */
  warmSandbox?: boolean;
}

/** The warm sandbox of one workspace, mode and network, and when its last command ended. */
interface WarmSlot {
  key: string;
  sandbox: WarmSandbox | undefined;
  running: number;
  lastEnded: number;
}

const SHELL = "/bin/bash";

/**
 * The wrapper of the local sandbox. Confined modes run through the OS sandbox (bubblewrap on
 * Linux, Seatbelt on macOS); `danger-full-access` runs `/bin/bash -c` unconfined. Without a working
 * backend every other mode refuses with `NO_SANDBOX`, never falling back silently.
 */
export function createCommandWrapper({
  backend = "auto",
  maxDirectories = 200_000,
  protectedEntries = PROTECTED_WORKSPACE_ENTRIES,
  hostEnvironment = process.env,
  placeholderIdleMs = 200,
  hostFactsCache: cache = defaultHostFactsCache(),
  warmSandbox = true,
}: CommandWrapperOptions = {}): CommandWrapper {
  const chosen = backend === "auto" ? platformBackend() : backend;
  let warmEnabled =
    warmSandbox && placeholderIdleMs > 0 && chosen === "bubblewrap" && warmSandboxSupported();
  const warmSlots = new Map<string, WarmSlot>();

  /** The warm sandbox for this command, if one is ready; starts one when a burst begins. */
  const warmFor = (
    slotId: string,
    key: string,
    start: () => WarmSandbox,
  ): { sandbox: WarmSandbox | undefined; started: WarmSandbox | undefined; done: () => void } => {
    const now = performance.now();
    for (const [id, slot] of warmSlots) {
      if (
        slot.sandbox === undefined &&
        slot.running === 0 &&
        now - slot.lastEnded > placeholderIdleMs
      ) {
        warmSlots.delete(id);
      }
    }
    let slot = warmSlots.get(slotId);
    if (slot !== undefined && slot.key !== key) {
      // The policy or a protected path changed: this sandbox no longer matches.
      void slot.sandbox?.retire();
      slot.sandbox = undefined;
      slot.key = key;
    }
    if (slot === undefined) {
      slot = { key, sandbox: undefined, running: 0, lastEnded: Number.NEGATIVE_INFINITY };
      warmSlots.set(slotId, slot);
    }
    if (slot.sandbox !== undefined && !slot.sandbox.alive) slot.sandbox = undefined;
    const burst = slot.running > 0 || now - slot.lastEnded <= placeholderIdleMs;
    const started = slot.sandbox === undefined && burst ? start() : undefined;
    if (started !== undefined) slot.sandbox = started;
    const current = slot;
    current.running += 1;
    let ended = false;
    return {
      sandbox: current.sandbox?.idle ? current.sandbox : undefined,
      started,
      done() {
        if (ended) return;
        ended = true;
        current.running -= 1;
        current.lastEnded = performance.now();
      },
    };
  };

  return {
    backend: chosen,
    protection: (root) =>
      currentProtection({ root, maxDirectories, protectedEntries, hostEnvironment, cache }),
    async close() {
      const sandboxes = [...warmSlots.values()].map((slot) => slot.sandbox);
      warmSlots.clear();
      await Promise.all(sandboxes.map((sandbox) => sandbox?.destroy()));
      removeIdlePlaceholders();
    },
    async invocation({ command, root, cwd, mode, env, network }) {
      if (mode === "danger-full-access") {
        return {
          file: SHELL,
          args: ["-c", command],
          env: { ...definedOnly(hostEnvironment), ...env },
        };
      }
      if (mode !== "read-only" && mode !== "workspace-write") {
        throw new ToolError("INVALID_INPUT", `unknown sandbox mode ${JSON.stringify(mode)}`);
      }
      if (chosen === "none") throw noSandbox(mode, "none", "no OS sandbox backend is configured");
      const probe = await probeSandboxBackend({ backend: chosen });
      if (!probe.available) throw noSandbox(mode, chosen, probe.reason);
      const protect = mode === "workspace-write";
      const hostFacts = await gatherHostFacts({
        root,
        protect,
        maxDirectories,
        protectedEntries,
        hostEnvironment,
        cache,
        ...(probe.backend === "bubblewrap" ? { bubblewrap: probe.bubblewrap } : {}),
      });
      // Seatbelt matches paths, so missing protected paths need no placeholder there.
      const lease =
        protect && chosen === "bubblewrap"
          ? acquirePlaceholders(hostFacts.protectedPaths, {
              idleMs: placeholderIdleMs,
              command: true,
            })
          : undefined;
      try {
        // The command is told which of the folders it sees are placeholders (PLEACH_PLACEHOLDERS).
        const commandVariables =
          lease === undefined ? env : withPlaceholdersVariable(env, lease.protectedPaths);
        const policy = { backend: chosen, mode, cwd, network, env: commandVariables } as const;
        const facts =
          lease === undefined ? hostFacts : { ...hostFacts, protectedPaths: lease.protectedPaths };
        const wrapped = wrapCommand({ command, policy, hostFacts: facts });
        if (!warmEnabled || chosen !== "bubblewrap") {
          return lease === undefined ? wrapped : { ...wrapped, release: lease.release };
        }
        const sandboxArgs = bubblewrapSandboxArguments({ policy, hostFacts: facts });
        const inWorkspace = new Set([root]);
        for (const arg of sandboxArgs) if (arg.startsWith(`${root}/`)) inWorkspace.add(arg);
        const key = `${JSON.stringify([wrapped.file, sandboxArgs, wrapped.env])}\n${pathIdentities(root, inWorkspace)}`;
        const warm = warmFor(`${root}\0${mode}\0${network}`, key, () => {
          const sandbox = new WarmSandbox(
            {
              file: wrapped.file,
              sandboxArgs,
              inputs: wrapped.inputs ?? [],
              protectedPaths: facts.protectedPaths,
              cleanFolders: [
                "/tmp",
                "/run",
                "/dev",
                "/dev/shm",
                ...(hostFacts.varRunIsDirectory ? ["/var/run"] : []),
              ],
              placeholderIdleMs,
            },
            placeholderIdleMs,
            (_gone, startFailed) => {
              // A host where the server cannot start (no usable Perl, say) runs one-off sandboxes.
              if (startFailed) warmEnabled = false;
            },
          );
          return sandbox;
        });
        const ready = warm.sandbox;
        const release = async () => {
          warm.done();
          // The call that starts a warm sandbox ends once it is up: bubblewrap makes its mount
          // points in the workspace as it starts, which must not happen after the call.
          await warm.started?.ready;
          // A sandbox killed under its command (a timeout, an abort) holds the command's lease
          // until it is gone, so that exit does not remove a placeholder it still mounts over.
          if (ready !== undefined && !ready.alive) await ready.destroy();
          await lease?.release();
        };
        const commandEnv = { ...wrapped.env, ...requestedEnvironment(policy.env) };
        return {
          ...wrapped,
          release,
          ...(ready === undefined
            ? {}
            : {
                warm: { run: (options) => ready.run({ cwd, command, env: commandEnv }, options) },
              }),
        };
      } catch (error) {
        await lease?.release();
        throw error;
      }
    },
  };
}

function platformBackend(): "bubblewrap" | "seatbelt" | "none" {
  if (process.platform === "linux") return "bubblewrap";
  if (process.platform === "darwin") return "seatbelt";
  return "none";
}

function noSandbox(
  mode: string,
  backend: "bubblewrap" | "seatbelt" | "none",
  reason: string,
): ToolError {
  return new ToolError(
    "NO_SANDBOX",
    `commands cannot run in ${mode} mode: ${reason}. ${installHint(backend)} ` +
      "Or use mode danger-full-access to run them unconfined, deliberately.",
    { details: { backend, reason } },
  );
}

function definedOnly(
  environment: Readonly<Record<string, string | undefined>>,
): Record<string, string> {
  const defined: Record<string, string> = {};
  for (const [key, value] of Object.entries(environment)) {
    if (value !== undefined) defined[key] = value;
  }
  return defined;
}
