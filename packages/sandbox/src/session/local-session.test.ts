import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { sandboxJobsOf } from "@pleach/core/sandbox";
import { describeSandboxJobsContract, hostCommandLines, useTempDir } from "@pleach/core/testing";
import { describe, expect, it } from "vitest";
import { createLocalSandbox, type LocalSandbox } from "../local-sandbox.js";
import { createCommandWrapper } from "../os/create-command-wrapper.js";

const probe = await createLocalSandbox({ root: process.cwd(), session: true });
const sessions = probe.jobs !== undefined && probe.backend === "bubblewrap";
await probe.close();
const skipReason = "needs bubblewrap: the session sandbox and its jobs run under it";

if (sessions) {
  describeSandboxJobsContract("local session, workspace-write", {
    makeClient: (root, { maxJobs, maxJobOutputBytes }) =>
      createLocalSandbox({ root, session: { maxJobs, maxJobOutputBytes } }),
    close: (client) => (client as LocalSandbox).close(),
  });
}

/** Host processes named `marker` (`exec -a`), as the host's process table lists them. */
function hostProcesses(marker: string): string[] {
  return hostCommandLines().filter((line) => line.startsWith(marker));
}

/**
 * What the host finds of the kept outputs, in the workspace or in its own `/run`: nothing, ever
 * (they live in the session sandbox's `/run/pleach-output`, a memory folder of its own).
 */
async function keptFiles(root: string): Promise<string[]> {
  const names = await readdir(root, { recursive: true });
  const found = names.filter((name) => name.includes("pleach-output"));
  return existsSync("/run/pleach-output") ? [...found, "/run/pleach-output"] : found;
}

describe.skipIf(!sessions)(
  `local session sandbox (${sessions ? "bubblewrap" : skipReason})`,
  () => {
    it("keeps a long output whole outside the workspace, where readFile, cat and rg read it, gone at close", async () => {
      const root = await useTempDir();
      const client = await createLocalSandbox({ root, session: true });
      try {
        await client.exec("git init -q .");
        const result = await client.exec("seq 1 100000", {
          maxOutputBytes: 1000,
          fullOutputOverBytes: 40_000,
        });
        expect(result.truncated).toBe(true);
        expect(result.fullOutput).toEqual({ path: "/run/pleach-output/cmd-1.log", bytes: 588_895 });
        const whole = await client.readFile("/run/pleach-output/cmd-1.log");
        expect(whole.split("\n").length).toBe(100_001);
        expect(whole.endsWith("99999\n100000\n")).toBe(true);
        const found = await client.exec("rg -n '^77777$' /run/pleach-output/cmd-1.log");
        expect(found.stdout).toBe("77777:77777\n");
        const counted = await client.exec("cat /run/pleach-output/cmd-1.log | wc -l");
        expect(counted.stdout).toBe("100000\n");
        // Nothing of it in the workspace, inside the sandbox or on the host, while the session
        // holds it (the protected paths' placeholders are another matter).
        expect((await client.exec("ls -A")).stdout.split("\n")).not.toContain(".pleach-output");
        expect((await client.exec("find . -name '*pleach-output*'")).stdout).toBe("");
        expect((await client.exec("tar -cf - . | tar -tf - | grep pleach-output")).stdout).toBe("");
        expect(await keptFiles(root)).toEqual([]);
        expect((await client.exec("git status --porcelain --untracked-files=all")).stdout).toBe("");
        const short = await client.exec("seq 1 10", { fullOutputOverBytes: 40_000 });
        expect(short.fullOutput).toBeUndefined();
        await expect(client.readFile("/run/pleach-output/cmd-2.log")).rejects.toMatchObject({
          code: "NOT_FOUND",
        });
      } finally {
        await client.close();
      }
      expect(await keptFiles(root)).toEqual([]);
      await expect(client.readFile("/run/pleach-output/cmd-1.log")).rejects.toMatchObject({
        code: "NOT_FOUND",
      });
      await expect(client.exec("true")).rejects.toMatchObject({ code: "UNSUPPORTED" });
    });

    it("reads exactly /run/pleach-output/NAME outside the workspace, no other absolute path, and never writes there", async () => {
      const root = await useTempDir();
      const client = await createLocalSandbox({ root, session: true });
      try {
        const result = await client.exec("seq 1 100", { fullOutputOverBytes: 10 });
        expect(result.fullOutput?.path).toBe("/run/pleach-output/cmd-1.log");
        expect((await client.readFile("/run/pleach-output/cmd-1.log")).startsWith("1\n2\n")).toBe(
          true,
        );
        for (const other of [
          "/run/pleach-output/../../etc/passwd",
          "/run/pleach-output/../pleach-output/cmd-1.log",
          "/run/pleach-output/./cmd-1.log",
          "/run/pleach-output//cmd-1.log",
          "/run/pleach-output/cmd-1.log/",
          "/run/pleach-output/",
          "/run/pleach-output",
          "/run/pleach-output/..",
          "/run/pleach-output/.hidden",
          "/run/pleach-output/a/b",
          "/etc/passwd",
          "/run/x",
          "//run/pleach-output/cmd-1.log",
        ]) {
          await expect(client.readFile(other), other).rejects.toMatchObject({
            code: "PATH_ESCAPE",
          });
        }
        await expect(client.writeFile("/run/pleach-output/cmd-1.log", "x")).rejects.toMatchObject({
          code: "PATH_ESCAPE",
        });
        // The old spelling is an ordinary workspace path: no alias, no protection, no shadowing.
        await expect(client.readFile(".pleach-output/cmd-1.log")).rejects.toMatchObject({
          code: "NOT_FOUND",
        });
        await client.writeFile(".pleach-output/cmd-1.log", "the user's own\n");
        expect(await client.readFile(".pleach-output/cmd-1.log")).toBe("the user's own\n");
        expect((await client.exec("cat .pleach-output/cmd-1.log")).stdout).toBe("the user's own\n");
        expect((await client.readFile("/run/pleach-output/cmd-1.log")).startsWith("1\n2\n")).toBe(
          true,
        );
      } finally {
        await client.close();
      }
    });

    it("bounds the kept outputs of a session: the oldest go", async () => {
      const root = await useTempDir();
      const client = await createLocalSandbox({ root, session: { maxKeptOutputBytes: 300_000 } });
      try {
        const first = await client.exec("seq 1 30000", {
          fullOutputOverBytes: 1000,
          maxOutputBytes: 100,
        });
        const second = await client.exec("seq 1 30000", {
          fullOutputOverBytes: 1000,
          maxOutputBytes: 100,
        });
        const huge = await client.exec("seq 1 100000", {
          fullOutputOverBytes: 1000,
          maxOutputBytes: 100,
        });
        expect(first.fullOutput?.bytes).toBe(168_894);
        expect(second.fullOutput?.bytes).toBe(168_894);
        expect(huge.fullOutput).toMatchObject({ bytes: 300_000, droppedBytes: 288_895 });
        await expect(client.readFile(first.fullOutput?.path ?? "")).rejects.toMatchObject({
          code: "NOT_FOUND",
        });
        await expect(client.readFile(second.fullOutput?.path ?? "")).rejects.toMatchObject({
          code: "NOT_FOUND",
        });
        expect((await client.readFile(huge.fullOutput?.path ?? "")).length).toBe(300_000);
      } finally {
        await client.close();
      }
    });

    it("gives no full output when the kept folder is full, rather than a part of it", async () => {
      const root = await useTempDir();
      const client = await createLocalSandbox({ root, session: { maxKeptOutputBytes: 100_000 } });
      try {
        // Commands can write the folder too, which is bounded at twice the session's bound.
        await client.exec("head -c 150000 /dev/zero > /run/pleach-output/filler");
        const result = await client.exec("seq 1 20000", {
          fullOutputOverBytes: 1000,
          maxOutputBytes: 100,
        });
        expect(result.fullOutput).toBeUndefined();
        expect((await client.exec("ls -A /run/pleach-output")).stdout).toBe("filler\n");
      } finally {
        await client.close();
      }
    });

    it("shares loopback and /tmp between the commands of a session", async () => {
      const root = await useTempDir();
      const client = await createLocalSandbox({ root, session: true });
      try {
        await client.exec("echo kept > /tmp/note");
        expect((await client.exec("cat /tmp/note")).stdout).toBe("kept\n");
      } finally {
        await client.close();
      }
    });

    it("sees a change made through the client in a watcher job (node --watch)", async () => {
      const root = await useTempDir();
      const client = await createLocalSandbox({ root, session: true });
      const jobs = sandboxJobsOf(client);
      try {
        await client.writeFile("app.js", 'console.log("version one");\n');
        const job = await jobs?.start("node --watch app.js");
        const first = await jobs?.output(job?.jobId ?? "", {
          waitMs: 20_000,
          until: "version one",
        });
        expect(first?.matched).toBe(true);
        await client.writeFile("app.js", 'console.log("version two");\n');
        const second = await jobs?.output(job?.jobId ?? "", {
          since: first?.next ?? 0,
          waitMs: 20_000,
          until: "version two",
        });
        expect(second?.matched).toBe(true);
      } finally {
        await client.close();
      }
    });

    it("ends every job and process of the session at close, leaving nothing in the host's process table", async () => {
      const root = await useTempDir();
      const marker = `pleach-close-${process.pid}-${Date.now()}`;
      const client = await createLocalSandbox({ root, session: true });
      await client.jobs?.start(`exec -a ${marker} sleep 300`);
      await client.jobs?.start(
        `bash -c 'exec -a ${marker}-b sleep 300' & (setsid bash -c 'exec -a ${marker}-c sleep 300' &); wait`,
      );
      await client.exec(`echo x | tee /tmp/${marker}`);
      await expect.poll(() => hostProcesses(marker).length, { timeout: 10_000 }).toBe(3);
      await client.close();
      expect(hostProcesses(marker)).toEqual([]);
      expect(await keptFiles(root)).toEqual([]);
    });

    it("ends every process of the session when the host process is killed with SIGKILL", async () => {
      const root = await useTempDir();
      const marker = `pleach-sigkill-${process.pid}-${Date.now()}`;
      const script = [
        `import { createLocalSandbox } from ${JSON.stringify(new URL("../../dist/index.js", import.meta.url).href)};`,
        `const client = await createLocalSandbox({ root: ${JSON.stringify(root)}, session: true });`,
        `await client.jobs.start("exec -a ${marker} sleep 300");`,
        `await client.exec("seq 1 100000", { fullOutputOverBytes: 10 });`,
        'console.log("ready");',
        "setInterval(() => {}, 1000);",
      ].join("\n");
      const host = spawn(process.execPath, ["--input-type=module", "-e", script], {
        stdio: ["ignore", "pipe", "inherit"],
      });
      await new Promise<void>((resolve, reject) => {
        host.stdout.on("data", (chunk: Buffer) => {
          if (chunk.toString().includes("ready")) resolve();
        });
        host.once("exit", (code) => reject(new Error(`the host exited early (${code})`)));
      });
      expect(hostProcesses(marker).length).toBe(1);
      host.kill("SIGKILL");
      await expect.poll(() => hostProcesses(marker), { timeout: 10_000 }).toEqual([]);
      expect(await keptFiles(root)).toEqual([]);
    });

    it("leaves running jobs their sandbox when the protected paths change, and protects the new ones", async () => {
      const root = await useTempDir();
      const client = await createLocalSandbox({ root, session: true });
      try {
        const job = await client.jobs?.start("echo up; sleep 300");
        await client.jobs?.output(job?.jobId ?? "", { waitMs: 10_000, until: "up" });
        // A foreground command running across the change finishes where it started.
        const long = client.exec("sleep 1; echo finished");
        await mkdir(path.join(root, "sub", ".git"), { recursive: true });
        const beside = await client.exec("echo x > sub/.git/config");
        expect(beside.exitCode).not.toBe(0);
        expect(beside.sandboxNotes?.join("\n")).toContain("apart from the session's jobs");
        await expect(client.jobs?.start("true")).rejects.toMatchObject({ code: "CONFLICT" });
        expect((await long).stdout).toBe("finished\n");
        await client.jobs?.kill(job?.jobId ?? "");
        const after = await client.exec("echo x > sub/.git/config");
        expect(after.exitCode).not.toBe(0);
        expect(after.sandboxNotes?.join("\n") ?? "").not.toContain("apart from the session's jobs");
        const again = await client.jobs?.start("echo again");
        expect(again?.state).toBe("running");
      } finally {
        await client.close();
      }
    });

    it("hides a credential store made on the host while the session sat idle, at its next command", async () => {
      const root = await useTempDir();
      // Outside /tmp, which commands see as a private folder of their own.
      const home = await useTempDir({ parent: "/var/tmp" });
      const client = await createLocalSandbox({
        root,
        session: true,
        commandWrapper: createCommandWrapper({ credentialHomes: [home] }),
      });
      try {
        // Several calls first: the session sandbox is kept up, and later calls read the walk by stamps.
        for (let call = 0; call < 4; call += 1) {
          expect((await client.exec("true")).exitCode).toBe(0);
        }
        await mkdir(path.join(home, ".ssh"));
        await writeFile(path.join(home, ".ssh", "id_ed25519"), "secret key");
        const read = await client.exec(`cat ${path.join(home, ".ssh", "id_ed25519")}`);
        expect(read.stdout).not.toContain("secret key");
        expect(read.exitCode).not.toBe(0);
      } finally {
        await client.close();
      }
    });

    it("lets a command running when the rules change finish in its sandbox while the next gets a new one", async () => {
      const root = await useTempDir();
      const client = await createLocalSandbox({ root, session: true });
      try {
        await client.exec("true");
        const long = client.exec("sleep 1; echo finished");
        await new Promise((resolve) => setTimeout(resolve, 200));
        await mkdir(path.join(root, "sub", ".git"), { recursive: true });
        const next = await client.exec("echo x > sub/.git/config");
        expect(next.exitCode).not.toBe(0);
        expect(next.sandboxNotes?.join("\n") ?? "").not.toContain("apart from the session's jobs");
        expect(await long).toMatchObject({ exitCode: 0, stdout: "finished\n" });
      } finally {
        await client.close();
      }
    });

    it("runs many commands at once, loud and quiet, each to its own end with all its output", async () => {
      const root = await useTempDir();
      const client = await createLocalSandbox({ root, session: true });
      try {
        for (let round = 0; round < 3; round += 1) {
          const results = await Promise.all(
            Array.from({ length: 16 }, (_, index) =>
              client.exec(index % 2 === 0 ? "seq 1 100000" : "true", { maxOutputBytes: 1_000_000 }),
            ),
          );
          for (const [index, result] of results.entries()) {
            expect({ index, exitCode: result.exitCode, bytes: result.stdout.length }).toEqual({
              index,
              exitCode: 0,
              bytes: index % 2 === 0 ? 588_895 : 0,
            });
          }
        }
      } finally {
        await client.close();
      }
    });

    it("reports the exit of a command whose last output is still being relayed when it ends", async () => {
      // The end of a keeper interrupts the server's write of that output (EINTR): it must go on.
      for (let round = 0; round < 12; round += 1) {
        const root = await useTempDir();
        const client = await createLocalSandbox({ root, session: true });
        try {
          await client.exec("true");
          const result = await client.exec("seq 1 100000", { maxOutputBytes: 1_000_000 });
          expect({ round, exitCode: result.exitCode, bytes: result.stdout.length }).toEqual({
            round,
            exitCode: 0,
            bytes: 588_895,
          });
        } finally {
          await client.close();
        }
      }
    });
  },
);

describe.skipIf(!sessions)(
  `attacks on a session sandbox (${sessions ? "bubblewrap" : skipReason})`,
  () => {
    it("kills what a command leaves when it kills its own keeper, before the call returns", async () => {
      const root = await useTempDir();
      const marker = `pleach-keeper-${process.pid}-${Date.now()}`;
      const client = await createLocalSandbox({ root, session: true });
      try {
        // Its keeper killed, the command's shell comes to the server, which kills it: the shell's
        // children come to the server in turn, one holding the output, one not.
        const result = await client.exec(
          `exec -a ${marker}-quiet sleep 300 >/dev/null 2>&1 & exec -a ${marker}-loud sleep 300 & ` +
            "(setsid bash -c 'sleep 300 & sleep 300' &); sleep 0.2; kill -9 $PPID; sleep 300",
        );
        expect(result.signal).toBe("SIGKILL");
        expect(hostProcesses(marker)).toEqual([]);
        const job = await client.jobs?.start(
          `exec -a ${marker}-job sleep 300 >/dev/null 2>&1 & sleep 0.2; kill -9 $PPID; sleep 300`,
        );
        const ended = await client.jobs?.output(job?.jobId ?? "", {
          waitMs: 20_000,
          until: "never printed",
        });
        expect(ended?.job.state).toBe("exited");
        expect(hostProcesses(marker)).toEqual([]);
      } finally {
        await client.close();
      }
    });

    it("refuses a job whose command holds a NUL byte, which would end its request to the server", async () => {
      const root = await useTempDir();
      const client = await createLocalSandbox({ root, session: true });
      try {
        const job = await client.jobs?.start("sleep 300");
        await expect(
          client.jobs?.start(`true\0\0\x000\x000\0remove\0x\0input\0${job?.jobId}\x0099999999\0`),
        ).rejects.toMatchObject({ code: "INVALID_INPUT" });
        expect((await client.exec("echo still here")).stdout).toBe("still here\n");
        expect((await client.jobs?.list())?.map(({ state }) => state)).toEqual(["running"]);
      } finally {
        await client.close();
      }
    });

    it("holds the job limit against starts made at once", async () => {
      const root = await useTempDir();
      const client = await createLocalSandbox({ root, session: { maxJobs: 2 } });
      try {
        const starts = await Promise.allSettled(
          Array.from({ length: 6 }, () => client.jobs?.start("sleep 300")),
        );
        const refused = starts.filter((start) => start.status === "rejected");
        expect(starts.length - refused.length).toBe(2);
        for (const start of refused) expect(start.reason).toMatchObject({ code: "TOO_MANY_JOBS" });
        expect((await client.jobs?.list())?.length).toBe(2);
      } finally {
        await client.close();
      }
    });
  },
);
