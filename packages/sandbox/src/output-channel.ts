import { rmSync } from "node:fs";
import { lstat, mkdtemp, readdir, rm } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";

/** The longest socket path every host takes: `sun_path` is 104 bytes on macOS, with its NUL. */
const MAX_SOCKET_PATH_BYTES = 103;
/** The size of the number that names a connection (the most `writeUIntLE` takes). */
const TOKEN_BYTES = 6;
/** Accepted connections kept waiting for their reader to claim them. */
const MAX_UNCLAIMED = 256;
const READ_BUFFER_BYTES = 64 * 1024;
const FOLDER_PREFIX = "pleach-out-";
/** A folder of ours this old with nobody listening in it was left by a killed process. */
const STALE_AFTER_MS = 60_000;

/** One output stream of a command: a connected pair of Unix sockets. */
export interface OutputStream {
  /**
   * Our reading end. It emits `end` when every copy of `writer` is closed (the command and all it
   * started), like a pipe; it stays open until destroyed (half-open: it never closes by itself).
   */
  reader: net.Socket;
  /** The command's end: pass it in `spawn`'s `stdio`, then destroy it right after the spawn. */
  writer: net.Socket;
}

/**
 * Output streams read into one reused buffer. Node reads a pipe into a fresh 64 KiB buffer per
 * read and frees them only at the next GC, which a flood of output delays until tens of MB pile
 * up; a socket made with `onread` reads into a buffer of ours instead.
 */
export interface OutputChannel {
  /** The private folder of the listening socket, once it listens. */
  readonly directory: string | undefined;
  /**
   * Open a stream whose bytes go to `onData`. The chunk is a view of a buffer reused by the next
   * read: copy what you keep. Resolves to `undefined` when the channel cannot work here (no
   * usable temporary folder, a path too long for a socket, closed): use a plain pipe instead.
   */
  open(onData: (chunk: Buffer) => void): Promise<OutputStream | undefined>;
  /** Stop listening and remove the private folder; `open` then resolves to `undefined`. */
  close(): Promise<void>;
}

/** Options of {@link createOutputChannel}. */
export interface OutputChannelOptions {
  /**
   * Where the private folder of the listening socket is created, on the first `open`.
   * @default os.tmpdir()
   */
  parent?: string;
  /**
   * Streams kept connected ahead of time (two per command), so that opening one costs a lookup.
   * @default 2
   */
  spares?: number;
}

/** A connected stream, and where its reader's bytes go once a caller has taken it. */
interface Connection extends OutputStream {
  deliver: ((chunk: Buffer) => void) | undefined;
}

/**
 * An {@link OutputChannel}: a Unix socket server listening in a private (0700) folder, created on
 * the first `open`, and removed when the process exits (the folders of processes killed by a
 * signal are removed by the next channel that starts). Each stream connects to it, and the server
 * writes a number naming the accepted connection down it: the reader, the only one who can read
 * that connection, claims its other end by that number. So pairs never mix whatever the order of
 * concurrent connections, and a connection from anyone else is never paired (it only ever gets its
 * own number). A few streams are kept connected ahead of time, so that `open` costs the command
 * nothing but a lookup.
 */
export function createOutputChannel({
  parent,
  spares = 2,
}: OutputChannelOptions = {}): OutputChannel {
  // The server's ends of connections not yet claimed by their reader, by number.
  const unclaimed = new Map<number, net.Socket>();
  const ready: Connection[] = [];
  // One buffer serves every stream: a read is handed to its callback before the next read starts.
  const readBuffer = Buffer.allocUnsafe(READ_BUFFER_BYTES);
  let directory: string | undefined;
  let server: net.Server | undefined;
  let listening: Promise<string | undefined> | undefined;
  let refilling = false;
  let closed = false;
  let connections = 0;

  const removeOnExit = () => {
    if (directory !== undefined) rmSync(directory, { recursive: true, force: true });
  };

  const accept = (writer: net.Socket) => {
    // The reader's side keeps the process alive while a pairing matters.
    writer.unref();
    writer.on("error", () => {
      // A connection that breaks before it is claimed is simply dropped.
    });
    // Never read (pauseOnConnect): the server only writes the number that names this connection.
    // Only the other end of this very connection can read it, so it needs to be unique, not secret.
    connections += 1;
    const id = connections;
    unclaimed.set(id, writer);
    if (unclaimed.size > MAX_UNCLAIMED) {
      // Connections nobody claims (not ours: ours claim theirs within a read) go, oldest first.
      for (const [oldId, oldWriter] of unclaimed) {
        unclaimed.delete(oldId);
        oldWriter.destroy();
        if (unclaimed.size <= MAX_UNCLAIMED) break;
      }
    }
    const token = Buffer.allocUnsafe(TOKEN_BYTES);
    token.writeUIntLE(id, 0, TOKEN_BYTES);
    writer.write(token);
  };

  const listen = async (): Promise<string | undefined> => {
    let folder: string | undefined;
    try {
      // mkdtemp makes the folder 0700: no other user can reach the socket in it.
      folder = await mkdtemp(path.join(parent ?? os.tmpdir(), FOLDER_PREFIX));
      const socketPath = path.join(folder, "s");
      if (Buffer.byteLength(socketPath) > MAX_SOCKET_PATH_BYTES) return await discard(folder);
      // allowHalfOpen: never shut down a socket the command still writes to.
      const candidate = net.createServer({ allowHalfOpen: true, pauseOnConnect: true }, accept);
      await new Promise<void>((resolve, reject) => {
        candidate.once("error", reject);
        candidate.listen(socketPath, () => {
          candidate.off("error", reject);
          resolve();
        });
      });
      candidate.on("error", () => {
        // A listening Unix socket has no later errors worth failing a command for.
      });
      candidate.unref();
      if (closed) {
        candidate.close();
        return await discard(folder);
      }
      server = candidate;
      directory = folder;
      process.once("exit", removeOnExit);
      void removeStaleFolders(path.dirname(folder), folder);
      return socketPath;
    } catch {
      return folder === undefined ? undefined : await discard(folder);
    }
  };

  const connect = (socketPath: string, spare: boolean): Promise<Connection | undefined> =>
    new Promise((resolve) => {
      const token = Buffer.alloc(TOKEN_BYTES);
      let tokenBytes = 0;
      const reader = net.connect({
        path: socketPath,
        // At the command's EOF, do not shut our side down first (a round trip) before closing.
        allowHalfOpen: true,
        onread: {
          buffer: readBuffer,
          callback: (length) => {
            if (tokenBytes === TOKEN_BYTES) {
              connection.deliver?.(readBuffer.subarray(0, length));
              return true;
            }
            // The first bytes are the number the server gave this connection.
            const taken = readBuffer.copy(token, tokenBytes, 0, length);
            tokenBytes += taken;
            if (tokenBytes < TOKEN_BYTES) return true;
            const id = token.readUIntLE(0, TOKEN_BYTES);
            const writer = unclaimed.get(id);
            if (writer === undefined) {
              fail();
              return false;
            }
            unclaimed.delete(id);
            reader.off("end", fail);
            reader.off("close", fail);
            connection.writer = writer;
            resolve(connection);
            if (taken < length) connection.deliver?.(readBuffer.subarray(taken, length));
            return true;
          },
        },
      });
      // A spare must not keep the process alive; a caller's stream must, until it is paired.
      if (spare) reader.unref();
      const connection: Connection = { reader, writer: reader, deliver: undefined };
      const fail = () => {
        reader.destroy();
        resolve(undefined);
      };
      reader.on("error", () => {
        // The caller learns of a broken stream from its `close`.
      });
      reader.once("end", fail);
      reader.once("close", fail);
    });

  const refill = async (socketPath: string) => {
    if (refilling) return;
    refilling = true;
    try {
      while (ready.length < spares && !closed) {
        const connection = await connect(socketPath, true);
        if (connection === undefined || closed) {
          connection?.reader.destroy();
          connection?.writer.destroy();
          return;
        }
        const leave = () => {
          const index = ready.indexOf(connection);
          if (index < 0) return;
          // A spare that broke while waiting leaves the pool with both its ends.
          ready.splice(index, 1);
          connection.reader.destroy();
          connection.writer.destroy();
        };
        connection.reader.once("end", leave);
        connection.reader.once("close", leave);
        ready.push(connection);
      }
    } finally {
      refilling = false;
    }
  };

  return {
    get directory() {
      return directory;
    },

    async open(onData) {
      listening ??= listen();
      const socketPath = await listening;
      if (socketPath === undefined || closed) return undefined;
      const connection = ready.shift() ?? (await connect(socketPath, false));
      // Connecting takes a few tenths of a millisecond: do it once the caller has spawned.
      setImmediate(() => void refill(socketPath));
      if (connection === undefined) return undefined;
      connection.deliver = onData;
      connection.reader.ref();
      return { reader: connection.reader, writer: connection.writer };
    },

    async close() {
      closed = true;
      for (const writer of unclaimed.values()) writer.destroy();
      unclaimed.clear();
      for (const connection of ready.splice(0)) {
        connection.reader.destroy();
        connection.writer.destroy();
      }
      // Stop listening now; streams already handed out live on until their owners close them.
      server?.close();
      server = undefined;
      process.off("exit", removeOnExit);
      if (directory !== undefined) await rm(directory, { recursive: true, force: true });
      directory = undefined;
    },
  };
}

/**
 * Remove the folders that processes killed by a signal left behind (no exit handler ran): ours by
 * name and owner, old enough not to be still in setup, with nobody listening on their socket.
 */
async function removeStaleFolders(parent: string, own: string): Promise<void> {
  try {
    const owner = process.getuid?.();
    for (const name of await readdir(parent)) {
      if (!name.startsWith(FOLDER_PREFIX)) continue;
      const folder = path.join(parent, name);
      if (folder === own) continue;
      const info = await lstat(folder).catch(() => undefined);
      if (info === undefined || !info.isDirectory() || info.uid !== owner) continue;
      if (Date.now() - info.mtimeMs < STALE_AFTER_MS) continue;
      if (await someoneListens(path.join(folder, "s"))) continue;
      await rm(folder, { recursive: true, force: true }).catch(() => {});
    }
  } catch {
    // An unreadable temporary folder just keeps its leftovers.
  }
}

/** Whether a process accepts connections on the socket at `socketPath`. */
function someoneListens(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.connect(socketPath);
    probe.unref();
    probe.once("connect", () => {
      probe.destroy();
      resolve(true);
    });
    probe.once("error", (error: NodeJS.ErrnoException) => {
      resolve(error.code !== "ECONNREFUSED" && error.code !== "ENOENT");
    });
  });
}

async function discard(folder: string): Promise<undefined> {
  await rm(folder, { recursive: true, force: true }).catch(() => {});
  return undefined;
}

let shared: OutputChannel | undefined;

/** The process's {@link OutputChannel}, made on first use; its socket server starts on `open`. */
export function sharedOutputChannel(): OutputChannel {
  shared ??= createOutputChannel();
  return shared;
}
