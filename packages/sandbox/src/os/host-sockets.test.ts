import { writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import path from "node:path";
import { useTempDir } from "@pleach/core/testing";
import { describe, expect, it } from "vitest";
import { boundUnixSockets } from "./host-sockets.js";

describe("boundUnixSockets", () => {
  it("reads the absolute paths of the kernel's table, leaving out abstract, unnamed and relative ones", async () => {
    const folder = await useTempDir("pleach-bound-sockets-");
    const table = path.join(folder, "unix");
    await writeFile(
      table,
      [
        "Num       RefCount Protocol Flags    Type St Inode Path",
        "00000000d2b246eb: 00000002 00000000 00010000 0001 01 9711762 /var/run/docker.sock",
        "0000000038a94877: 00000003 00000000 00000000 0001 03 9711818",
        "0000000038a94878: 00000002 00000000 00010000 0001 01 9711820 @/tmp/.X11-unix/X0",
        "0000000038a94879: 00000002 00000000 00010000 0001 01 9711821 relative.sock",
        "0000000038a9487a: 00000002 00000000 00010000 0002 01 9711822 /var/tmp/a b/dgram sock",
        "0000000038a9487b: 00000002 00000000 00010000 0001 01 9711823 /var/run/docker.sock",
        "",
      ].join("\n"),
    );
    expect(boundUnixSockets([table])).toEqual(["/var/run/docker.sock", "/var/tmp/a b/dgram sock"]);
  });

  it("is empty when the table cannot be read", () => {
    expect(boundUnixSockets(["/nonexistent/proc/net/unix"])).toEqual([]);
  });

  it("finds a socket this process listens on", async () => {
    const folder = await useTempDir("pleach-bound-sockets-");
    const socketPath = path.join(folder, "listening.sock");
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(socketPath, resolve));
    try {
      expect(boundUnixSockets()).toContain(socketPath);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
