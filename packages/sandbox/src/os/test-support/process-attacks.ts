import { execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "vitest";
import {
  CONFINED_ENVIRONMENT,
  NON_INTERACTIVE_ENVIRONMENT,
} from "../../policy/protected-entries.js";
import { createCommandWrapper } from "../create-command-wrapper.js";
import { feedInputs, inputPipes } from "../launcher-inputs.js";
import type { WrappedCommand } from "../wrap-command.js";
import { attempt, verdicts } from "./fixture.js";
import type { AttackCases } from "./suite.js";

const PYTHON = "/usr/bin/python3";
const driver = path.join(path.dirname(fileURLToPath(import.meta.url)), "tiocsti-driver.py");
const keyringProbe = path.join(path.dirname(fileURLToPath(import.meta.url)), "keyring-probe.py");

/** Host processes whose command line contains `marker`. */
async function hostProcessesWith(marker: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const commandLine = await readFile(`/proc/${entry}/cmdline`, "utf8").catch(() => "");
    if (commandLine.includes(marker)) found.push(`${entry}: ${commandLine.replace(/\0/g, " ")}`);
  }
  return found;
}

/** Run an argv on a pseudo-terminal that is its controlling terminal; what the terminal echoed. */
function onTerminal({ inputs, ...invocation }: WrappedCommand) {
  return new Promise<{ output: string; status: number }>((resolve, reject) => {
    // The driver's command inherits its fds 3 and up: the invocation's inputs.
    const child = spawn(PYTHON, [driver], {
      stdio: ["pipe", "pipe", "inherit", ...inputPipes(inputs)],
    });
    feedInputs(child, inputs);
    let stdout = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8");
    });
    child.on("error", reject);
    child.on("close", () => {
      try {
        resolve(JSON.parse(stdout));
      } catch (error) {
        reject(error);
      }
    });
    child.stdin?.end(JSON.stringify(invocation));
  });
}

const INJECT =
  "import fcntl, termios\n" +
  "try:\n" +
  "    for c in [b'Z', b'Q', b'Z', b'Q']: fcntl.ioctl(0, termios.TIOCSTI, c)\n" +
  "    print('inject-succeeded')\n" +
  "except OSError as error:\n" +
  "    print('inject-failed', error.errno)\n";

/**
 * The cases of `attacks-process.test.ts`, declared over any fixture: through bubblewrap there, and
 * through the Docker backend over a bound workspace in `docker/docker-attacks.test.ts`.
 */
export const processAttacks: AttackCases = (fixture, it) => {
  it("does not see secret-looking variables, in env, /proc/1/environ or any command line", async () => {
    const secret = `s3cr3t-${randomBytes(8).toString("hex")}`;
    process.env.PLEACH_TEST_SECRET_TOKEN = secret;
    try {
      const { stdout } = await fixture.run(
        [
          "env",
          "for p in /proc/[0-9]*; do tr '\\0' '\\n' < $p/environ; tr '\\0' ' ' < $p/cmdline; echo; done 2>/dev/null",
        ].join("\n"),
        { env: { PLEACH_API_KEY: `${secret}-explicit`, PLEACH_VISIBLE: "visible-value" } },
      );
      expect(stdout).not.toContain(secret);
      expect(stdout).not.toContain("PLEACH_TEST_SECRET_TOKEN");
      expect(stdout).not.toContain("PLEACH_API_KEY");
      expect(stdout).toContain("PLEACH_VISIBLE=visible-value");
    } finally {
      delete process.env.PLEACH_TEST_SECRET_TOKEN;
    }
  });

  it("inherits only allow-listed host variables, and a caller's LD_PRELOAD never reaches the launcher", async () => {
    // NUL-separated: a value may hold a newline.
    const { stdout } = await fixture.run("env -0 | cut -z -d= -f1 | sort -z | tr '\\0' ' '", {
      hostEnvironment: {
        PATH: "/usr/bin:/bin",
        HOME: "/nonexistent",
        AWS_PROFILE: "x",
        LD_PRELOAD: "/x.so",
      },
      env: { LD_PRELOAD: "/nonexistent/evil.so" },
    });
    // Beside them only pleach's own constants that stop prompts (NON_INTERACTIVE_ENVIRONMENT) and
    // move caches off the read-only home (CONFINED_ENVIRONMENT).
    const expected = ["HOME", "LD_PRELOAD", "PATH", "PWD", "SHLVL", "TMPDIR", "_"];
    expected.push(
      ...Object.keys(NON_INTERACTIVE_ENVIRONMENT),
      ...Object.keys(CONFINED_ENVIRONMENT),
    );
    expect(stdout.trim()).toBe(expected.sort().join(" "));
    const wrapper = createCommandWrapper({
      hostEnvironment: { PATH: "/usr/bin", LD_PRELOAD: "/x.so" },
    });
    const invocation = await wrapper.invocation({
      command: "true",
      root: fixture.root,
      cwd: fixture.root,
      mode: "read-only",
      env: { LD_PRELOAD: "/nonexistent/evil.so" },
      network: false,
    });
    expect(invocation.env).toEqual({ PATH: "/usr/bin", TMPDIR: "/tmp" });
  });

  it("cannot see or signal host processes", async () => {
    const marker = `${300 + Math.random()}`.slice(0, 12);
    const host = spawn("sleep", [marker], { stdio: "ignore" });
    try {
      const { stdout } = await fixture.run(
        [
          attempt(`kill -0 ${host.pid}`),
          attempt(`kill -0 ${process.pid}`),
          "ps -e -o pid=,args=",
        ].join("\n"),
      );
      expect(verdicts(stdout)).toEqual(["BLOCKED", "BLOCKED"]);
      expect(stdout).not.toContain(marker);
      const pids = stdout
        .split("\n")
        .filter((line) => /^\s*\d+ /.test(line))
        .map((line) => Number.parseInt(line, 10));
      expect(Math.max(...pids)).toBeLessThan(100);
      expect(host.exitCode).toBeNull();
    } finally {
      host.kill("SIGKILL");
    }
  });

  it("leaves no process behind, not even one started with setsid, nohup or a double fork", async () => {
    const marker = `${1000 + Math.random()}`.slice(0, 14);
    const { stdout } = await fixture.run(
      [
        `setsid sleep ${marker} > /dev/null 2>&1 &`,
        `nohup sleep ${marker} > /dev/null 2>&1 &`,
        `( ( sleep ${marker} > /dev/null 2>&1 & ) & )`,
        // The background shells may not have exec'd sleep yet: wait (up to 2 s) until they have.
        "disown -a",
        `for i in $(seq 100); do n=$(ps -e -o args= | grep -c "^sleep ${marker}"); [ "$n" -ge 3 ] && break; sleep 0.02; done; echo "$n"`,
      ].join("\n"),
    );
    expect(stdout.trim()).toBe("3");
    expect(await hostProcessesWith(marker)).toEqual([]);
  });

  it("cannot create nested user namespaces", async () => {
    const { stdout } = await fixture.run(
      [
        attempt("unshare -U true"),
        attempt("unshare -Ur true"),
        attempt(`${PYTHON} -c 'import os; os.unshare(os.CLONE_NEWUSER)'`),
      ].join("\n"),
    );
    expect(verdicts(stdout)).toEqual(["BLOCKED", "BLOCKED", "BLOCKED"]);
  });

  it("cannot fill the sandbox's memory file systems past their own sizes", async () => {
    // 80 MB is past /run's 16 MiB and /dev/shm's 64 MiB; /tmp's 1 GiB is read from its mount.
    const { stdout } = await fixture.run(
      "for d in /run /dev/shm /dev; do head -c 80000000 /dev/zero 2>&1 >$d/fill | sed 's/.*: //' | tr -d '\\n'; echo \" $d\"; rm -f $d/fill; done; " +
        "grep ' /tmp tmpfs ' /proc/mounts | tail -n 1 | grep -o 'size=[0-9]*k'",
    );
    expect(stdout.trim().split("\n")).toEqual([
      "No space left on device /run",
      "No space left on device /dev/shm",
      "Read-only file system /dev",
      "size=1048576k",
    ]);
  });

  it("holds no capabilities", async () => {
    const { stdout } = await fixture.run("grep -E '^Cap(Eff|Prm|Bnd|Amb)' /proc/self/status");
    expect(
      stdout
        .split("\n")
        .filter(Boolean)
        .map((line) => line.split(/\s+/)[1]),
    ).toEqual(["0000000000000000", "0000000000000000", "0000000000000000", "0000000000000000"]);
  });

  it("cannot read, find, list or add to the host's keyrings, nor see their keys in /proc/keys", async () => {
    const description = `pleach-test-${randomBytes(6).toString("hex")}`;
    const serial = execFileSync(PYTHON, [keyringProbe, "add", description], {
      encoding: "utf8",
    }).trim();
    try {
      // Given as text: the sandbox need not see this checkout.
      const probe = await readFile(keyringProbe, "utf8");
      const { stdout } = await fixture.run(
        `${PYTHON} -c "$PLEACH_PROBE" probe ${description} ${serial}`,
        { env: { PLEACH_PROBE: probe } },
      );
      expect(stdout.trim().split("\n")).toEqual([
        "session-keyring EPERM",
        "request-key EPERM",
        "read-key EPERM",
        "add-key EPERM",
        expect.stringMatching(/^proc-keys (EACCES|no-key)$/),
      ]);
      // The control: the host itself finds the key.
      const host = execFileSync(PYTHON, [keyringProbe, "probe", description, serial], {
        encoding: "utf8",
      });
      expect(host).toContain("read-key ok");
    } finally {
      execFileSync(PYTHON, [keyringProbe, "remove", serial]);
    }
  });

  it("cannot push characters into the caller's terminal with TIOCSTI", async () => {
    const control = await onTerminal({ file: PYTHON, args: ["-c", INJECT], env: {} });
    const wrapper = createCommandWrapper();
    const invocation = await wrapper.invocation({
      command: `${PYTHON} -c "$PLEACH_INJECT"`,
      root: fixture.root,
      cwd: fixture.root,
      mode: "workspace-write",
      env: { PLEACH_INJECT: INJECT },
      network: false,
    });
    try {
      const confined = await onTerminal(invocation);
      expect(confined.output).toContain("inject-failed");
      expect(confined.output).not.toContain("ZQZQ");
    } finally {
      await invocation.release?.();
    }
    // The control shows whether this host allows TIOCSTI at all (dev.tty.legacy_tiocsti).
    if (control.output.includes("inject-succeeded")) expect(control.output).toContain("ZQZQ");
    else expect(control.output).toContain("inject-failed");
  });
};
