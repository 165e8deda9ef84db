import { execFileSync } from "node:child_process";
import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import type { ExecResult } from "@pleach/core/sandbox";
import { useTempDir } from "@pleach/core/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createLocalSandbox, type LocalSandbox } from "../local-sandbox.js";
import type { CommandWrapper } from "./command-wrapper.js";
import { createCommandWrapper } from "./create-command-wrapper.js";
import { sessionServerSupported } from "./session-server.js";
import { attackSuiteSkipReason, runningAs } from "./test-support/suite.js";

const attackSkip = await attackSuiteSkipReason();
const skipReason =
  attackSkip ?? (sessionServerSupported() ? undefined : "no root-owned /usr/bin/perl");

/** Printed first by a command that runs in a warm sandbox (whose pid 1 is its Perl server). */
const WARM = "[warm]";
const PROBE = `if [ "$(cat /proc/1/comm)" = perl ]; then echo '${WARM}'; fi`;

/** Host processes whose command line contains `marker`. */
async function hostProcessesWith(marker: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const commandLine = await readFile(`/proc/${entry}/cmdline`, "utf8").catch(() => "");
    if (commandLine.includes(marker)) found.push(commandLine.replace(/\0/g, " "));
  }
  return found;
}

describe.skipIf(skipReason !== undefined)(
  `warm sandboxes ${runningAs()}${skipReason ? ` (skipped: ${skipReason})` : ""}`,
  () => {
    let root: string;
    let wrapper: CommandWrapper;
    let sandbox: LocalSandbox;

    /** Run `command` in the warm sandbox, after warming it up; fails if it ran elsewhere. */
    async function warmExec(
      command: string,
      options: Parameters<LocalSandbox["exec"]>[1] = {},
    ): Promise<ExecResult> {
      for (let attempt = 0; ; attempt += 1) {
        const probe = await sandbox.exec(PROBE);
        if (probe.stdout.startsWith(WARM)) break;
        if (attempt > 200) throw new Error("no warm sandbox after 200 commands");
      }
      const result = await sandbox.exec(`${PROBE}\n${command}`, options);
      if (!result.stdout.startsWith(WARM)) throw new Error("the command ran in a one-off sandbox");
      return { ...result, stdout: result.stdout.slice(WARM.length + 1) };
    }

    beforeEach(async () => {
      root = await useTempDir({ prefix: "pleach-warm-test-" });
      execFileSync("git", ["init", "-q", root]);
      wrapper = createCommandWrapper({ warmIdleMs: 60_000 });
      sandbox = await createLocalSandbox({ root, commandWrapper: wrapper });
    });
    afterEach(async () => {
      await wrapper.close?.();
    });

    it("runs each command with its own folder, variables and exit status", async () => {
      await mkdir(path.join(root, "sub"));
      const first = await warmExec('pwd; echo "$GREETING"; exit 7', {
        cwd: "sub",
        env: { GREETING: "hello" },
      });
      expect(first).toMatchObject({ exitCode: 7, stdout: `${root}/sub\nhello\n`, timedOut: false });
      const second = await warmExec(`pwd; echo "\${GREETING:-unset}"; kill -TERM $$`);
      expect(second).toMatchObject({ exitCode: 143, stdout: `${root}\nunset\n` });
    });

    it("kills what a command left running and empties /tmp, /run, /dev and /dev/shm before the next", async () => {
      const marker = `${2000 + Math.random()}`.slice(0, 14);
      await warmExec(
        [
          `setsid sleep ${marker} > /dev/null 2>&1 &`,
          `( ( sleep ${marker} > /dev/null 2>&1 & ) & )`,
          "touch /tmp/left /run/left /dev/shm/left /dev/left; mkdir -p /tmp/deep/er; chmod 000 /tmp/deep",
          `for i in $(seq 100); do [ "$(ps -e -o args= | grep -c "^sleep ${marker}")" -ge 2 ] && break; sleep 0.02; done`,
        ].join("\n"),
      );
      const after = await warmExec(
        `ps -e -o args= | grep -c "^sleep ${marker}"; ls -A /tmp /run /dev/shm; ls /dev/left 2>&1 | grep -c 'No such'`,
      );
      // /tmp holds only the workspace's own mount point (the workspace is under /tmp here).
      expect(after.stdout).toBe(
        `0\n/dev/shm:\n\n/run:\n\n/tmp:\n${path.relative("/tmp", root).split("/")[0]}\n1\n`,
      );
      expect(await hostProcessesWith(marker)).toEqual([]);
    });

    it("gives a background child's late output to nobody: not to the next command", async () => {
      const first = await warmExec("( sleep 0.5; echo LATE ) &\necho first");
      expect(first.stdout).toBe("first\n");
      const second = await warmExec("sleep 0.5; echo second");
      expect(second.stdout).toBe("second\n");
    });

    it("keeps its server out of a command's reach: no ptrace, no /proc/<pid>/mem, no environ", async () => {
      const { stdout } = await warmExec(
        [
          "server=1",
          'echo "server=$server"',
          'if cat "/proc/$server/environ" >/dev/null 2>&1; then echo environ-read; else echo environ-denied; fi',
          'if (exec 3>"/proc/$server/mem") 2>/dev/null; then echo mem-open; else echo mem-denied; fi',
          "if python3 -c 'import ctypes,sys; sys.exit(0 if ctypes.CDLL(None).ptrace(16, int(sys.argv[1]), 0, 0) == 0 else 1)' \"$server\" 2>/dev/null; then echo ptrace-attached; else echo ptrace-denied; fi",
          "if cat /proc/self/environ >/dev/null; then echo own-environ-read; fi",
        ].join("\n"),
      );
      expect(stdout).toMatch(/^server=\d+\n/);
      expect(stdout).toContain("environ-denied");
      expect(stdout).toContain("mem-denied");
      expect(stdout).toContain("ptrace-denied");
      expect(stdout).toContain("own-environ-read");
    });

    it("cannot kill or stop its server, and the next command runs in it", async () => {
      const result = await warmExec("kill -9 1; kill -STOP 1; echo after");
      expect(result).toMatchObject({ exitCode: 0, stdout: "after\n", timedOut: false });
      // kill(-1) reaches every process the command may signal, its keeper too: the command's
      // processes are then killed, with no exit status of its own; the server runs on.
      const everything = await warmExec("kill -9 -1; sleep 5; echo after");
      expect(everything).toMatchObject({ exitCode: null, timedOut: false });
      expect(everything.stdout).not.toContain("after");
      expect((await warmExec("echo again")).stdout).toBe("again\n");
    });

    it("times out and aborts like a sandbox of its own, and the next command runs", async () => {
      const marker = `${3000 + Math.random()}`.slice(0, 14);
      const timedOut = await warmExec(`echo started; sleep ${marker}`, { timeoutMs: 300 });
      expect(timedOut).toMatchObject({ timedOut: true, exitCode: null, stdout: "started\n" });
      expect(await hostProcessesWith(marker)).toEqual([]);
      const controller = new AbortController();
      const aborted = warmExec(`sleep ${marker}`, { abortSignal: controller.signal });
      setTimeout(() => controller.abort(), 300);
      await expect(aborted).rejects.toMatchObject({ code: "ABORTED" });
      expect(await hostProcessesWith(marker)).toEqual([]);
      expect((await warmExec("echo next")).stdout).toBe("next\n");
    });

    it("keeps a flood of output bounded", async () => {
      const result = await warmExec(
        "head -c 30000000 /dev/zero | tr '\\0' x; echo; echo done >&2",
        {
          maxOutputBytes: 4096,
        },
      );
      expect(result.truncated).toBe(true);
      expect(result.stdout.length).toBeLessThan(4200);
      expect(result.stderr).toBe("done\n");
    });

    it("is dropped when a protected path is replaced on the host, so the new one is protected", async () => {
      await warmExec("true");
      // The host moves the gitdir away and makes a new one: the warm sandbox has the old one bound.
      await rm(path.join(root, ".git"), { recursive: true, force: true });
      execFileSync("git", ["init", "-q", root]);
      const planted = await sandbox.exec(
        "if echo x > .git/hooks/pre-commit 2>/dev/null; then echo written; else echo refused; fi",
      );
      expect(planted.stdout).toBe("refused\n");
      // The host makes a protected file the warm sandbox does not mount over (it was missing).
      await warmExec("true");
      const envrc = path.join(root, ".envrc");
      await writeFile(envrc, "export SAFE=1\n");
      const changed = await sandbox.exec(
        "if echo 'echo pwned' > .envrc 2>/dev/null; then echo written; else echo refused; fi",
      );
      expect(changed.stdout).toBe("refused\n");
      expect(await readFile(envrc, "utf8")).toBe("export SAFE=1\n");
    });
  },
);
