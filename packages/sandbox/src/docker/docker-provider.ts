import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { chown, mkdir, realpath, rm, stat, writeFile } from "node:fs/promises";
import type { Socket } from "node:net";
import os from "node:os";
import path from "node:path";
import { ToolError } from "@pleach/core";
import type { SandboxProvider } from "@pleach/core/sandbox";
import { SANDBOX_SPECIFICATION_VERSION } from "@pleach/core/sandbox";
import { createHttpStreamSandboxProvider, type HttpSandboxSession } from "../http-provider.js";
import { parseNetworkOption } from "../network/domain-rules.js";
import { checkPrivateFolder, makePrivateFolder } from "../private-folder.js";
import { formatProcessKey, ownProcessKey } from "../process-key.js";
import { containerSecurity } from "./container-security.js";
import { waitUntilAnswering, within } from "./container-start.js";
import { dockerCommand } from "./docker-cli.js";
import type { DockerSandboxProviderOptions } from "./docker-options.js";
import { DOCKER_LABELS, dockerHostLabel, reapOrphans } from "./docker-orphans.js";
import { runtimeArguments, runtimeFolder } from "./runtime-mount.js";

/** A sandbox of a container: the container goes with its release. */
export interface DockerSandboxSession extends HttpSandboxSession {
  /**
   * Another sandbox of this container, over the same workspace, with a session of its own (its
   * commands and background jobs): its release ends every process of it and leaves the container
   * running. A container hosts 4 sandboxes at once.
   */
  acquireSibling(options?: { abortSignal?: AbortSignal }): Promise<HttpSandboxSession>;
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
  }): Promise<DockerSandboxSession>;
  /**
   * Remove the containers (by label) and socket folders of providers of this machine whose
   * process is gone (killed, say). The first `acquire` does it; returns the names removed.
   */
  reapOrphans(): Promise<{ containers: string[]; folders: string[] }>;
}

const CONTAINER_SOCKET_FOLDER = "/run/pleach";
/** The sandboxes a container hosts at once: the first, and its siblings (`acquireSibling`). */
const CONTAINER_SANDBOXES = 4;
/** The search path of a foreign image's server and its commands (Docker's default). */
const CONTAINER_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
const CONTAINER_NAME_PREFIX = "pleach-sandbox-";
/**
 * A vendor adapter whose sandboxes are containers on a Docker engine: each `acquire()` runs the
 * pleach sandbox image (the sandbox server, hosting this one sandbox) with no network, no
 * capabilities, no new privileges and limits on CPU, memory and processes, and talks to it over a
 * Unix socket in a private folder; `release()` stops the container (`--rm` removes it). Inside, the
 * server runs the local sandbox in the requested mode: commands under bubblewrap with the same
 * protected paths as on the host, file writes checked by the same policy. The token reaches the
 * server in a file that it removes once read, never in an environment variable; commands, in their
 * own pid namespace with a private `/run`, see neither the server's process nor its socket.
 *
 * Nothing outlives its owner: the container's server stops when the provider's end of its stdin
 * closes (the provider exiting or killed), and every container carries a label naming its owner
 * process, so the next provider of this machine removes those whose owner is gone.
 */
export function createDockerSandboxProvider({
  image = "pleach-sandbox:dev",
  docker = "docker",
  mode = "workspace-write",
  cpus = 1,
  memoryBytes = 1024 * 1024 * 1024,
  pids = 256,
  network = false,
  user,
  startTimeoutMs = 30_000,
  stopTimeoutMs = 10_000,
  socketParent = os.tmpdir(),
  runtimeImage,
  imageWorkspace,
}: DockerSandboxProviderOptions = {}): DockerSandboxProvider {
  if (!["read-only", "workspace-write", "danger-full-access"].includes(mode)) {
    throw new ToolError("INVALID_INPUT", `unknown sandbox mode ${JSON.stringify(mode)}`);
  }
  const networkOn = parseNetworkOption(network);
  if (typeof networkOn !== "boolean") {
    throw new ToolError(
      "UNSUPPORTED",
      "the Docker sandbox takes network true or false, not a domain list: its container would reach every host. " +
        "Use the local sandbox (createLocalSandboxProvider) for allowDomains, or network: false",
    );
  }
  const ownUid = process.getuid?.() ?? 0;
  const ownGid = process.getgid?.() ?? 0;
  const asRoot = ownUid === 0;
  const chosenUser = user === undefined ? undefined : parseUser(user);
  if (!asRoot && chosenUser !== undefined && chosenUser.uid !== ownUid) {
    throw new ToolError(
      "INVALID_INPUT",
      `user ${user}: a provider not running as root runs containers as its own user (${ownUid}:${ownGid}) only, since it cannot give the socket folder to another uid`,
    );
  }
  const confined = mode !== "danger-full-access";
  const ownKey = ownProcessKey();
  const host = dockerHostLabel();
  const stateFolder = path.join(path.resolve(socketParent), `pleach-docker-${ownUid}`);

  const run = dockerCommand(docker);
  const securityOptions = containerSecurity({ run, stateFolder });

  const reapOwnOrphans = () => reapOrphans({ run, ownKey, host, stateFolder, ownUid });
  let reaped: Promise<unknown> | undefined;

  return {
    specificationVersion: SANDBOX_SPECIFICATION_VERSION,
    reapOrphans: reapOwnOrphans,
    async acquire({ abortSignal, workspace } = {}) {
      if (abortSignal?.aborted) throw new ToolError("ABORTED", "acquire was aborted");
      reaped ??= reapOwnOrphans().catch(() => {});
      await reaped;
      await makePrivateFolder(stateFolder, ownUid);

      let bound: string | undefined;
      // The image's files are root's: a pleach image's server works on them as root, while a
      // foreign image's folder is given to a user that is not root (runtimeArguments' own).
      const defaultUid = imageWorkspace === undefined || runtimeImage !== undefined ? 1000 : 0;
      let owner =
        chosenUser ??
        (asRoot ? { uid: defaultUid, gid: defaultUid } : { uid: ownUid, gid: ownGid });
      if (workspace !== undefined && imageWorkspace !== undefined) {
        throw new ToolError(
          "INVALID_INPUT",
          `this provider works in the image's ${imageWorkspace} (imageWorkspace); it binds no workspace`,
        );
      }
      if (workspace !== undefined) {
        bound = await realpath(workspace);
        const info = await stat(bound);
        if (!info.isDirectory()) {
          throw new ToolError("NOT_A_DIRECTORY", `the workspace is not a folder: ${workspace}`);
        }
        if (chosenUser === undefined && asRoot) owner = { uid: info.uid, gid: info.gid };
      }
      if (runtimeImage !== undefined && owner.uid === 0) {
        throw new ToolError(
          "INVALID_INPUT",
          `${image} is not a pleach image (runtimeImage), whose containers never run as root: ${bound === undefined ? "give a user that is not root" : `the workspace ${bound} is root's; give a user that is not root (user) and a workspace it owns`}`,
        );
      }
      const hex = randomBytes(8).toString("hex");
      const name = `${CONTAINER_NAME_PREFIX}${hex}`;
      const token = randomBytes(24).toString("hex");
      const folder = path.join(stateFolder, hex);
      const ownerFile = `${folder}.owner`;
      const socketPath = path.join(folder, "sandbox.sock");
      const tokenFile = path.join(folder, "token");
      const ownerText = ownKey === undefined ? "" : formatProcessKey(ownKey);
      // Written before the folder, so that a folder is never seen without its owner.
      await writeFile(ownerFile, `${ownerText}\n`, { mode: 0o600, flag: "wx" });

      let child: ChildProcess | undefined;
      let exited: Promise<number | null> | undefined;
      let stderrTail = "";
      const stop = async () => {
        if (child === undefined || exited === undefined) return;
        // The server stops when its stdin ends, removes what it placed, and --rm removes it.
        child.stdin?.end();
        const code = await within(exited, stopTimeoutMs);
        if (code !== 0) {
          await run(["rm", "--force", name]).catch(() => "");
          child.kill("SIGKILL");
        }
      };
      const removeFolder = async () => {
        await rm(folder, { recursive: true, force: true });
        await rm(ownerFile, { force: true });
      };
      try {
        await mkdir(folder, { mode: 0o700 });
        if (owner.uid !== ownUid) await chown(folder, owner.uid, owner.gid);
        await checkPrivateFolder(folder, owner.uid);
        await writeFile(tokenFile, token, { mode: 0o600, flag: "wx" });
        if (owner.uid !== ownUid) await chown(tokenFile, owner.uid, owner.gid);

        const mounts = ["--volume", `${folder}:${CONTAINER_SOCKET_FOLDER}`];
        const serverArgs: string[] = [];
        if (bound !== undefined) {
          mounts.push("--volume", `${bound}:${bound}`);
          serverArgs.push("--workspace", bound);
        }
        if (imageWorkspace !== undefined) serverArgs.push("--workspace", imageWorkspace);
        // The host's users and HOME, so that home folders inside a bound workspace are protected
        // as the local sandbox protects them.
        if (process.platform === "linux" && existsSync("/etc/passwd")) {
          mounts.push("--volume", "/etc/passwd:/etc/passwd:ro");
        }
        const home = process.env.HOME ?? os.homedir();
        const variables: Record<string, string> = path.isAbsolute(home) ? { HOME: home } : {};
        const fromRuntime =
          runtimeImage === undefined
            ? undefined
            : runtimeArguments({
                folder: await runtimeFolder({ run, docker, runtimeImage, stateFolder }),
                environment: { PATH: CONTAINER_PATH, ...variables },
                ...(imageWorkspace === undefined
                  ? {}
                  : { own: { folder: imageWorkspace, ...owner } }),
              });
        if (fromRuntime !== undefined) mounts.push(...fromRuntime.mounts);
        const environment = Object.entries(variables).flatMap(([name, value]) => [
          "--env",
          `${name}=${value}`,
        ]);
        // Given its workspace by the runtime's launcher, which then becomes `owner`.
        const owning = fromRuntime !== undefined && imageWorkspace !== undefined;
        if (networkOn) serverArgs.push("--network");
        const args = [
          "run",
          "--rm",
          "--interactive",
          "--init",
          "--name",
          name,
          "--label",
          `${DOCKER_LABELS.sandbox}=1`,
          "--label",
          `${DOCKER_LABELS.host}=${host}`,
          "--label",
          `${DOCKER_LABELS.owner}=${ownerText}`,
          "--network",
          networkOn ? "bridge" : "none",
          "--cpus",
          String(cpus),
          "--memory",
          String(memoryBytes),
          "--memory-swap",
          String(memoryBytes),
          "--pids-limit",
          String(pids),
          ...(await securityOptions({ confined, uid: owner.uid, owning })),
          "--user",
          owning ? "0:0" : `${owner.uid}:${owner.gid}`,
          ...(fromRuntime === undefined ? environment : []),
          ...mounts,
          ...(fromRuntime?.entrypoint ?? []),
          image,
          ...(fromRuntime?.server ?? []),
          "--socket",
          `${CONTAINER_SOCKET_FOLDER}/sandbox.sock`,
          "--socket-mode",
          "600",
          "--token-file",
          `${CONTAINER_SOCKET_FOLDER}/token`,
          "--remove-token-file",
          "--exit-with-stdin",
          "--root",
          // An image without pleach may have no /workspaces, nor let its user make one.
          fromRuntime === undefined ? "/workspaces" : "/tmp/pleach-sandboxes",
          "--mode",
          mode,
          "--max-sandboxes",
          String(CONTAINER_SANDBOXES),
          // The container is the commands' whole world and goes with the session: no kept caches
          // (its user may have no home to keep them in).
          "--no-caches",
          ...serverArgs,
        ];
        // Attached, with our end of its stdin: when this process goes, however it goes, the pipe
        // closes, the server sees the end of its stdin and stops. Its own process group, so that a
        // Ctrl-C at a terminal reaches us, not it; unreferenced, so that a session never released
        // does not keep this process alive.
        const started = spawn(docker, args, { stdio: ["pipe", "ignore", "pipe"], detached: true });
        child = started;
        exited = new Promise((resolve) => {
          started.once("exit", (code) => resolve(code));
          started.once("error", (error) => {
            stderrTail += error.message;
            resolve(-1);
          });
        });
        started.stderr?.on("data", (chunk: Buffer) => {
          stderrTail = (stderrTail + chunk.toString("utf8")).slice(-4000);
        });
        started.unref();
        for (const stream of [started.stdin, started.stderr]) (stream as Socket | null)?.unref();

        const http = createHttpStreamSandboxProvider({
          baseURL: "http://localhost/",
          socketPath,
          auth: () => ({ headers: { Authorization: `Bearer ${token}` } }),
        });
        await waitUntilAnswering({
          http,
          name,
          socketPath,
          socketOwner: owner.uid,
          exited,
          stderr: () => stderrTail,
          startTimeoutMs,
          abortSignal,
        });
        const session = await http.acquire(abortSignal === undefined ? {} : { abortSignal });
        let released: Promise<void> | undefined;
        return {
          id: name,
          root: session.root,
          client: session.client,
          acquireSibling: (options) => http.acquire(options),
          release() {
            released ??= (async () => {
              http.close();
              await stop();
              await removeFolder();
            })();
            return released;
          },
        };
      } catch (error) {
        await stop();
        await removeFolder();
        throw error;
      }
    },
  };
}

function parseUser(text: string): { uid: number; gid: number } {
  const match = /^(\d+):(\d+)$/.exec(text);
  if (match === null) {
    throw new ToolError("INVALID_INPUT", `user must be uid:gid in numbers, got ${text}`);
  }
  return { uid: Number(match[1]), gid: Number(match[2]) };
}
