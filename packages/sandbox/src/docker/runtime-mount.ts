import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { chmod, mkdir, readdir, rename, rm, stat, utimes } from "node:fs/promises";
import path from "node:path";
import { sandboxUnavailableError } from "@pleach/core/sandbox";
import type { DockerCommand } from "./docker-cli.js";
import { DOCKER_LABELS } from "./docker-orphans.js";

/** Where a pleach sandbox image's files are mounted, read-only, in a container of another image. */
const RUNTIME_MOUNT = "/opt/pleach-runtime";

/** Options of {@link runtimeArguments}. */
export interface RuntimeArgumentsOptions {
  /** The runtime's folder on this machine (see {@link runtimeFolder}). */
  folder: string;
  /** The server's only variables: none of the image's reach it. */
  environment: Readonly<Record<string, string>>;
  /**
   * A folder of the image (its workspace) to give to this non-root user before the server starts,
   * as that user: the container then starts as root, and only the runtime's launcher runs so.
   */
  own?: { folder: string; uid: number; gid: number };
}

/**
 * What `docker run` needs to start the sandbox server of the runtime at `folder` in a container of
 * an image without pleach: its files mounted read-only, its bubblewrap launcher at the one trusted
 * path the sandbox runs (`/usr/bin/bwrap`), its name service configuration over the image's, and
 * node started by the runtime's static launcher (`opt/pleach/portable/`, built by
 * `scripts/build-sandbox-image.sh` from `scripts/portable-launcher.c`) through the runtime's own
 * loader and libraries, with only `environment`: nothing of the image (its shell, loader,
 * libraries, variables) runs outside the sandbox.
 */
export function runtimeArguments({ folder, environment, own }: RuntimeArgumentsOptions): {
  mounts: string[];
  entrypoint: string[];
  server: string[];
} {
  const portable = `${RUNTIME_MOUNT}/opt/pleach/portable`;
  const variables = { ...environment, OPENSSL_CONF: `${portable}/openssl.cnf` };
  return {
    mounts: [
      "--volume",
      `${folder}:${RUNTIME_MOUNT}:ro`,
      "--volume",
      `${path.join(folder, "opt/pleach/portable/bwrap")}:/usr/bin/bwrap:ro`,
      "--volume",
      `${path.join(folder, "opt/pleach/portable/nsswitch.conf")}:/etc/nsswitch.conf:ro`,
    ],
    entrypoint: ["--entrypoint", `${portable}/node`],
    server: [
      ...(own === undefined ? [] : ["--own", own.folder, String(own.uid), String(own.gid)]),
      ...Object.entries(variables).flatMap(([name, value]) => ["--setenv", name, value]),
      "--",
      `${RUNTIME_MOUNT}/opt/pleach/sandbox-serve.mjs`,
      "--dist",
      `${RUNTIME_MOUNT}/opt/pleach/node_modules/@pleach/sandbox/dist/index.js`,
    ],
  };
}

/**
 * The files of the pleach sandbox image `runtimeImage`, in a folder of this machine under
 * `stateFolder` (`runtime-<image id>`, mode 755): exported from the image once per image id
 * (`docker create` then `docker export`, unpacked into a temporary folder renamed into place; once
 * per process however many providers ask), so a rebuilt image gets a folder of its own. Unpacked
 * as root, its files keep the image's owner, root, as the sandbox requires of bubblewrap's launcher.
 */
export async function runtimeFolder({
  run,
  docker,
  runtimeImage,
  stateFolder,
}: {
  run: DockerCommand;
  docker: string;
  runtimeImage: string;
  stateFolder: string;
}): Promise<string> {
  const id = await run(["image", "inspect", "--format", "{{.Id}}", runtimeImage]).catch((error) => {
    throw sandboxUnavailableError({
      message: `the pleach sandbox image ${runtimeImage} is not on this machine: build it with scripts/build-sandbox-image.sh ${runtimeImage}`,
      cause: error,
      details: { reason: "start" },
    });
  });
  const folder = path.join(stateFolder, `runtime-${id.replace(/^sha256:/, "").slice(0, 16)}`);
  let unpacked = unpacking.get(folder);
  if (unpacked === undefined) {
    unpacked = unpack({ run, docker, runtimeImage, folder });
    unpacking.set(folder, unpacked);
    // A failure is not kept: the next acquire tries again.
    unpacked.catch(() => unpacking.delete(folder));
  }
  await unpacked;
  // Its time of last use, by which the folders of images no longer used are removed.
  const now = new Date();
  await utimes(folder, now, now);
  if (!reaped) {
    reaped = true;
    void reapRuntimeFolders({ run, stateFolder, keep: folder }).catch(() => undefined);
  }
  return folder;
}

/** How long a runtime folder no container mounts is kept after its last use. */
const RUNTIME_IDLE_MS = 60 * 60 * 1000;
let reaped = false;

/**
 * Remove the runtime folders (and leftover temporary ones) of `stateFolder` unused for an hour
 * that no running sandbox container mounts: each rebuild of the sandbox image gets a folder of its
 * own, so old ones would otherwise pile up. The first {@link runtimeFolder} of a process does it.
 */
export async function reapRuntimeFolders({
  run,
  stateFolder,
  keep,
}: {
  run: DockerCommand;
  stateFolder: string;
  keep: string;
}): Promise<void> {
  const stale: string[] = [];
  for (const name of await readdir(stateFolder)) {
    if (!/^runtime-[0-9a-f]{16}(\.[0-9a-f]{12}\.tmp)?$/.test(name)) continue;
    const folder = path.join(stateFolder, name);
    const info = await stat(folder).catch(() => undefined);
    if (folder !== keep && info !== undefined && Date.now() - info.mtimeMs > RUNTIME_IDLE_MS) {
      stale.push(folder);
    }
  }
  if (stale.length === 0) return;
  const running = (await run(["ps", "--quiet", "--filter", `label=${DOCKER_LABELS.sandbox}=1`]))
    .split("\n")
    .filter((id) => id !== "");
  const mounted =
    running.length === 0
      ? []
      : (await run(["inspect", "--format", "{{range .Mounts}}{{.Source}}\n{{end}}", ...running]))
          .split("\n")
          .map((source) => source.trim());
  for (const folder of stale) {
    if (mounted.some((source) => source === folder || source.startsWith(`${folder}/`))) continue;
    await rm(folder, { recursive: true, force: true });
  }
}

/** The unpacking of each runtime folder in this process, shared by every provider. */
const unpacking = new Map<string, Promise<void>>();

async function unpack({
  run,
  docker,
  runtimeImage,
  folder,
}: {
  run: DockerCommand;
  docker: string;
  runtimeImage: string;
  folder: string;
}): Promise<void> {
  // A runtime of a build whose launchers were shell scripts has no name service file.
  const launcher = "opt/pleach/portable/nsswitch.conf";
  if (existsSync(path.join(folder, launcher))) return;
  const temporary = `${folder}.${randomBytes(6).toString("hex")}.tmp`;
  const container = await run(["create", runtimeImage]);
  try {
    await mkdir(temporary, { mode: 0o755 });
    await exportInto({ docker, container, folder: temporary });
    await chmod(temporary, 0o755);
    if (!existsSync(path.join(temporary, launcher))) {
      throw sandboxUnavailableError({
        message: `${runtimeImage} has no ${launcher}: rebuild it with scripts/build-sandbox-image.sh`,
        details: { reason: "start" },
      });
    }
    // Another process may have unpacked the same image meanwhile: either folder will do.
    await rename(temporary, folder).catch(() => undefined);
  } finally {
    await rm(temporary, { recursive: true, force: true });
    await run(["rm", "--force", container]).catch(() => "");
  }
}

/** `docker export container | tar -x -C folder`. */
async function exportInto({
  docker,
  container,
  folder,
}: {
  docker: string;
  container: string;
  folder: string;
}): Promise<void> {
  const exporter = spawn(docker, ["export", container], { stdio: ["ignore", "pipe", "pipe"] });
  const tar = spawn("tar", ["-x", "-C", folder], { stdio: ["pipe", "ignore", "pipe"] });
  let errors = "";
  const exitCodes = [exporter, tar].map((child) => {
    child.stderr?.on("data", (chunk: Buffer) => {
      errors = (errors + chunk.toString("utf8")).slice(-2000);
    });
    return new Promise<number | null>((resolve) => {
      child.once("error", (error) => {
        errors += error.message;
        resolve(-1);
      });
      child.once("close", resolve);
    });
  });
  exporter.stdout?.pipe(tar.stdin as NodeJS.WritableStream);
  const [exported, unpacked] = await Promise.all(exitCodes);
  if (exported !== 0 || unpacked !== 0) {
    throw sandboxUnavailableError({
      message: `docker export ${container} | tar -x failed (exit codes ${exported}, ${unpacked}): ${errors.trim()}`,
      details: { reason: "docker" },
    });
  }
}
