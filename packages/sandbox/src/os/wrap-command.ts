import { ToolError } from "@pleach/core";
import { policyProxyEnvironment } from "../network/proxy-forwarder.js";
import { requestedEnvironment } from "../policy/protected-entries.js";
import { BUBBLEWRAP_COMMAND_FD, BUBBLEWRAP_PATH, bubblewrapArguments } from "./bubblewrap.js";
import { SHELL, shellCommand } from "./command-text.js";
import type { HostFacts } from "./host-facts.js";
import type { SandboxPolicy } from "./sandbox-policy.js";
import { SANDBOX_EXEC_PATH, seatbeltProfile } from "./seatbelt.js";
import { SECCOMP_ARCHITECTURES, seccompFilter } from "./seccomp.js";

export type { SandboxPolicy } from "./sandbox-policy.js";

/** Options of {@link wrapCommand}. */
export interface WrapCommandOptions {
  /** The shell command, run by `/bin/bash -c` inside the sandbox. */
  command: string;
  policy: SandboxPolicy;
  hostFacts: HostFacts;
}

/** A confined invocation: an argv and the launcher's environment, never a shell string of ours. */
export interface WrappedCommand {
  file: string;
  args: string[];
  env: Record<string, string>;
  /**
   * What the launcher reads from fd 3 and up: bubblewrap's seccomp filter (`--seccomp 3`), then a
   * long command's text (`shellCommand`).
   */
  inputs?: readonly Uint8Array[];
}

/**
 * The invocation that runs `command` confined by `policy` on the host described by `hostFacts`.
 * Pure: the same inputs give the same argv, which is what the snapshot tests pin down.
 */
export function wrapCommand({ command, policy, hostFacts }: WrapCommandOptions): WrappedCommand {
  if (policy.backend === "bubblewrap") {
    const seccomp = seccompFilter(process.arch);
    if (seccomp === undefined) {
      // Not bubblewrap's fault: installing it again would not help, so no install hint.
      const reason =
        `pleach has no seccomp filter for ${process.arch} (only for ${SECCOMP_ARCHITECTURES.join(", ")}), ` +
        "without which a command could leave a setuid or setgid program in the workspace";
      throw new ToolError(
        "NO_SANDBOX",
        `commands cannot run in ${policy.mode} mode: ${reason}. ` +
          "Use mode danger-full-access to run them unconfined, deliberately.",
        { details: { backend: policy.backend, reason } },
      );
    }
    const shell = shellCommand(command, BUBBLEWRAP_COMMAND_FD);
    return {
      file: hostFacts.bubblewrap?.path ?? BUBBLEWRAP_PATH,
      args: bubblewrapArguments({
        shell: shell.args,
        ...(shell.input === undefined ? {} : { keepFd: BUBBLEWRAP_COMMAND_FD }),
        policy,
        hostFacts,
      }),
      env: { ...hostFacts.inheritedEnvironment },
      inputs: shell.input === undefined ? [seccomp] : [seccomp, shell.input],
    };
  }
  if (policy.backend === "seatbelt") {
    const requested = requestedEnvironment(policy.env, policyProxyEnvironment(policy.network));
    const env = { ...hostFacts.inheritedEnvironment };
    for (const [name, value] of Object.entries(requested)) {
      // The dynamic loader's variables would act on the launcher before the profile applies.
      if (!name.startsWith("DYLD_")) env[name] = value;
    }
    // sandbox-exec passes its descriptors on: a long command's text is read from fd 3.
    const shell = shellCommand(command, 3);
    return {
      file: SANDBOX_EXEC_PATH,
      args: ["-p", seatbeltProfile({ policy, hostFacts }), "--", SHELL, ...shell.args],
      env,
      ...(shell.input === undefined ? {} : { inputs: [shell.input] }),
    };
  }
  throw new ToolError("NO_SANDBOX", `unknown sandbox backend ${JSON.stringify(policy.backend)}`);
}
