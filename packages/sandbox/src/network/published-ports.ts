import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { ToolError } from "@pleach/core";
import { PERL_PATH } from "../os/session-server.js";
import { perlProgram } from "../perl-program.js";

/**
 * Ports of a session sandbox published on the host's loopback. The sandbox has a network of its
 * own, which the host cannot enter, so the sandbox's end reaches out: a publisher of the host
 * listens on a Unix socket in a private folder, bound read-only in the sandbox at
 * {@link SANDBOX_PUBLISH_FOLDER}; a small program there (`port-publisher.pl`, run by the session's
 * server) holds a control connection to it. For each host client of a published port the host asks
 * on that connection for the port, and the program connects to it inside and back to the
 * publisher, which relays the two. Nothing in the sandbox names a path the host opens: the host
 * only accepts connections on its own socket, and pairs each with a client that asked for the
 * sandbox, so a command that talks to the socket itself gets no more than the job it could be.
 */

/** Where the publisher's folder is bound inside the sandbox. */
export const SANDBOX_PUBLISH_FOLDER = "/run/pleach-publish";
const SOCKET_NAME = "publish.sock";
const PROGRAM = perlProgram("network/relay-pump.pl", "network/port-publisher.pl");
/** How long a host client waits for the sandbox's end to connect it. */
const ANSWER_MS = 10_000;
/** Host clients waiting for the sandbox's end at once; more are closed. */
const MAX_WAITING = 64;
/** The longest first line a connection to the publisher's socket sends. */
const MAX_LINE_BYTES = 80;
/**
 * Connections to the publisher's socket not yet past their first line, at once, and how long
 * each may take to send it: anything in the sandbox can connect there, and each connection is a
 * file descriptor of the host process.
 */
const MAX_UNANSWERED = 64;
const FIRST_LINE_MS = 10_000;

/** The host's end of a session sandbox's published ports. */
export interface PortPublisher {
  /** The host folder to bind read-only at {@link SANDBOX_PUBLISH_FOLDER}. */
  folder: string;
  /** The sandbox's end, for `/bin/bash -c` with its whole environment; it prints `ready`. */
  forwarder: { command: string; env: Record<string, string> };
  /** Relay `client` to `port` on the sandbox's loopback (closed when the sandbox cannot). */
  connect(port: number, client: net.Socket): void;
  close(): Promise<void>;
}

interface Waiting {
  client: net.Socket;
  timer: NodeJS.Timeout;
}

/** Start the host's end of a session sandbox's published ports. */
export async function startPortPublisher(perlPath = PERL_PATH): Promise<PortPublisher> {
  // mkdtemp makes it 700: only this user reaches the socket from the host.
  const folder = mkdtempSync(path.join(os.tmpdir(), "pleach-publish-"));
  const waiting = new Map<string, Waiting>();
  let control: net.Socket | undefined;
  let unanswered = 0;
  const drop = (id: string) => {
    const entry = waiting.get(id);
    if (entry === undefined) return undefined;
    waiting.delete(id);
    clearTimeout(entry.timer);
    return entry.client;
  };
  const server = net.createServer({ allowHalfOpen: true }, (socket) => {
    socket.on("error", () => socket.destroy());
    if (unanswered >= MAX_UNANSWERED) {
      socket.destroy();
      return;
    }
    unanswered += 1;
    let counted = true;
    // Half-open is for the relay: one that ends before its first line is done.
    const ended = () => socket.destroy();
    const answered = () => {
      if (counted) unanswered -= 1;
      counted = false;
      clearTimeout(timer);
      socket.off("end", ended);
    };
    const timer = setTimeout(() => socket.destroy(), FIRST_LINE_MS);
    socket.once("close", answered);
    socket.once("end", ended);
    firstLine(socket, (line, rest) => {
      answered();
      if (line === "control" && control === undefined) {
        control = socket;
        socket.on("close", () => {
          control = undefined;
          for (const id of [...waiting.keys()]) drop(id)?.destroy();
        });
        return;
      }
      const answer = /^(data|refused) ([0-9a-f-]+)$/.exec(line ?? "");
      const client = answer === null ? undefined : drop(answer[2] as string);
      if (client === undefined || answer?.[1] !== "data") {
        client?.destroy();
        socket.destroy();
        return;
      }
      if (rest.length > 0) client.write(rest);
      relay(client, socket);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(path.join(folder, SOCKET_NAME), () => resolve());
  });
  return {
    folder,
    forwarder: {
      command: `exec "$PLEACH_PERL" -e "$PLEACH_PUBLISHER" ${SANDBOX_PUBLISH_FOLDER}/${SOCKET_NAME}`,
      env: { PATH: "/usr/bin:/bin", PLEACH_PERL: perlPath, PLEACH_PUBLISHER: PROGRAM() },
    },
    connect(port, client) {
      client.on("error", () => client.destroy());
      if (control === undefined || waiting.size >= MAX_WAITING) {
        client.destroy();
        return;
      }
      const id = randomUUID();
      client.pause();
      const timer = setTimeout(() => drop(id)?.destroy(), ANSWER_MS);
      waiting.set(id, { client, timer });
      client.once("close", () => drop(id));
      control.write(`${id} ${port}\n`);
    },
    async close() {
      for (const id of [...waiting.keys()]) drop(id)?.destroy();
      control?.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

/** Call `then` with the first line `socket` sends (without its newline) and what came after it. */
function firstLine(socket: net.Socket, then: (line: string | undefined, rest: Buffer) => void) {
  let read = Buffer.alloc(0);
  const onData = (chunk: Buffer) => {
    read = Buffer.concat([read, chunk]);
    const end = read.indexOf(0x0a);
    if (end === -1 && read.length <= MAX_LINE_BYTES) return;
    socket.off("data", onData);
    socket.pause();
    if (end === -1 || end > MAX_LINE_BYTES) {
      socket.destroy();
      return;
    }
    then(read.subarray(0, end).toString("latin1"), read.subarray(end + 1));
  };
  socket.on("data", onData);
}

/** Relay `a` and `b` both ways, each end's shutdown passed on; either failing ends both. */
function relay(a: net.Socket, b: net.Socket) {
  const end = () => {
    a.destroy();
    b.destroy();
  };
  a.on("error", end);
  b.on("error", end);
  a.on("close", end);
  b.on("close", end);
  a.pipe(b);
  b.pipe(a);
}

/** The ports a session publishes, checked: whole numbers from 1 to 65535, each once. */
export function publishedPorts(ports: readonly unknown[] | undefined): number[] {
  const checked = new Set<number>();
  for (const port of ports ?? []) {
    if (typeof port !== "number" || !Number.isInteger(port) || port < 1 || port > 65_535) {
      throw new ToolError(
        "INVALID_INPUT",
        `publish takes TCP ports from 1 to 65535; ${JSON.stringify(port)} is not one`,
      );
    }
    checked.add(port);
  }
  return [...checked];
}

/**
 * Listen on `port` of the host's loopback (127.0.0.1, nowhere else), handing each client to
 * `route`; the server, or why it cannot listen there.
 */
export async function listenOnLoopback(
  port: number,
  route: (client: net.Socket) => void,
): Promise<net.Server | string> {
  const server = net.createServer({ allowHalfOpen: true }, route);
  return new Promise((resolve) => {
    server.once("error", (error: NodeJS.ErrnoException) =>
      resolve(
        `port ${port} could not be published on the host's loopback (${error.code ?? error.message}${error.code === "EADDRINUSE" ? ": another program listens there" : ""}); publish another port, or stop what uses it`,
      ),
    );
    server.listen(port, "127.0.0.1", () => resolve(server));
  });
}
