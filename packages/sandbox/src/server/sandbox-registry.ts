import { randomBytes } from "node:crypto";
import { readdir, rm } from "node:fs/promises";
import path from "node:path";
import { ToolError } from "@pleach/core";
import { type SandboxMode, sandboxJobsOf } from "@pleach/core/sandbox";
import { workspaceRoot } from "../beneath.js";
import { createLocalSandbox, type LocalSandbox } from "../local-sandbox.js";
import type { NetworkOption } from "../network/domain-rules.js";
import { type CommandWrapper, hiddenWith } from "../os/command-wrapper.js";
import { isInside } from "../paths.js";
import type { LocalSessionOptions } from "../session/local-session.js";
import type { StreamingExecLimits } from "./exec-limits.js";
import { HttpError, shuttingDown } from "./http-errors.js";
import type { CreateSandboxResponse, SandboxTemplate } from "./protocol.js";
import { createRawFiles, type RawFiles } from "./raw-files.js";
import { fillWorkspace } from "./templates.js";

/** A sandbox the server hosts. */
export interface HostedSandbox {
  id: string;
  workspace: string;
  client: LocalSandbox;
  /** Its files as bytes, for the file route. */
  files: RawFiles;
  limits: StreamingExecLimits;
  lastUsed: number;
  /** Its running commands and the job output reads held waiting; aborted when it is destroyed. */
  running: Set<AbortController>;
  /**
   * Whether the server made the workspace (in its root) and removes it with the sandbox; a folder
   * named by `workspacePath` outside the root (a host folder bound into a container) is the user's.
   */
  ownsWorkspace: boolean;
}

/** Options of {@link createSandboxRegistry}: the server's options that shape its sandboxes. */
export interface SandboxRegistryOptions {
  /** The server's root, real path. */
  rootReal: string;
  /** The template root, real path. */
  templateRootReal: string | undefined;
  workspacePath: ((sandboxId: string) => string) | undefined;
  wrapper: CommandWrapper;
  mode: SandboxMode;
  network: NetworkOption;
  maxSandboxes: number;
  maxFileBytes: number;
  limits: StreamingExecLimits;
  gitProtocols: readonly string[];
  gitTimeoutMs: number;
  idleTimeoutMs: number;
  /** The limits of each sandbox's session (its jobs, the outputs it keeps). */
  session: LocalSessionOptions;
  onError: (error: Error) => void;
}

/** The sandboxes of a server: made, looked up, destroyed, and swept when idle. */
export interface SandboxRegistry {
  readonly size: number;
  create(template: SandboxTemplate | undefined): Promise<CreateSandboxResponse>;
  /** The live sandbox `id` (its use noted), or a 410 that says it is gone. */
  lookup(id: string): HostedSandbox;
  /** Whether sandbox `id` is alive (its use not noted). */
  has(id: string): boolean;
  /** Abort its commands and remove it (and its workspace, when the server made it). */
  destroy(sandbox: HostedSandbox, reason: string): Promise<void>;
  /** Stop creating and sweeping; abort every clone and every running command. */
  stop(reason: string): void;
  /** Destroy every sandbox. */
  destroyAll(reason: string): Promise<void>;
}

const ID_PATTERN = /^[a-f0-9]{32}$/;

/** The sandboxes of one server (see {@link SandboxRegistry}). */
export function createSandboxRegistry({
  rootReal,
  templateRootReal,
  workspacePath,
  wrapper,
  mode,
  network,
  maxSandboxes,
  maxFileBytes,
  limits,
  gitProtocols,
  gitTimeoutMs,
  idleTimeoutMs,
  session,
  onError,
}: SandboxRegistryOptions): SandboxRegistry {
  const sandboxes = new Map<string, HostedSandbox>();
  /** Clones of templates under way, stopped when the server closes. */
  const filling = new Set<AbortController>();
  let creating = 0;
  let closing = false;

  const destroy = async (sandbox: HostedSandbox, reason: string): Promise<void> => {
    if (sandboxes.get(sandbox.id) !== sandbox) return;
    sandboxes.delete(sandbox.id);
    for (const controller of sandbox.running) controller.abort(reason);
    // Its session ends: every job and process of it, and the outputs it kept.
    await sandbox.client.close().catch((error: Error) => onError(error));
    if (!sandbox.ownsWorkspace) return;
    await rm(sandbox.workspace, { recursive: true, force: true }).catch((error: Error) =>
      onError(error),
    );
  };

  /** Make and fill the workspace folder of sandbox `id`. */
  const makeWorkspace = async (
    id: string,
    template: SandboxTemplate | undefined,
  ): Promise<{ workspace: string; ownsWorkspace: boolean }> => {
    const workspace = path.resolve(workspacePath?.(id) ?? path.join(rootReal, id));
    const ownsWorkspace = workspacePath === undefined || isInside(rootReal, workspace);
    if (ownsWorkspace) {
      if ((await readdir(workspace).catch(() => [])).length > 0) {
        throw new ToolError("INTERNAL", `the workspace folder ${workspace} is not empty`);
      }
    } else if ((template ?? "empty") !== "empty") {
      // A template fills a folder of the server's, and a failed one is removed: never the user's.
      throw new ToolError(
        "INVALID_INPUT",
        "this server serves a workspace of yours (workspacePath), which a template would overwrite; create the sandbox empty",
      );
    }
    const filled = new AbortController();
    filling.add(filled);
    try {
      await fillWorkspace({
        folder: workspace,
        template,
        templateRoot: templateRootReal,
        gitProtocols,
        gitTimeoutMs,
        // A clone runs as a command of the new sandbox: same wrapper, mode and network rule, but
        // able to write the workspace when the sandbox is read-only (nothing else runs there yet).
        exec: async (command, options) => {
          const cloner = await createLocalSandbox({
            root: workspace,
            mode: mode === "read-only" ? "workspace-write" : mode,
            network,
            commandWrapper: wrapper,
          });
          return cloner.exec(command, options);
        },
        networkOff: network === false && mode !== "danger-full-access",
        abortSignal: filled.signal,
      });
    } finally {
      filling.delete(filled);
    }
    return { workspace, ownsWorkspace };
  };

  const create = async (template: SandboxTemplate | undefined): Promise<CreateSandboxResponse> => {
    if (sandboxes.size + creating >= maxSandboxes) {
      throw new HttpError(503, {
        code: "INTERNAL",
        message: `this server already hosts its limit of ${maxSandboxes} sandboxes; release one or use another server`,
        details: { unavailable: true, reason: "capacity" },
      });
    }
    creating += 1;
    try {
      const id = randomBytes(16).toString("hex");
      const { workspace, ownsWorkspace } = await makeWorkspace(id, template);
      const client = await createLocalSandbox({
        root: workspace,
        mode,
        network,
        defaultTimeoutMs: limits.defaultTimeoutMs,
        defaultMaxOutputBytes: limits.maxOutputBytes,
        maxFileBytes,
        commandWrapper: wrapper,
        session,
      });
      if (closing) {
        await client.close();
        if (ownsWorkspace) await rm(workspace, { recursive: true, force: true });
        throw shuttingDown();
      }
      sandboxes.set(id, {
        id,
        workspace,
        client,
        files: createRawFiles({
          root: workspaceRoot(workspace, client.root),
          mode,
          maxFileBytes,
          // The client's policy: the one commands run under, its session's kept outputs included.
          protection: () => client.protection(),
          hidden: (scope) => hiddenWith(wrapper, client.root, mode, scope),
        }),
        limits,
        lastUsed: Date.now(),
        running: new Set(),
        ownsWorkspace,
      });
      return { id, root: client.root, jobs: sandboxJobsOf(client) !== undefined };
    } finally {
      creating -= 1;
    }
  };

  const sweeper = setInterval(
    () => {
      const now = Date.now();
      for (const sandbox of sandboxes.values()) {
        if (sandbox.running.size === 0 && now - sandbox.lastUsed > idleTimeoutMs) {
          void destroy(sandbox, "the sandbox was idle too long");
        }
      }
    },
    Math.max(50, Math.min(idleTimeoutMs / 4, 30_000)),
  );
  sweeper.unref();

  return {
    get size() {
      return sandboxes.size;
    },
    create,
    lookup(id) {
      const sandbox = ID_PATTERN.test(id) ? sandboxes.get(id) : undefined;
      if (sandbox === undefined) {
        throw new HttpError(410, {
          code: "NOT_FOUND",
          message: `no sandbox ${id} on this server: it was released, destroyed after being idle, or the server restarted; acquire a new one`,
          details: { unavailable: true, reason: "gone" },
        });
      }
      sandbox.lastUsed = Date.now();
      return sandbox;
    },
    has: (id) => sandboxes.has(id),
    destroy,
    stop(reason) {
      closing = true;
      clearInterval(sweeper);
      for (const controller of filling) controller.abort(reason);
      for (const sandbox of sandboxes.values()) {
        for (const controller of sandbox.running) controller.abort(reason);
      }
    },
    async destroyAll(reason) {
      await Promise.all([...sandboxes.values()].map((sandbox) => destroy(sandbox, reason)));
    },
  };
}
