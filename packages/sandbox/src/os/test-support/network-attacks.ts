import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { connect } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "vitest";
import { SANDBOX_PROXY_PORT } from "../../network/proxy-forwarder.js";
import { createCommandWrapper } from "../create-command-wrapper.js";
import { attempt, verdicts } from "./fixture.js";
import { listenDatagram, listenStream, quote } from "./servers.js";
import type { AttackCases } from "./suite.js";

/**
 * A sandboxed step that connects to a Unix socket; a leading `@` names an abstract socket. Node
 * binds abstract names padded with NUL bytes to the full 108-byte `sun_path`, so the client pads too.
 */
function connectUnix(address: string): string {
  const target = address.startsWith("@")
    ? `("\\0" + sys.argv[1][1:]).ljust(108, "\\0")`
    : "sys.argv[1]";
  return `/usr/bin/python3 -c 'import socket, sys; s = socket.socket(socket.AF_UNIX); s.connect(${target}); s.sendall(b"sandbox"); s.close()' ${quote(address)}`;
}

const LISTENER = path.join(path.dirname(fileURLToPath(import.meta.url)), "unix-listener.py");

/** How this host makes a network namespace of its own: as root, or through a user namespace. */
const UNSHARE = process.getuid?.() === 0 ? ["--net"] : ["--user", "--map-root-user", "--net"];
/** Why no other network namespace can be made here, or `undefined` when one can. */
const otherNamespaceSkip = ((): string | undefined => {
  const made = spawnSync("/usr/bin/unshare", [...UNSHARE, "true"], { encoding: "utf8" });
  return made.status === 0
    ? undefined
    : `unshare ${UNSHARE.join(" ")} fails here: ${(made.stderr || made.error?.message || "").trim()}`;
})();

/**
 * A Unix socket listening at `socketPath`, bound by a process in a network namespace of its own
 * (so not in this namespace's /proc/net/unix); each connection's bytes are printed as a line.
 */
async function listenInNamespace(socketPath: string) {
  const child = spawn("/usr/bin/unshare", [...UNSHARE, "/usr/bin/python3", LISTENER, socketPath], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const lines: string[] = [];
  const waiters: (() => void)[] = [];
  child.stdout.setEncoding("utf8");
  let buffered = "";
  child.stdout.on("data", (chunk: string) => {
    buffered += chunk;
    const complete = buffered.split("\n");
    buffered = complete.pop() ?? "";
    lines.push(...complete);
    for (const waiter of waiters.splice(0)) waiter();
  });
  let exited: string | undefined;
  child.once("exit", (code, signal) => {
    exited = `the listener exited (${signal ?? code})`;
    for (const waiter of waiters.splice(0)) waiter();
  });
  const seen = (line: string) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (lines.includes(line)) resolve();
        else if (exited !== undefined) reject(new Error(`${exited} before printing ${line}`));
        else waiters.push(check);
      };
      check();
    });
  await seen("ready");
  return {
    path: socketPath,
    /** What each connection sent, after the namespace's own start. */
    get received() {
      return lines.slice(1);
    },
    async sendMarker() {
      // A sandboxed connection made earlier was printed before the marker's.
      const client = connect(socketPath);
      client.on("error", () => {});
      client.end("marker");
      await seen("marker");
    },
    close() {
      child.kill();
    },
  };
}

/**
 * The cases of `attacks-network.test.ts`, declared over any fixture: through bubblewrap there, and
 * through the Docker backend over a bound workspace in `docker/docker-attacks.test.ts`.
 */
export const networkAttacks: AttackCases = (fixture, it) => {
  it("cannot reach a TCP server on the host's loopback", async () => {
    const server = await listenStream({ port: 0 });
    try {
      const before = await fixture.state();
      const { stdout } = await fixture.run(
        attempt(`exec 3<>/dev/tcp/127.0.0.1/${server.port} && echo sandbox >&3`),
      );
      await server.sendMarker();
      expect(verdicts(stdout)).toEqual(["BLOCKED"]);
      expect(server.received).toEqual(["marker"]);
      expect(await fixture.state()).toEqual(before);
    } finally {
      await server.close();
    }
  });

  it("cannot reach that server with the whole network either: the proxy refuses this machine's addresses", async () => {
    const server = await listenStream({ port: 0 });
    try {
      const { stdout } = await fixture.run(
        [
          "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '",
          attempt(`exec 3<>/dev/tcp/127.0.0.1/${server.port} && echo sandbox >&3`),
          // Through the proxy, as a tool that reads HTTP_PROXY asks it (bash alone: no curl needed).
          `exec 3<>/dev/tcp/127.0.0.1/${SANDBOX_PROXY_PORT} && printf 'GET http://127.0.0.1:${server.port}/ HTTP/1.0\\r\\n\\r\\n' >&3 && cat <&3`,
        ].join("\n"),
        { network: true },
      );
      await server.sendMarker();
      expect(stdout.split("\n")[0]).toBe("lo");
      expect(verdicts(stdout)).toEqual(["BLOCKED"]);
      expect(stdout).toContain("HTTP/1.1 403 Forbidden");
      expect(stdout).toContain(
        `To allow it, start pleach with --allow-domain '*' --allow-domain 127.0.0.1:${server.port} in place of --network`,
      );
      expect(server.received).toEqual(["marker"]);
    } finally {
      await server.close();
    }
  });

  it("cannot send UDP to the host", async () => {
    const server = await listenDatagram();
    try {
      const { stdout } = await fixture.run(
        `for i in 1 2 3; do echo sandbox > /dev/udp/127.0.0.1/${server.port}; done 2>/dev/null; echo sent`,
      );
      await server.sendMarker();
      expect(stdout).toBe("sent\n");
      expect(server.received).toEqual(["marker"]);
    } finally {
      await server.close();
    }
  });

  it("has no network interface but loopback and cannot resolve names", async () => {
    const { stdout } = await fixture.run(
      [
        "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '",
        attempt("getent hosts example.com"),
        attempt("exec 3<>/dev/tcp/1.1.1.1/53"),
      ].join("\n"),
    );
    expect(stdout.split("\n")[0]).toBe("lo");
    expect(verdicts(stdout)).toEqual(["BLOCKED", "BLOCKED"]);
  });

  it("cannot connect to an abstract Unix socket of the host", async () => {
    const name = `pleach-test-${randomBytes(6).toString("hex")}`;
    const server = await listenStream({ path: `\0${name}` });
    try {
      const { stdout } = await fixture.run(attempt(connectUnix(`@${name}`)));
      await server.sendMarker();
      expect(verdicts(stdout)).toEqual(["BLOCKED"]);
      expect(server.received).toEqual(["marker"]);
    } finally {
      await server.close();
    }
  });

  it("cannot connect to that abstract socket with the whole network either", async () => {
    const name = `pleach-test-${randomBytes(6).toString("hex")}`;
    const server = await listenStream({ path: `\0${name}` });
    try {
      const { stdout } = await fixture.run(attempt(connectUnix(`@${name}`)), { network: true });
      await server.sendMarker();
      expect(verdicts(stdout)).toEqual(["BLOCKED"]);
      expect(server.received).toEqual(["marker"]);
    } finally {
      await server.close();
    }
  });

  it(
    "cannot reach Unix sockets bound in another network namespace, outside the workspace or in it",
    async () => {
      const outside = await listenInNamespace(path.join(fixture.outside, "other-netns.sock"));
      const inside = await listenInNamespace(path.join(fixture.root, "other-netns.sock"));
      try {
        const { stdout } = await fixture.run(
          [
            attempt(connectUnix(outside.path)),
            attempt(connectUnix(inside.path)),
            attempt(connectUnix(outside.path)),
          ].join("\n"),
          { network: true },
        );
        await outside.sendMarker();
        await inside.sendMarker();
        expect(verdicts(stdout)).toEqual(["BLOCKED", "BLOCKED", "BLOCKED"]);
        expect(outside.received).toEqual(["marker"]);
        expect(inside.received).toEqual(["marker"]);
      } finally {
        outside.close();
        inside.close();
      }
    },
    otherNamespaceSkip,
  );

  it("cannot reach a Unix socket in the host's /tmp, nor anything under /run", async () => {
    const socketPath = path.join(fixture.hostTemporary, "host.sock");
    const server = await listenStream({ path: socketPath });
    try {
      const { stdout } = await fixture.run(
        [
          attempt(connectUnix(socketPath)),
          // A session's kept outputs (its memory folder of its own) are all there is.
          "ls -A /run /var/run | grep -v ':$' | grep -v '^pleach-output$' | grep -c . || true",
        ].join("\n"),
      );
      await server.sendMarker();
      expect(verdicts(stdout)).toEqual(["BLOCKED"]);
      expect(stdout.trim().split("\n").at(-1)).toBe("0");
      expect(server.received).toEqual(["marker"]);
    } finally {
      await server.close();
    }
  });

  it("cannot reach the agent socket named by SSH_AUTH_SOCK, and does not inherit the variable", async () => {
    const socketPath = path.join(fixture.outside, "agent.sock");
    const server = await listenStream({ path: socketPath });
    try {
      const before = await fixture.state();
      const { stdout } = await fixture.run(
        [attempt(connectUnix(socketPath)), 'test -z "$SSH_AUTH_SOCK" && echo agent=unset'].join(
          "\n",
        ),
        { hostEnvironment: { ...process.env, SSH_AUTH_SOCK: socketPath } },
      );
      await server.sendMarker();
      expect(verdicts(stdout)).toEqual(["BLOCKED"]);
      expect(stdout).toContain("agent=unset");
      expect(server.received).toEqual(["marker"]);
      expect(await fixture.state()).toEqual(before);
    } finally {
      await server.close();
    }
  });

  it("cannot reach a host daemon's Unix socket in a folder it can read (found in /proc/net/unix)", async () => {
    // Not named by any variable nor in a known socket folder: only the kernel's table knows it.
    const socketPath = path.join(fixture.outside, "daemon.sock");
    const server = await listenStream({ path: socketPath });
    try {
      const before = await fixture.state();
      const { stdout } = await fixture.run(
        [attempt(connectUnix(socketPath)), `test -S ${quote(socketPath)} && echo seen`].join("\n"),
      );
      await server.sendMarker();
      expect(verdicts(stdout)).toEqual(["BLOCKED"]);
      expect(stdout).not.toContain("seen");
      expect(server.received).toEqual(["marker"]);
      expect(await fixture.state()).toEqual(before);
    } finally {
      await server.close();
    }
  });

  it("cannot reach a host process's Unix socket inside the workspace", async () => {
    const socketPath = path.join(fixture.root, "dev-server.sock");
    const server = await listenStream({ path: socketPath });
    try {
      const before = await fixture.state();
      const { stdout } = await fixture.run(
        [attempt(connectUnix(socketPath)), attempt("rm dev-server.sock")].join("\n"),
      );
      await server.sendMarker();
      expect(verdicts(stdout)).toEqual(["BLOCKED", "BLOCKED"]);
      expect(server.received).toEqual(["marker"]);
      expect(await fixture.state()).toEqual(before);
    } finally {
      await server.close();
    }
  });
};

/**
 * The cases of a domain policy in `attacks-network.test.ts`: the proxy is the only way out, so a
 * connection that does not go through it fails as with the network off, and one through it to
 * the host's own services is refused.
 */
export const domainNetworkAttacks: AttackCases = (fixture, it) => {
  const network = { allowDomains: ["localhost", "example.com"] };

  it("cannot reach the host's loopback or a public address without the proxy", async () => {
    const server = await listenStream({ port: 0 });
    try {
      const { stdout } = await fixture.run(
        [
          "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '",
          attempt(`exec 3<>/dev/tcp/127.0.0.1/${server.port} && echo sandbox >&3`),
          attempt("exec 3<>/dev/tcp/1.1.1.1/53"),
          attempt("exec 3<>/dev/tcp/93.184.215.14/80"),
          attempt("getent hosts example.com"),
        ].join("\n"),
        { network },
      );
      await server.sendMarker();
      expect(stdout.split("\n")[0]).toBe("lo");
      expect(verdicts(stdout)).toEqual(["BLOCKED", "BLOCKED", "BLOCKED", "BLOCKED"]);
      expect(server.received).toEqual(["marker"]);
    } finally {
      await server.close();
    }
  });

  it("cannot reach the host's loopback through the proxy, by address or by an allowed name", async () => {
    const server = await listenStream({ port: 0 });
    try {
      const { stdout } = await fixture.run(
        [
          attempt(`curl -sS --fail --noproxy '' http://127.0.0.1:${server.port}/`),
          attempt(`curl -sS --fail --noproxy '' -p http://localhost:${server.port}/`),
          `curl -sS --noproxy '' http://localhost:${server.port}/`,
        ].join("\n"),
        { network },
      );
      await server.sendMarker();
      expect(verdicts(stdout)).toEqual(["BLOCKED", "BLOCKED"]);
      expect(stdout).toContain("localhost resolves to 127.0.0.1, a loopback address");
      expect(server.received).toEqual(["marker"]);
    } finally {
      await server.close();
    }
  });

  it("cannot reach a Unix socket in the host's /tmp, where the proxy's folder is, but the proxy's", async () => {
    const socketPath = path.join(fixture.hostTemporary, "host.sock");
    const server = await listenStream({ path: socketPath });
    try {
      const { stdout } = await fixture.run(
        [attempt(connectUnix(socketPath)), "ls -A /run/pleach-proxy"].join("\n"),
        { network },
      );
      await server.sendMarker();
      expect(verdicts(stdout)).toEqual(["BLOCKED"]);
      expect(stdout.split("\n").slice(1)).toEqual(["proxy.sock", ""]);
      expect(server.received).toEqual(["marker"]);
    } finally {
      await server.close();
    }
  });

  it("cannot reach the proxy of a command started after it, even with TMPDIR outside /tmp", async () => {
    // The command with the network off looks at the host before the other command's proxy binds
    // its socket, so no mask covers it: only the proxy folder's place keeps it out of sight.
    const server = await listenStream({ port: 0 });
    const wait = (file: string) =>
      `for i in $(seq 600); do [ -e ${file} ] && break; sleep 0.05; done`;
    const tunnel =
      "import glob, socket, sys\n" +
      "found = glob.glob(sys.argv[1] + '/pleach-proxy-*/proxy.sock') + glob.glob('/tmp/pleach-proxy-*/proxy.sock')\n" +
      "s = socket.socket(socket.AF_UNIX); s.connect(found[0])\n" +
      "s.sendall(b'CONNECT 127.0.0.1:' + sys.argv[2].encode() + b' HTTP/1.1\\r\\n\\r\\n')\n" +
      "assert b' 200 ' in s.recv(200)\n" +
      "s.sendall(b'sandbox'); s.shutdown(socket.SHUT_WR); s.recv(1)\n";
    const savedTemporary = process.env.TMPDIR;
    try {
      const offline = fixture.run(
        [
          "touch off-running",
          wait("domain-running"),
          attempt(`/usr/bin/python3 -c ${quote(tunnel)} ${quote(fixture.outside)} ${server.port}`),
          "touch off-done",
        ].join("\n"),
      );
      await expect
        .poll(() => existsSync(path.join(fixture.root, "off-running")), { timeout: 30_000 })
        .toBe(true);
      process.env.TMPDIR = fixture.outside;
      const domain = fixture.run(["touch domain-running", wait("off-done")].join("\n"), {
        network: { allowDomains: [`127.0.0.1:${server.port}`] },
        wrapper: createCommandWrapper({ warmSandbox: false }),
      });
      await expect
        .poll(() => existsSync(path.join(fixture.root, "domain-running")), { timeout: 30_000 })
        .toBe(true);
      process.env.TMPDIR = savedTemporary;
      const [{ stdout }] = await Promise.all([offline, domain]);
      await server.sendMarker();
      expect(verdicts(stdout)).toEqual(["BLOCKED"]);
      expect(server.received).toEqual(["marker"]);
    } finally {
      if (savedTemporary === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = savedTemporary;
      await server.close();
    }
  });
};
