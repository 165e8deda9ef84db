import { ToolError } from "@pleach/core";
import { type CommandWrapper, protectionWith, runApart } from "../os/command-wrapper.js";
import type { HiddenScope } from "../policy/hidden-reads.js";

/** Options of {@link hidePaths}. */
export interface HidePathsOptions {
  wrapper: CommandWrapper;
  /** Folders whose contents commands must not see (the server's root of all workspaces). */
  folders: readonly string[];
  /** Files commands must not read (the server's token file). */
  files: readonly string[];
}

/**
 * A command wrapper that also hides host paths from confined commands. Bubblewrap shows the host
 * read-only, so a command of one sandbox could read a sibling sandbox's workspace or the server's
 * token: an empty tmpfs over the folder of all workspaces (the sandbox's own workspace is bound
 * over it later) and `/dev/null` over each file stop that. Unconfined invocations (bash in
 * `danger-full-access`) are left as they are; Seatbelt confines reads by its profile.
 */
export function hidePaths({ wrapper, folders, files }: HidePathsOptions): CommandWrapper {
  const masks = [
    ...folders.flatMap((folder) => ["--tmpfs", folder]),
    ...files.flatMap((file) => ["--ro-bind", "/dev/null", file]),
  ];
  return {
    backend: wrapper.backend,
    ...(wrapper.close === undefined ? {} : { close: () => wrapper.close?.() ?? Promise.resolve() }),
    ...(wrapper.protection === undefined
      ? {}
      : { protection: (root: string) => protectionWith(wrapper, root) }),
    ...(wrapper.hiddenReads === undefined
      ? {}
      : {
          hiddenReads: (root: string, scope?: HiddenScope) =>
            wrapper.hiddenReads?.(root, scope) ?? [],
        }),
    // The looks at what a session's jobs made between calls (moved aside, made inert).
    ...(wrapper.madeSince === undefined ? {} : { madeSince: wrapper.madeSince.bind(wrapper) }),
    ...(wrapper.look === undefined ? {} : { look: wrapper.look.bind(wrapper) }),
    async invocation(request) {
      const invocation = await wrapper.invocation(request);
      // Unconfined (danger-full-access) commands see the host, deliberately.
      if (wrapper.backend !== "bubblewrap" || masks.length === 0) return invocation;
      if (request.mode === "danger-full-access") return invocation;
      // Mounts apply in order: right after the read-only host, before the workspace's own bind.
      const masked = withMasks(invocation.args);
      if (masked === undefined) {
        await invocation.release();
        throw new ToolError(
          "NO_SANDBOX",
          "cannot hide the other sandboxes and the server's token from this command (the launcher's arguments are not bubblewrap's as expected), so it does not run",
        );
      }
      // A warm sandbox was started from the wrapper's own arguments, without the masks: the
      // command never runs in one, it gets a sandbox of its own with them. A session sandbox is
      // built from its own copy of the arguments: it gets the masks too.
      const sandboxArgs =
        invocation.kind === "session" && invocation.warm === undefined
          ? withMasks(invocation.spec.sandboxArgs)
          : undefined;
      if (invocation.kind === "one-off" || sandboxArgs === undefined) {
        return { ...runApart(invocation), args: masked };
      }
      return {
        ...invocation,
        args: masked,
        key: `${invocation.key}\n${JSON.stringify(masks)}`,
        spec: { ...invocation.spec, sandboxArgs },
      };
    },
  };

  /** `args` with the masks right after the bind of the read-only host; `undefined` without one. */
  function withMasks(args: readonly string[]): string[] | undefined {
    const at = hostBindEnd(args);
    return at === undefined ? undefined : [...args.slice(0, at), ...masks, ...args.slice(at)];
  }
}

function hostBindEnd(args: readonly string[]): number | undefined {
  for (let index = 0; index + 2 < args.length; index += 1) {
    if (args[index] === "--") return undefined;
    if (args[index] === "--ro-bind" && args[index + 1] === "/" && args[index + 2] === "/") {
      return index + 3;
    }
  }
  return undefined;
}
