import { ToolError } from "@pleach/core";
import { workspaceCachesOf } from "../caches/workspace-caches.js";
import { watchGitRunEntries } from "../made-by-commands/git-run-watch.js";
import { failedLook, workspaceLooks } from "../made-by-commands/workspace-looks.js";
import { type CommandProxy, startCommandProxy } from "../network/command-proxy.js";
import { type DomainRules, everyDomain } from "../network/domain-rules.js";
import { policyProxyEnvironment } from "../network/proxy-forwarder.js";
import { isInside } from "../paths.js";
import { hiddenReads } from "../policy/hidden-reads.js";
import {
  nonInteractiveEnvironment,
  PROTECTED_WORKSPACE_ENTRIES,
  requestedEnvironment,
} from "../policy/protected-entries.js";
import { writableFoldersOf } from "../policy/writable-folders.js";
import { bubblewrapSandboxArguments } from "./bubblewrap.js";
import { SHELL, shellCommand } from "./command-text.js";
import type {
  CommandInvocation,
  CommandWrapper,
  CommandWrapperOptions,
  Confinement,
  InvocationRequest,
  SessionInvocation,
} from "./command-wrapper.js";
import {
  currentProtection,
  gatherHostFacts,
  type HostFacts,
  sharedHostFactsCache,
} from "./host-facts.js";
import { type BackendProbe, noSandbox, probeSandboxBackend } from "./probe.js";
import type { SandboxPolicy } from "./sandbox-policy.js";
import type { SessionSandbox } from "./session-sandbox.js";
import { sessionServerSupported } from "./session-server.js";
import { pathIdentities, startWarmSandbox, WarmSlots } from "./warm-slots.js";
import { wrapCommand } from "./wrap-command.js";

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
  warmIdleMs = 200,
  hostFactsCache: cache = sharedHostFactsCache(),
  warmSandbox = true,
  hideReads = [],
  allowReads = [],
  credentialHomes,
  allowGitWrites = false,
  caches,
  allowWrites = [],
}: CommandWrapperOptions = {}): CommandWrapper {
  const workspaceCaches = workspaceCachesOf(caches, hostEnvironment);
  const readPolicy = {
    hideReads,
    allowReads,
    ...(credentialHomes === undefined ? {} : { credentialHomes }),
  };
  /** The folders besides the workspace `root` that commands may write now (checked afresh). */
  const foldersOf = writableFoldersOf({ allowWrites, hostEnvironment, readPolicy });
  const looks = workspaceLooks({
    maxDirectories,
    protectedEntries,
    hostEnvironment,
    cache,
    gitWrites: allowGitWrites,
    writableFolders: foldersOf,
  });
  const chosen = backend === "auto" ? platformBackend() : backend;
  let warmEnabled =
    warmSandbox && warmIdleMs > 0 && chosen === "bubblewrap" && sessionServerSupported();
  const warmSlots = new WarmSlots(warmIdleMs);
  let probed: BackendProbe | undefined;

  return {
    backend: chosen,
    protection: (root) =>
      currentProtection({
        root,
        maxDirectories,
        protectedEntries,
        hostEnvironment,
        cache,
        gitWrites: allowGitWrites,
        // The writable folders' repositories may keep machinery in the workspace.
        otherRoots: foldersOf(root),
      }),
    hiddenReads: (root, scope) => hiddenReads({ root, hostEnvironment, scope, ...readPolicy }),
    madeSince: (root, since) => looks.madeSince(root, since),
    look: (root) => looks.look(root),
    async close() {
      await warmSlots.destroyAll();
    },
    async invocation({
      command,
      root,
      cwd,
      mode,
      env,
      network,
      session = false,
      since,
    }): Promise<CommandInvocation> {
      if (mode === "danger-full-access") {
        // A long command's text is read from fd 3 (`shellCommand`).
        const shell = shellCommand(command, 3);
        return {
          kind: "one-off",
          file: SHELL,
          args: shell.args,
          env: { ...definedOnly(hostEnvironment), ...nonInteractiveEnvironment(), ...env },
          ...(shell.input === undefined ? {} : { inputs: [shell.input] }),
          release: async () => {},
        };
      }
      if (mode !== "read-only" && mode !== "workspace-write") {
        throw new ToolError("INVALID_INPUT", `unknown sandbox mode ${JSON.stringify(mode)}`);
      }
      if (chosen === "none") throw noSandbox(mode, "none", "no OS sandbox backend is configured");
      // A process's first call probes the backend by running a sandbox: meanwhile the host is
      // looked at (the workspace's first walk), which a failed probe leaves unused.
      const looking = probed === undefined ? hostFactsOf(root, mode) : undefined;
      looking?.catch(() => {});
      probed ??= await probeSandboxBackend({ backend: chosen });
      const probe = probed;
      if (!probe.available) throw noSandbox(mode, chosen, probe.reason);
      const request = {
        command,
        root,
        cwd,
        mode,
        env,
        backend: chosen,
        probe,
        session,
        ...(since === undefined ? {} : { since }),
        ...(looking === undefined ? {} : { looking }),
      };
      // The whole network under bubblewrap goes through the proxy too, allowing every name: in
      // the host's network namespace a command would reach the host's abstract Unix sockets (X11,
      // D-Bus, container shims) and its loopback services, which no mount can hide.
      const rules = network === true && chosen === "bubblewrap" ? everyDomain() : network;
      if (typeof rules !== "object") return confined({ ...request, network: rules });
      // A domain policy: a proxy of the command's own, stopped once its process group is gone. A
      // session's command runs through the proxy its session sandbox holds; its own is there for
      // when it runs apart (its sandbox cannot start, or the jobs hold one of other rules).
      const proxy = await startCommandProxy(rules, chosen);
      try {
        return await confined({ ...request, network: proxy.network, proxy, rules });
      } catch (error) {
        await proxy.close();
        throw error;
      }
    },
  };

  /** The invocation in the OS sandbox `backend`, with the policy's network. */
  async function confined({
    command,
    root,
    cwd,
    mode,
    env,
    network,
    backend,
    probe,
    session,
    since,
    proxy,
    rules,
    looking,
  }: Omit<InvocationRequest, "network" | "mode"> & {
    mode: SandboxPolicy["mode"];
    network: SandboxPolicy["network"];
    backend: SandboxPolicy["backend"];
    probe: Extract<BackendProbe, { available: true }>;
    /** With a domain policy: the command's own proxy, and its rules. */
    proxy?: CommandProxy;
    rules?: DomainRules;
    /** The look at the host taken while the backend was probed. */
    looking?: Promise<HostFacts>;
  }): Promise<CommandInvocation> {
    const protect = mode === "workspace-write";
    const hostFacts = {
      ...(await (looking ?? hostFactsOf(root, mode))),
      ...(probe.backend === "bubblewrap" ? { bubblewrap: probe.bubblewrap } : {}),
    };
    const folders = hostFacts.writableFolders ?? [];
    const cacheTurn = workspaceCaches?.take(root, hostFacts.hiddenPaths);
    // With git writes, what git on the host reads at once is watched while the command runs.
    const gitRunWatch =
      protect && allowGitWrites
        ? watchGitRunEntries([hostFacts.root, ...folders], hostFacts.protectedPaths)
        : undefined;
    const policy = {
      backend,
      mode,
      cwd,
      network,
      // The caches' variables under the caller's own.
      env: { ...cacheTurn?.environment, ...env },
      ...(cacheTurn?.folder === undefined ? {} : { caches: cacheTurn.folder }),
    } as const;
    let launch: ReturnType<typeof wrapCommand>;
    try {
      launch = wrapCommand({ command, policy, hostFacts });
    } catch (error) {
      cacheTurn?.done();
      gitRunWatch?.close();
      throw error;
    }
    const confinement: Confinement = {
      policy: {
        backend,
        mode,
        // A domain list's refusals are the proxy's own notes.
        network: network !== false,
        root: hostFacts.root,
        cwd,
        protectedPaths: hostFacts.protectedPaths,
        hiddenPaths: hostFacts.hiddenPaths,
        ...(allowGitWrites ? { gitWrites: true } : {}),
        ...(hostFacts.readView === undefined ? {} : { readView: hostFacts.readView }),
      },
      proxyLog: proxy?.log ?? [],
      ...(protect ? { afterwards: { notes: [], look: failedLook(since, hostFacts) } } : {}),
      notes: cacheTurn?.notes ?? [],
    };
    // A domain policy's proxy and its log are the command's own, so it never runs warm; in a
    // session it runs in the session sandbox, through the proxy held for the session.
    const sessionRules = session && backend === "bubblewrap" ? rules : undefined;
    const reusable =
      backend === "bubblewrap" &&
      (session || (warmEnabled && rules === undefined)) &&
      sessionServerSupported();
    // A session's command always runs in a sandbox of its spec; a warm one only in a burst.
    let planned: ReturnType<typeof sessionPlan> | undefined;
    const planOf = () => {
      planned ??= sessionPlan();
      return planned;
    };
    if (reusable && session) planOf();
    let release = async () => {};
    let warm: SessionSandbox | undefined;
    if (reusable && !session) {
      const turn = warmSlots.take(
        `${root}\0${mode}\0${network}`,
        () => planOf().key,
        () =>
          startWarmSandbox(planOf().spec, hostFacts.varRunIsDirectory, warmIdleMs, () => {
            // A host where the server cannot start (no usable Perl, say) runs one-off sandboxes.
            warmEnabled = false;
          }),
      );
      warm = turn.sandbox;
      release = async () => {
        turn.done();
        // The call that starts a warm sandbox ends once it is up: bubblewrap makes its mount
        // points in the workspace as it starts, which must not happen after the call.
        await turn.started?.ready;
        if (warm !== undefined && !warm.alive) await warm.destroy();
      };
    }
    const base = {
      ...launch,
      confinement,
      release: finish(release, confinement),
      ...(gitRunWatch?.stop === undefined ? {} : { stop: gitRunWatch.stop }),
    };
    return planned !== undefined && (session || warm !== undefined)
      ? { kind: "session", ...base, ...planned, ...(warm === undefined ? {} : { warm }) }
      : { kind: "one-off", ...base };

    /** What a session sandbox for the command is built from, and the key it must match. */
    function sessionPlan(): Pick<SessionInvocation, "key" | "spec" | "command"> {
      // The session sandbox binds the folder of its own proxy (see `SessionSandbox`).
      const sandboxArgs = bubblewrapSandboxArguments({
        policy: sessionRules === undefined ? policy : { ...policy, network: false },
        hostFacts,
      });
      const tops = [root, ...folders];
      const inWorkspace = new Set(tops);
      for (const arg of sandboxArgs)
        if (tops.some((top) => isInside(top, arg))) inWorkspace.add(arg);
      // A hidden folder the host user replaces must not stay readable in a sandbox kept up.
      for (const { path: hidden } of hostFacts.hiddenPaths) inWorkspace.add(hidden);
      const identities = pathIdentities(tops, inWorkspace);
      return {
        key: `${JSON.stringify([launch.file, sandboxArgs, launch.env, sessionRules ?? null])}\n${identities}`,
        spec: {
          file: launch.file,
          sandboxArgs,
          // The seccomp filter only: a long command's text is the command's, not the sandbox's.
          inputs: (launch.inputs ?? []).slice(0, 1),
          protectedPaths: hostFacts.protectedPaths,
          ...(sessionRules === undefined ? {} : { network: sessionRules }),
        },
        command: {
          cwd,
          command,
          env: {
            ...launch.env,
            ...requestedEnvironment(policy.env, policyProxyEnvironment(network)),
          },
        },
      };
    }

    /**
     * `release` run once, after moving aside what the command made at missing protected paths and
     * making inert every repository it made (found by a walk once it ended, against this call's:
     * git would otherwise run its config and hooks on the host, and from the next call on they
     * would be protected as they stand), and followed by stopping the command's own proxy.
     */
    function finish(release: () => Promise<void>, { afterwards }: Confinement) {
      let finished: Promise<void> | undefined;
      return () => {
        finished ??= (async () => {
          try {
            gitRunWatch?.close();
            afterwards?.notes.push(...(gitRunWatch?.notes ?? []));
            // What a session's jobs made since its last look is theirs too: only what stood
            // then is known not to be.
            if (afterwards !== undefined) {
              const existing = hostFacts.protectedPaths.filter(({ state }) => state !== "missing");
              const found = await looks.madeSince(
                hostFacts.root,
                since ?? {
                  gitEntries: hostFacts.gitEntries,
                  unreadable: hostFacts.unreadableFolders,
                  missing: hostFacts.protectedPaths.filter(({ state }) => state === "missing"),
                  ...(folders.length === 0 ? {} : { folders }),
                },
                {
                  ...(since === undefined
                    ? { protectedBefore: existing.map(({ path }) => path) }
                    : {}),
                  // Only a session looks again from what this look found.
                  look: session,
                },
              );
              afterwards.notes.push(...found.notes);
              afterwards.look = found.look;
            }
          } catch (error) {
            afterwards?.notes.push(
              `pleach could not look for what this command made at protected paths and for repositories it made (${(error as Error).message}); do not run git or open the workspace in an editor before you looked at what it made`,
            );
          } finally {
            try {
              await release();
            } finally {
              cacheTurn?.done();
              await proxy?.close();
            }
          }
        })();
        return finished;
      };
    }
  }

  /** What the policy of a command in `mode` is computed from (the probe's findings aside). */
  function hostFactsOf(root: string, mode: SandboxPolicy["mode"]): Promise<HostFacts> {
    return gatherHostFacts({
      root,
      protect: mode === "workspace-write",
      maxDirectories,
      protectedEntries,
      hostEnvironment,
      cache,
      readPolicy,
      gitWrites: allowGitWrites,
      writableFolders: (hidden) => foldersOf(root, hidden),
    });
  }
}

function platformBackend(): "bubblewrap" | "seatbelt" | "none" {
  if (process.platform === "linux") return "bubblewrap";
  if (process.platform === "darwin") return "seatbelt";
  return "none";
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
