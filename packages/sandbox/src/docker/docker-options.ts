import type { SandboxMode } from "@pleach/core/sandbox";
import type { NetworkOption } from "../network/domain-rules.js";

/** Options of `createDockerSandboxProvider`, the Docker sandbox adapter. */
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
   * The sandbox mode inside the container, as for the local client: in `read-only` and
   * `workspace-write` the server in the container confines every command with bubblewrap and
   * refuses protected writes through the file route, by the same policy as the local sandbox, also
   * for a workspace bound from the host. `danger-full-access` leaves commands unconfined inside the
   * container: a bound workspace (its `.git`, its shell start-up files) is then theirs to change.
   * @default "workspace-write"
   */
  mode?: SandboxMode;
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
   * A domain list (`{ allowDomains }`) is refused with `UNSUPPORTED`: the container's bridge
   * would reach every host, and the domain proxy runs only with the local sandbox.
   * @default false
   */
  network?: NetworkOption;
  /**
   * The user the container's server and its commands run as, `uid:gid`. A provider running as
   * root defaults to the owner of a bound workspace, else `1000:1000`; any other provider runs
   * containers as its own user only (and refuses another `user`), since it could not hand the
   * socket folder to another uid.
   * @default the bound workspace's owner, else 1000:1000 (as root); this process's uid:gid (otherwise)
   */
  user?: string;
  /**
   * How long a new container may take to answer.
   * @default 30_000
   */
  startTimeoutMs?: number;
  /**
   * How long a released container has to stop on its own (its server moves aside what its
   * running commands made at protected paths of a bound workspace) before it is killed.
   * @default 10_000
   */
  stopTimeoutMs?: number;
  /**
   * Where the provider's private folder (`pleach-docker-<uid>`, mode 700) is made: it holds one
   * folder per container, mounted at `/run/pleach` inside, with the server's socket.
   * @default os.tmpdir()
   */
  socketParent?: string;
  /**
   * Run `image` although it has no pleach in it (SWE-bench's evaluation images, say): the files of
   * this pleach sandbox image are mounted read-only at `/opt/pleach-runtime` (exported once per
   * image id into the provider's private folder) and its sandbox server runs from there, through
   * its own loader and libraries; its bubblewrap launcher is mounted at `/usr/bin/bwrap`.
   * Confined modes need the provider to run as root (bubblewrap's launcher must be root's).
   * Nothing of `image` runs outside the sandbox (the runtime's static launchers start node and
   * bubblewrap, with none of the image's variables), and its containers never run as root: a
   * `user` of uid 0, or a bound workspace root owns (with no `user`), is refused.
   * @default none: `image` is a pleach sandbox image
   */
  runtimeImage?: string;
  /**
   * A folder of the image to work in (`/testbed` in SWE-bench's images): every sandbox's workspace
   * is that folder, inside the container, and goes with it. With `runtimeImage`, the folder is
   * given to the container's user (by default `1000:1000` as root) by the runtime's launcher
   * before the server starts as that user; without it, a provider running as root runs containers
   * as root (`0:0`) by default, the owner of an image's files.
   * @default none: a fresh folder, or the one `acquire({ workspace })` binds
   */
  imageWorkspace?: string;
}
