import { ToolError } from "@pleach/core";
import type { SandboxMode } from "@pleach/coding-agent/sandbox";

/** How to start a command: an argv and an environment, never a shell string built by us. */
export interface CommandInvocation {
  file: string;
  args: string[];
  env: Record<string, string>;
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
}

/** Options of {@link createCommandWrapper}. */
export interface CommandWrapperOptions {
  /**
   * Which OS sandbox to use. `"none"` runs only in `danger-full-access`.
   * @default "none"
   */
  backend?: "none";
}

const SHELL = "/bin/bash";

/**
 * The wrapper of the local sandbox. Without an OS sandbox backend only `danger-full-access` runs
 * commands; every other mode refuses with `NO_SANDBOX`, never falling back silently.
 */
export function createCommandWrapper(_options: CommandWrapperOptions = {}): CommandWrapper {
  return {
    backend: "none",
    async invocation({ command, mode, env }) {
      if (mode !== "danger-full-access") {
        throw new ToolError(
          "NO_SANDBOX",
          `no sandbox backend is available, so commands cannot run in ${mode} mode. ` +
            "Use mode danger-full-access to run them unconfined, deliberately.",
        );
      }
      return {
        file: SHELL,
        args: ["-c", command],
        env: { ...hostEnvironment(), ...env },
      };
    },
  };
}

function hostEnvironment(): Record<string, string> {
  const environment: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined) environment[key] = value;
  }
  return environment;
}
