import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmod, chown, mkdtemp, realpath, rm, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { SandboxProvider } from "@pleach/coding-agent/sandbox";
import { sandboxUnavailableError } from "@pleach/coding-agent/sandbox";
import { ToolError } from "@pleach/core";
import { createHttpStreamSandboxProvider, type HttpSandboxSession } from "../http-provider.js";

/** Options of {@link createDockerSandboxProvider}. */
export interface DockerSandboxProviderOptions {
  /**
   * The image, built by `scripts/build-sandbox-image.sh` from local files.
   * @default "pleach-sandbox:dev"
   */
  image?: string;
  /**
   * The docker command line program.
   * @default "docker"
   */
  docker?: string;
  /**
   * CPUs a sandbox may use.
   * @default 1
   */
  cpus?: number;
  /**
   * Memory a sandbox may use, in bytes (swap included).
   * @default 1_073_741_824
   */
  memoryBytes?: number;
  /**
   * Processes a sandbox may have at once.
   * @default 256
   */
  pids?: number;
  /**
   * Whether commands may reach the network (`--network bridge`); without it the container has
   * no network at all and is reached through a Unix socket in a mounted folder.
   * @default false
   */
  network?: boolean;
  /**
   * The user commands run as, `uid:gid`; with a bound workspace, its owner.
   * @default "1000:1000"
   */
  user?: string;
  /**
   * How long a new container may take to answer.
   * @default 30_000
   */
  startTimeoutMs?: number;
  /**
   * Where the folders of the containers' sockets are made.
   * @default os.tmpdir()
   */
  socketParent?: string;
}

/** A sandbox provider whose sandboxes are containers. */
export interface DockerSandboxProvider extends SandboxProvider {
  acquire(options?: {
    abortSignal?: AbortSignal;
    /**
     * A host folder to bind as the workspace, at the same path inside (its files are then shared
     * with the host). By default the workspace is inside the container and goes with it.
     */
    workspace?: string;
  }): Promise<HttpSandboxSession>;
}

const CONTAINER_SOCKET_FOLDER = "/run/pleach";

/**
 * A vendor adapter whose sandboxes are containers on a Docker engine: each `acquire()` runs the
 * pleach sandbox image (the sandbox server, hosting this one sandbox) with no network, no
 * capabilities, no new privileges and limits on CPU, memory and processes, and talks to it over a
 * Unix socket; `release()` removes the container. The container is the OS sandbox: the server in
 * it runs commands as the local client does in `danger-full-access`, with paths still confined.
 */
export function createDockerSandboxProvider({
  image = "pleach-sandbox:dev",
  docker = "docker",
  cpus = 1,
  memoryBytes = 1024 * 1024 * 1024,
  pids = 256,
  network = false,
  user = "1000:1000",
  startTimeoutMs = 30_000,
  socketParent = os.tmpdir(),
}: DockerSandboxProviderOptions = {}): DockerSandboxProvider {
  const run = (args: string[], timeoutMs = 60_000) =>
    new Promise<string>((resolve, reject) => {
      execFile(
        docker,
        args,
        { timeout: timeoutMs, maxBuffer: 4 * 1024 * 1024 },
        (error, stdout, stderr) => {
          if (error === null) resolve(stdout.trim());
          else {
            reject(
              sandboxUnavailableError({
                message: `docker ${args[0]} failed: ${String(stderr).trim() || error.message}`,
                cause: error,
                details: { reason: "docker" },
              }),
            );
          }
        },
      );
    });

  return {
    async acquire({ abortSignal, workspace } = {}) {
      if (abortSignal?.aborted) throw new ToolError("ABORTED", "acquire was aborted");
      const name = `pleach-sandbox-${randomBytes(8).toString("hex")}`;
      const token = randomBytes(24).toString("hex");
      const socketFolder = await mkdtemp(path.join(socketParent, "pleach-docker-"));
      const socketPath = path.join(socketFolder, "sandbox.sock");
      let started = false;
      const remove = async () => {
        if (started) await run(["rm", "-f", name]).catch(() => {});
        await rm(socketFolder, { recursive: true, force: true });
      };
      try {
        let owner = user;
        const mounts = ["-v", `${socketFolder}:${CONTAINER_SOCKET_FOLDER}`];
        const serverArgs: string[] = [];
        if (workspace !== undefined) {
          const real = await realpath(workspace);
          const info = await stat(real);
          owner = `${info.uid}:${info.gid}`;
          mounts.push("-v", `${real}:${real}`);
          serverArgs.push("--workspace", real);
        }
        // The server in the container (another uid) makes its socket here; we must reach it.
        const [uid, gid] = owner.split(":").map(Number);
        const hostIsRoot = process.getuid?.() === 0;
        if (hostIsRoot && uid !== undefined && gid !== undefined)
          await chown(socketFolder, uid, gid);
        else await chmod(socketFolder, 0o777);
        // A run that fails half-way may leave the container created: remove it either way.
        started = true;
        await run([
          "run",
          "--detach",
          "--init",
          "--name",
          name,
          "--label",
          "dev.pleach.sandbox=1",
          "--network",
          network ? "bridge" : "none",
          "--cpus",
          String(cpus),
          "--memory",
          String(memoryBytes),
          "--memory-swap",
          String(memoryBytes),
          "--pids-limit",
          String(pids),
          "--cap-drop",
          "ALL",
          "--security-opt",
          "no-new-privileges",
          "--user",
          owner,
          "--env",
          `PLEACH_SANDBOX_TOKEN=${token}`,
          ...mounts,
          image,
          "--socket",
          `${CONTAINER_SOCKET_FOLDER}/sandbox.sock`,
          "--socket-mode",
          hostIsRoot ? "600" : "666",
          "--root",
          "/workspaces",
          "--mode",
          "danger-full-access",
          "--max-sandboxes",
          "1",
          ...serverArgs,
        ]);
        const http = createHttpStreamSandboxProvider({
          baseURL: "http://localhost/",
          socketPath,
          auth: () => ({ headers: { Authorization: `Bearer ${token}` } }),
        });
        await waitUntilAnswering({ http, name, run, startTimeoutMs, abortSignal });
        const session = await http.acquire(abortSignal === undefined ? {} : { abortSignal });
        let released: Promise<void> | undefined;
        return {
          id: name,
          root: session.root,
          client: session.client,
          release() {
            released ??= (async () => {
              http.close();
              await remove();
            })();
            return released;
          },
        };
      } catch (error) {
        await remove();
        throw error;
      }
    },
  };
}

async function waitUntilAnswering({
  http,
  name,
  run,
  startTimeoutMs,
  abortSignal,
}: {
  http: ReturnType<typeof createHttpStreamSandboxProvider>;
  name: string;
  run: (args: string[]) => Promise<string>;
  startTimeoutMs: number;
  abortSignal: AbortSignal | undefined;
}): Promise<void> {
  const deadline = Date.now() + startTimeoutMs;
  for (let attempt = 0; ; attempt += 1) {
    if (abortSignal?.aborted) throw new ToolError("ABORTED", "acquire was aborted");
    try {
      await http.health();
      return;
    } catch (error) {
      if (Date.now() > deadline) {
        const logs = await run(["logs", "--tail", "20", name]).catch(() => "");
        throw sandboxUnavailableError({
          message: `the sandbox container ${name} did not answer within ${startTimeoutMs} ms${logs === "" ? "" : `; its log ends: ${logs}`}`,
          cause: error,
          details: { reason: "start" },
        });
      }
      if (attempt % 20 === 19) {
        const state = await run(["inspect", "--format", "{{.State.Status}}", name]).catch(() => "");
        if (state === "exited" || state === "dead") {
          const logs = await run(["logs", "--tail", "20", name]).catch(() => "");
          throw sandboxUnavailableError({
            message: `the sandbox container ${name} stopped as it started: ${logs}`,
            details: { reason: "start" },
          });
        }
      }
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
}
