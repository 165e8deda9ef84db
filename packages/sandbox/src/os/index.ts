import type { SandboxMode } from "@pleach/coding-agent/sandbox";
import { ToolError } from "@pleach/core";
import { createHostFactsCache, gatherHostFacts, type HostFactsCache } from "./host-facts.js";
import { acquirePlaceholders, removeIdlePlaceholders } from "./placeholders.js";
import { installHint, probeSandboxBackend } from "./probe.js";
import { PROTECTED_WORKSPACE_ENTRIES } from "./protected-entries.js";
import { wrapCommand } from "./wrap-command.js";

export type { BubblewrapArgumentsOptions } from "./bubblewrap.js";
export { BUBBLEWRAP_PATH, bubblewrapArguments } from "./bubblewrap.js";
export type { WorkspaceScan, WorkspaceWalker, WorkspaceWalkerOptions } from "./folder-walk.js";
export { createWorkspaceWalker } from "./folder-walk.js";
export type {
  BubblewrapFacts,
  GatherHostFactsOptions,
  HostFacts,
  HostFactsCache,
  HostFactsCacheOptions,
  ProtectedPath,
  ProtectedPathState,
} from "./host-facts.js";
export { createHostFactsCache, gatherHostFacts } from "./host-facts.js";
export type { BackendProbe, ProbeSandboxBackendOptions } from "./probe.js";
export { installHint, probeSandboxBackend } from "./probe.js";
export type { InheritedEnvironmentOptions } from "./protected-entries.js";
export {
  inheritedEnvironment,
  isSecretLookingName,
  PROTECTED_WORKSPACE_ENTRIES,
  requestedEnvironment,
} from "./protected-entries.js";
export type { SeatbeltProfileOptions } from "./seatbelt.js";
export { SANDBOX_EXEC_PATH, seatbeltProfile } from "./seatbelt.js";
export type { SandboxPolicy, WrapCommandOptions, WrappedCommand } from "./wrap-command.js";
export { wrapCommand } from "./wrap-command.js";

/** How to start a command: an argv and an environment, never a shell string built by us. */
export interface CommandInvocation {
  file: string;
  args: string[];
  env: Record<string, string>;
  /**
   * Call once the process group is gone (after exit, timeout, abort, or a failed spawn): it lets
   * go of the placeholder folders that kept missing protected paths uncreatable, which are removed
   * once no command has used them for `placeholderIdleMs`. Safe to call twice; absent when there
   * is nothing to undo.
   */
  release?: () => Promise<void>;
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
   * that changed (see `createWorkspaceWalker`).
   * @default 20_000
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
}

const SHELL = "/bin/bash";

/**
 * The wrapper of the local sandbox. Confined modes run through the OS sandbox (bubblewrap on
 * Linux, Seatbelt on macOS); `danger-full-access` runs `/bin/bash -c` unconfined. Without a working
 * backend every other mode refuses with `NO_SANDBOX`, never falling back silently.
 */
export function createCommandWrapper({
  backend = "auto",
  maxDirectories = 20_000,
  protectedEntries = PROTECTED_WORKSPACE_ENTRIES,
  hostEnvironment = process.env,
  placeholderIdleMs = 200,
  hostFactsCache: cache = createHostFactsCache(),
}: CommandWrapperOptions = {}): CommandWrapper {
  const chosen = backend === "auto" ? platformBackend() : backend;
  return {
    backend: chosen,
    async close() {
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
          ? acquirePlaceholders(hostFacts.protectedPaths, { idleMs: placeholderIdleMs })
          : undefined;
      try {
        const wrapped = wrapCommand({
          command,
          policy: { backend: chosen, mode, cwd, network, env },
          hostFacts:
            lease === undefined
              ? hostFacts
              : { ...hostFacts, protectedPaths: lease.protectedPaths },
        });
        return lease === undefined ? wrapped : { ...wrapped, release: lease.release };
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
