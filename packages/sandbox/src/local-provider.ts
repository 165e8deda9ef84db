import { randomUUID } from "node:crypto";
import { mkdtemp, realpath, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { SandboxMode } from "@pleach/core";
import type { SandboxProvider, SandboxSession } from "@pleach/core/sandbox";
import { SANDBOX_SPECIFICATION_VERSION } from "@pleach/core/sandbox";
import {
  createLocalSandbox,
  type LocalSandbox,
  type LocalSandboxOptions,
} from "./local-sandbox.js";

/** Options of {@link createLocalSandboxProvider}. */
export interface LocalSandboxProviderOptions extends Omit<LocalSandboxOptions, "root" | "mode"> {
  /**
   * The workspace every session works in. Without it, each session gets a fresh empty temporary
   * folder (under `tempParent`), removed on `release()`.
   */
  root?: string;
  /** @default "workspace-write" */
  mode?: SandboxMode;
  /**
   * Where fresh session folders are made when there is no `root`.
   * @default os.tmpdir()
   */
  tempParent?: string;
  /**
   * Each session's client is a session of the local sandbox (`session` of `createLocalSandbox`):
   * its commands share one sandbox, which holds its background jobs, until `release()`.
   * @default true
   */
  session?: LocalSandboxOptions["session"];
  /**
   * Whether `release()` removes a fresh session folder. Ignored with `root`, which is never removed.
   * @default true
   */
  removeOnRelease?: boolean;
}

/** A session of the local provider: its client is a {@link LocalSandbox}, with its `root`. */
export interface LocalSandboxSession extends SandboxSession {
  readonly client: LocalSandbox;
}

/** A {@link SandboxProvider} over folders of this machine. */
export interface LocalSandboxProvider extends SandboxProvider {
  acquire(options?: { abortSignal?: AbortSignal }): Promise<LocalSandboxSession>;
}

/**
 * A minimal {@link SandboxProvider} over the local sandbox: each `acquire()` is a session over
 * `root`, or, without one, over a fresh temporary folder of its own (one per eval instance, say).
 */
export function createLocalSandboxProvider({
  root,
  mode = "workspace-write",
  tempParent = os.tmpdir(),
  removeOnRelease = true,
  session = true,
  ...sandboxOptions
}: LocalSandboxProviderOptions = {}): LocalSandboxProvider {
  return {
    specificationVersion: SANDBOX_SPECIFICATION_VERSION,
    async acquire({ abortSignal } = {}) {
      abortSignal?.throwIfAborted();
      const fresh = root === undefined;
      const folder = fresh
        ? await realpath(await mkdtemp(path.join(tempParent, "pleach-session-")))
        : root;
      let client: LocalSandbox;
      try {
        client = await createLocalSandbox({ ...sandboxOptions, root: folder, mode, session });
      } catch (error) {
        if (fresh) await rm(folder, { recursive: true, force: true });
        throw error;
      }
      let released = false;
      return {
        id: randomUUID(),
        client,
        async release() {
          if (released) return;
          released = true;
          await client.close();
          if (fresh && removeOnRelease) await rm(folder, { recursive: true, force: true });
        },
      };
    },
  };
}
