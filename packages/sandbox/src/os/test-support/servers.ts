import { createSocket } from "node:dgram";
import net from "node:net";

/** A host listener that records who connected, to prove a sandboxed command never reached it. */
export interface StreamListener {
  /** The first bytes of each connection, in the order they arrived. */
  received: string[];
  /**
   * Connect from the host and wait for that connection to be recorded. A sandboxed connection
   * made earlier would have been recorded before it, so no waiting on a clock is needed.
   */
  sendMarker(): Promise<void>;
  close(): Promise<void>;
}

/** Listen on a TCP port of 127.0.0.1 (`{ port: 0 }`) or a Unix socket path (`{ path }`, `\0` for abstract). */
export async function listenStream(
  address: { port: number } | { path: string },
): Promise<StreamListener & { port: number }> {
  const received: string[] = [];
  const waiters: Array<() => void> = [];
  const server = net.createServer((socket) => {
    let first = "";
    socket.on("data", (chunk) => {
      first += chunk.toString("utf8");
    });
    socket.on("end", () => {
      received.push(first);
      for (const waiter of waiters.splice(0)) waiter();
    });
    socket.on("error", () => {});
  });
  await new Promise<void>((resolve) =>
    "port" in address
      ? server.listen(address.port, "127.0.0.1", resolve)
      : server.listen(address.path, resolve),
  );
  const serverAddress = server.address();
  const port = typeof serverAddress === "object" && serverAddress !== null ? serverAddress.port : 0;
  return {
    port,
    received,
    async sendMarker() {
      // Wait for the marker itself: a sandboxed connection still being recorded must not be
      // taken for it (that race made the control case flaky).
      const recorded = new Promise<void>((resolve) => {
        const check = () => (received.includes("marker") ? resolve() : waiters.push(check));
        waiters.push(check);
      });
      const client = "port" in address ? net.connect(port, "127.0.0.1") : net.connect(address.path);
      client.end("marker");
      client.on("error", () => {});
      await recorded;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A UDP socket on 127.0.0.1 that records datagrams, with the same marker trick. */
export async function listenDatagram(): Promise<StreamListener & { port: number }> {
  const received: string[] = [];
  const waiters: Array<() => void> = [];
  const socket = createSocket("udp4");
  socket.on("message", (message) => {
    received.push(message.toString("utf8"));
    for (const waiter of waiters.splice(0)) waiter();
  });
  await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", resolve));
  const { port } = socket.address();
  return {
    port,
    received,
    async sendMarker() {
      const recorded = new Promise<void>((resolve) => waiters.push(resolve));
      socket.send("marker", port, "127.0.0.1");
      await recorded;
    },
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}

/** Quote a string for a POSIX shell. */
export function quote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}
