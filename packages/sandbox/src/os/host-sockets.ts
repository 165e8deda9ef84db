import {
  closeSync,
  type Dirent,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  readSync,
  realpathSync,
} from "node:fs";
import path from "node:path";
import { isInside, isInsideAny } from "../paths.js";
import { pathState } from "../policy/path-state.js";

/** Folders under the home directory where agents and container engines keep their sockets. */
const HOME_SOCKET_FOLDERS = [".ssh", ".gnupg", ".docker", ".docker/run", ".docker/desktop"];
/** Trees the bubblewrap sandbox replaces with empty ones, so their sockets are out of reach. */
export const HIDDEN_TREES: readonly string[] = ["/tmp", "/run", "/var/run", "/dev"];

/**
 * The Unix sockets a confined command could otherwise connect to, sorted: `workspaceSockets` (the
 * walk's), every socket bound in a network namespace this process sees ({@link boundUnixSockets},
 * read afresh on every call) and the host's agent and container sockets, outside the trees the
 * sandbox hides anyway ({@link HIDDEN_TREES}) and the hidden folders (a mask could not be made
 * there). A read-only mount does not stop `connect()`, so each is masked.
 */
export function hostSockets({
  root,
  workspaceSockets,
  hiddenPaths,
  hostEnvironment,
}: {
  root: string;
  workspaceSockets: readonly string[];
  /** The paths commands cannot read (`hiddenReads`). */
  hiddenPaths: readonly { path: string; state: string }[];
  hostEnvironment: Readonly<Record<string, string | undefined>>;
}): string[] {
  const hiddenFolders = new Set(
    hiddenPaths.filter(({ state }) => state === "folder").map(({ path: folder }) => folder),
  );
  return [
    ...workspaceSockets,
    ...hostSocketsOutside({ root, hostEnvironment, bound: boundUnixSockets() }),
  ]
    .filter((socket) => !isInsideAny(hiddenFolders, socket))
    .sort();
}

/**
 * The absolute paths of the Unix sockets bound in every network namespace this process can see,
 * from the kernel's own tables (`/proc/<pid>/net/unix`; the last column is the path a socket was
 * bound to, or `@name` for an abstract one, or nothing). A socket file is reachable from any
 * network namespace that sees its path, so a daemon of another namespace (a container's, one
 * started by `unshare -n` or `ip netns exec`) binding in a folder the sandbox can read is masked
 * like the host's own. Abstract sockets belong to the network namespace the sandbox leaves, and a
 * socket bound by a relative path cannot be placed, so both are left out. A path is as the binder
 * gave it, in its own mount namespace: the caller resolves it and checks it is still a socket. A
 * path that is not UTF-8, or holds a line break, does not survive the table's text and is missed.
 * Empty when no table can be read (not Linux, `/proc` not mounted).
 */
export function boundUnixSockets(tables: readonly string[] = unixSocketTables()): string[] {
  const paths = new Set<string>();
  for (const table of tables) {
    let text: string;
    try {
      text = readFileSync(table, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      // Num RefCount Protocol Flags Type St Inode Path: the path starts after the seventh field.
      const match = /^\s*\S+:\s+\S+\s+\S+\s+\S+\s+\S+\s+\S+\s+\S+ (\/.*)$/.exec(line);
      if (match?.[1] !== undefined) paths.add(match[1]);
    }
  }
  return [...paths];
}

/**
 * One socket table per network namespace of the processes in `proc`, this process's first. A
 * namespace is known by its link (`/proc/<pid>/ns/net`) where this process may read it (its own
 * processes, or any for root); another user's process shows its table but not its link, so a
 * table that begins as one already taken (the first 4 KiB, which name the sockets by inode) is
 * taken for the same namespace. A namespace no process is in (held open by a bind mount or a
 * descriptor only) has no table here.
 */
function unixSocketTables(proc = "/proc"): string[] {
  const own = `${proc}/self/net/unix`;
  const tables = [own];
  const namespaces = new Set([namespaceOf(`${proc}/self`)]);
  const starts = new Set([tableStart(own)]);
  let entries: string[];
  try {
    entries = readdirSync(proc);
  } catch {
    return tables;
  }
  for (const entry of entries) {
    if (!/^[0-9]+$/.test(entry)) continue;
    const table = `${proc}/${entry}/net/unix`;
    const namespace = namespaceOf(`${proc}/${entry}`);
    if (namespace !== undefined) {
      if (namespaces.has(namespace)) continue;
      namespaces.add(namespace);
    } else {
      const start = tableStart(table);
      if (start === undefined || starts.has(start)) continue;
      starts.add(start);
    }
    tables.push(table);
  }
  return tables;
}

function namespaceOf(processFolder: string): string | undefined {
  try {
    return readlinkSync(`${processFolder}/ns/net`);
  } catch {
    return undefined;
  }
}

function tableStart(table: string): string | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(table, "r");
    const buffer = Buffer.alloc(4096);
    return buffer.toString("latin1", 0, readSync(fd, buffer, 0, buffer.length, null));
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function hostSocketsOutside({
  root,
  hostEnvironment,
  bound,
}: {
  root: string;
  hostEnvironment: Readonly<Record<string, string | undefined>>;
  /** The sockets bound in the host's network namespace now (`boundUnixSockets`). */
  bound: readonly string[];
}): string[] {
  // Every socket bound in the host's network namespace when the command starts, wherever it
  // lives (a daemon's socket in /var/tmp or under a home), besides the ones named by variables.
  const candidates = new Set<string>(bound);
  const named = [
    hostEnvironment.SSH_AUTH_SOCK,
    hostEnvironment.DOCKER_HOST?.replace(/^unix:\/\//, ""),
  ];
  for (const value of named) {
    if (value?.startsWith("/")) candidates.add(value);
  }
  const home = hostEnvironment.HOME;
  if (home?.startsWith("/")) {
    for (const folder of HOME_SOCKET_FOLDERS) {
      const directory = path.join(home, folder);
      let entries: Dirent[] = [];
      try {
        entries = readdirSync(directory, { withFileTypes: true });
      } catch {
        // Missing, or not ours to list.
      }
      for (const entry of entries) {
        if (entry.isSocket()) candidates.add(path.join(directory, entry.name));
      }
    }
  }
  const sockets: string[] = [];
  for (const candidate of candidates) {
    let real: string;
    try {
      real = realpathSync.native(candidate);
    } catch {
      continue;
    }
    if (pathState(real) !== "other") continue;
    if (isInside(root, real) || HIDDEN_TREES.some((tree) => isInside(tree, real))) continue;
    sockets.push(real);
  }
  return sockets;
}
