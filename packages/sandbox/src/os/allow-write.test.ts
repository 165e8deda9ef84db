// `allowWrites` (`--allow-write DIR`): a folder besides the workspace that commands write, under
// the workspace's rules: what the host runs stays read-only there, what a command makes at a
// protected name or as a repository is moved aside or made inert when it ends (and while a
// session's jobs run), and everything else outside stays refused.
import { execFileSync } from "node:child_process";
import { existsSync, lstatSync, readFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { useTempDir } from "@pleach/core/testing";
import { describe, expect, it } from "vitest";
import { createLocalSandbox } from "../local-sandbox.js";
import { attackSuiteSkipReason, runningAs } from "./test-support/suite.js";

const skipReason = await attackSuiteSkipReason();

/** A folder of its own in the running user's home (not a dot-entry), removed after the test. */
const extraFolder = () => useTempDir({ parent: os.homedir(), prefix: "pleach-allow-write-" });

describe.skipIf(skipReason !== undefined)(
  `allowWrites ${runningAs()}${skipReason === undefined ? "" : ` (skipped: ${skipReason})`}`,
  () => {
    it("lets commands write the folder, and nothing else outside the workspace", async () => {
      const root = await useTempDir("pleach-allow-write-root-");
      const extra = await extraFolder();
      const beside = await extraFolder();
      const client = await createLocalSandbox({ root, allowWrites: [extra] });
      try {
        const made = await client.exec(`mkdir -p ${extra}/out && echo built > ${extra}/out/a.txt`);
        expect(made.exitCode).toBe(0);
        expect(readFileSync(path.join(extra, "out", "a.txt"), "utf8")).toBe("built\n");
        const refused = await client.exec(`echo no > ${beside}/b.txt`);
        expect(refused.exitCode).not.toBe(0);
        expect(existsSync(path.join(beside, "b.txt"))).toBe(false);
        expect(refused.sandboxNotes?.join("\n")).toContain("--allow-write");
      } finally {
        await client.close();
      }
    });

    it("shows the folder read-only in read-only mode", async () => {
      const root = await useTempDir("pleach-allow-write-root-");
      const extra = await extraFolder();
      await writeFile(path.join(extra, "in.txt"), "there\n");
      const client = await createLocalSandbox({ root, mode: "read-only", allowWrites: [extra] });
      try {
        expect((await client.exec(`cat ${extra}/in.txt`)).stdout).toBe("there\n");
        expect((await client.exec(`echo x > ${extra}/new.txt`)).exitCode).not.toBe(0);
        expect(existsSync(path.join(extra, "new.txt"))).toBe(false);
      } finally {
        await client.close();
      }
    });

    it("keeps the folder's host-run entries and git machinery read-only, as the workspace's", async () => {
      const root = await useTempDir("pleach-allow-write-root-");
      const extra = await extraFolder();
      await writeFile(path.join(extra, ".envrc"), "export A=1\n");
      execFileSync("git", ["init", "-q", path.join(extra, "repo")]);
      const client = await createLocalSandbox({ root, allowWrites: [extra] });
      try {
        const envrc = await client.exec(`echo 'touch /tmp/ran' >> ${extra}/.envrc`);
        expect(envrc.exitCode).not.toBe(0);
        expect(readFileSync(path.join(extra, ".envrc"), "utf8")).toBe("export A=1\n");
        const hook = await client.exec(
          `printf '#!/bin/sh\\ntrue\\n' > ${extra}/repo/.git/hooks/post-checkout`,
        );
        expect(hook.exitCode).not.toBe(0);
        expect(existsSync(path.join(extra, "repo", ".git", "hooks", "post-checkout"))).toBe(false);
        expect(hook.sandboxNotes?.join("\n")).toContain("was refused");
      } finally {
        await client.close();
      }
    });

    it("moves aside what a command makes at a missing protected name there, and makes its repositories inert", async () => {
      const root = await useTempDir("pleach-allow-write-root-");
      const extra = await extraFolder();
      const marker = path.join(await useTempDir({ parent: "/var/tmp" }), "ran");
      const client = await createLocalSandbox({ root, allowWrites: [extra] });
      try {
        const result = await client.exec(
          [
            `echo 'touch ${marker}' > ${extra}/.envrc`,
            `git init -q ${extra}/made`,
            `git -C ${extra}/made config core.fsmonitor 'touch ${marker}; false'`,
          ].join(" && "),
        );
        expect(result.exitCode).toBe(0);
        expect(lstatSync(path.join(extra, ".envrc"), { throwIfNoEntry: false })).toBeUndefined();
        expect(existsSync(path.join(extra, ".envrc.made-by-command"))).toBe(true);
        expect(result.sandboxNotes?.join("\n")).toContain(".envrc");
        execFileSync("git", ["status"], { cwd: path.join(extra, "made"), stdio: "ignore" });
        expect(existsSync(marker)).toBe(false);
      } finally {
        await client.close();
      }
    });

    it("keeps the folders above a repository there pinned, and moves aside a .git file leading out of the folder", async () => {
      const root = await useTempDir("pleach-allow-write-root-");
      const extra = await extraFolder();
      const marker = path.join(await useTempDir({ parent: "/var/tmp" }), "ran");
      execFileSync("git", ["init", "-q", path.join(extra, "deep", "repo")]);
      execFileSync("git", ["init", "-q", root]);
      const client = await createLocalSandbox({ root, allowWrites: [extra] });
      try {
        const hook = `#!/bin/sh\\ntouch ${marker}\\n`;
        await client.exec(
          [
            `mv ${extra}/deep ${extra}/moved`,
            `mkdir -p ${extra}/deep/repo/.git/hooks`,
            `printf '${hook}' > ${extra}/deep/repo/.git/hooks/post-checkout`,
            `mkdir ${extra}/other && printf 'gitdir: ${root}/.git\\n' > ${extra}/other/.git`,
          ].join("; "),
        );
        expect(existsSync(path.join(extra, "moved"))).toBe(false);
        expect(
          lstatSync(path.join(extra, "other", ".git"), { throwIfNoEntry: false }),
        ).toBeUndefined();
        execFileSync("git", ["checkout", "-q", "-b", "x"], {
          cwd: path.join(extra, "deep", "repo"),
          stdio: "ignore",
        });
        expect(existsSync(marker)).toBe(false);
      } finally {
        await client.close();
      }
    });

    it("keeps a hidden path inside the folder hidden, over the folder's bind", async () => {
      const root = await useTempDir("pleach-allow-write-root-");
      const extra = await extraFolder();
      await writeFile(path.join(extra, ".env"), "TOKEN=1\n");
      const client = await createLocalSandbox({
        root,
        hideReads: [path.join(extra, "**", ".env")],
        allowWrites: [extra],
      });
      try {
        const read = await client.exec(`cat ${extra}/.env`);
        expect(read.exitCode).not.toBe(0);
        expect(read.stdout).not.toContain("TOKEN");
        expect((await client.exec(`echo ok > ${extra}/out.txt`)).exitCode).toBe(0);
        // One a command makes there is hidden from the next command on.
        await client.exec(`mkdir ${extra}/app && echo TOKEN=2 > ${extra}/app/.env`);
        expect((await client.exec(`cat ${extra}/app/.env`)).stdout).not.toContain("TOKEN");
      } finally {
        await client.close();
      }
    });

    it("moves aside what a session's job makes there before the next call", async () => {
      const root = await useTempDir("pleach-allow-write-root-");
      const extra = await extraFolder();
      const client = await createLocalSandbox({ root, session: true, allowWrites: [extra] });
      try {
        await client.exec("true");
        const job = await client.jobs?.start(`sleep 0.2; echo planted > ${extra}/.envrc; sleep 30`);
        expect(job).toBeDefined();
        const deadline = Date.now() + 10_000;
        while (!existsSync(path.join(extra, ".envrc.made-by-command")) && Date.now() < deadline) {
          await client.exec("sleep 0.1");
        }
        expect(lstatSync(path.join(extra, ".envrc"), { throwIfNoEntry: false })).toBeUndefined();
        expect(readFileSync(path.join(extra, ".envrc.made-by-command"), "utf8")).toBe("planted\n");
      } finally {
        await client.close();
      }
    });

    it("refuses folders that overlap the workspace, the system, a home's dot-entries, a role or a hidden path", async () => {
      const root = await useTempDir("pleach-allow-write-root-");
      const inside = path.join(root, "sub");
      await mkdir(inside);
      const dotted = path.join(os.homedir(), ".config");
      await mkdir(dotted, { recursive: true });
      const onPath = await extraFolder();
      const holdingHidden = await extraFolder();
      await mkdir(path.join(holdingHidden, "secret"));
      const missing = path.join(await extraFolder(), "missing");
      const cases: [string, string, Record<string, string>?][] = [
        [inside, "inside the workspace"],
        [path.dirname(root), "holds the workspace"],
        ["/etc", "/etc"],
        ["/usr/local", "/usr"],
        [os.homedir(), "home folder"],
        [dotted, "dot-entry at the top of a home"],
        [onPath, "PATH", { PATH: `${onPath}:/usr/bin:/bin` }],
        [missing, "cannot be resolved"],
      ];
      for (const [folder, why, environment] of cases) {
        const { createCommandWrapper } = await import("./create-command-wrapper.js");
        const client = await createLocalSandbox({
          root,
          commandWrapper: createCommandWrapper({
            allowWrites: [folder],
            ...(environment === undefined
              ? {}
              : { hostEnvironment: { ...process.env, ...environment } }),
          }),
        });
        try {
          await expect(client.exec("true"), folder).rejects.toMatchObject({
            code: "INVALID_INPUT",
            message: expect.stringContaining(why),
          });
        } finally {
          await client.close();
        }
      }
      // Given to createLocalSandbox, a folder that cannot be written is refused at once: one
      // inside a hidden path, say.
      await mkdir(path.join(holdingHidden, "secret", "sub"));
      await expect(
        createLocalSandbox({
          root,
          hideReads: [path.join(holdingHidden, "secret")],
          allowWrites: [path.join(holdingHidden, "secret", "sub")],
        }),
      ).rejects.toMatchObject({
        code: "INVALID_INPUT",
        message: expect.stringContaining("hidden from commands"),
      });
      await expect(createLocalSandbox({ root, allowWrites: ["/etc"] })).rejects.toMatchObject({
        code: "INVALID_INPUT",
        message: expect.stringContaining("it is /etc"),
      });
    });
  },
);
