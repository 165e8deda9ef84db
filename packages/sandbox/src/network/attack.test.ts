import net from "node:net";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { startPortPublisher } from "./published-ports.js";

/** Connect to the publisher's socket as a command in the sandbox could, sending nothing. */
function silent(socketPath: string): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(socketPath);
    socket.once("connect", () => resolve(socket));
    socket.once("error", reject);
  });
}

describe("attacks on published ports", () => {
  it("connections to the publisher's socket that never send a line are not held without bound", async () => {
    const publisher = await startPortPublisher();
    const sockets: net.Socket[] = [];
    try {
      const socketPath = path.join(publisher.folder, "publish.sock");
      // Each one is a file descriptor of the host process: enough of them and its file tools fail.
      for (let index = 0; index < 300; index += 1) {
        const socket = await silent(socketPath).catch(() => undefined);
        if (socket === undefined) continue;
        socket.on("error", () => undefined);
        sockets.push(socket);
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
      const open = sockets.filter((socket) => !socket.destroyed && socket.readyState === "open");
      // A bound on those waiting for their first line, so that the host's descriptors stay its own.
      expect(open.length).toBeLessThanOrEqual(64);
    } finally {
      for (const socket of sockets) socket.destroy();
      await publisher.close();
    }
  }, 30_000);
});
