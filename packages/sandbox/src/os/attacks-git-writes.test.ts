// Git writes (`allowGitWrites`): commit, checkout -b, stash and rebase work, and nothing a command
// does to a repository's git directory makes the user's git run a program, in the top repository,
// a nested one and a submodule; without the option the same commands are refused, with a note
// naming it.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { useTempDir } from "@pleach/core/testing";
import { describe, expect, it } from "vitest";
import { createLocalSandbox } from "../local-sandbox.js";
import { GIT_RUN_ENTRIES } from "../policy/protected-entries.js";
import { GIT_IDENTITY_ENVIRONMENT } from "./test-support/git-identity.js";
import { attackSuiteSkipReason, runningAs } from "./test-support/suite.js";

const skipReason = await attackSuiteSkipReason();

const IDENTITY = GIT_IDENTITY_ENVIRONMENT;

/** The user's git on the host, as the user runs it. */
function hostGit(cwd: string, ...args: string[]): string {
  return execFileSync(
    "git",
    [
      "-c",
      "user.name=u",
      "-c",
      "user.email=u@example.invalid",
      "-c",
      "protocol.file.allow=always",
      ...args,
    ],
    { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] },
  );
}

/** A repository with a nested repository (`vendor/lib`) and a submodule (`sub`), each committed. */
async function workspace(): Promise<string> {
  const root = await useTempDir("pleach-git-writes-");
  const source = await useTempDir("pleach-git-writes-source-");
  hostGit(source, "init", "-q");
  await writeFile(path.join(source, "s.txt"), "s\n");
  hostGit(source, "add", ".");
  hostGit(source, "commit", "-qm", "source");
  hostGit(root, "init", "-q", "-b", "main");
  await writeFile(path.join(root, "a.txt"), "1\n");
  hostGit(root, "add", ".");
  hostGit(root, "commit", "-qm", "one");
  hostGit(root, "submodule", "add", "-q", source, "sub");
  hostGit(root, "commit", "-qm", "submodule");
  await mkdir(path.join(root, "vendor", "lib"), { recursive: true });
  hostGit(path.join(root, "vendor", "lib"), "init", "-q");
  await writeFile(path.join(root, "vendor", "lib", "l.txt"), "l\n");
  hostGit(path.join(root, "vendor", "lib"), "add", ".");
  hostGit(path.join(root, "vendor", "lib"), "commit", "-qm", "lib");
  return root;
}

/**
 * Shell text that tries every file of the git directory `gitdir` (of the work tree `tree`) through
 * which git could run a program, each payload touching `marker`.
 */
function plantEverything(tree: string, gitdir: string, marker: string): string[] {
  const run = `touch ${marker}; false`;
  const hook = `#!/bin/sh\\ntouch ${marker}\\n`;
  const config = `[core]\\n\\tfsmonitor = ${run}\\n\\thooksPath = /tmp\\n[alias]\\n\\tstatus = !touch ${marker}\\n`;
  const steps = [
    `git -C ${tree} config core.fsmonitor '${run}'`,
    `printf '${config}' >> ${gitdir}/config`,
    `printf '${config}' > ${gitdir}/config.new && mv -f ${gitdir}/config.new ${gitdir}/config`,
    `printf '${config}' > ${gitdir}/config.worktree`,
    ...[
      "pre-commit",
      "post-commit",
      "post-checkout",
      "reference-transaction",
      "pre-rebase",
    ].flatMap((name) => [
      `mkdir -p ${gitdir}/hooks; printf '${hook}' > ${gitdir}/hooks/${name}; chmod +x ${gitdir}/hooks/${name}`,
    ]),
    `mv ${gitdir}/hooks ${gitdir}/hooks-old && mkdir ${gitdir}/hooks && printf '${hook}' > ${gitdir}/hooks/post-checkout && chmod +x ${gitdir}/hooks/post-checkout`,
    // Another git directory, of the command's, for git to take the config of.
    `git init -q --bare ${tree}/evil-common-$$ && printf '${config}' >> ${tree}/evil-common-$$/config && echo ${tree}/evil-common-$$ > ${gitdir}/commondir`,
    `echo ${tree}/evil-common-$$ > ${gitdir}/gitdir`,
    `mkdir -p ${gitdir}/info && echo '* filter=evil diff=evil' > ${gitdir}/info/attributes`,
    `mkdir -p ${gitdir}/objects/info && echo ${tree}/evil-common-$$/objects > ${gitdir}/objects/info/alternates`,
    `echo 'file://${tree}/evil-common-$$' > ${gitdir}/objects/info/http-alternates`,
    `mkdir -p ${gitdir}/worktrees/w && echo ${tree}/evil-common-$$ > ${gitdir}/worktrees/w/commondir`,
    // A submodule's git directory of the command's, with its own config.
    `mkdir -p ${gitdir}/modules/sub && cp -r ${tree}/evil-common-$$/. ${gitdir}/modules/sub/`,
    `mkdir -p ${gitdir}/remotes && echo 'URL: ext::sh -c touch% ${marker}' > ${gitdir}/remotes/origin`,
    `mkdir -p ${gitdir}/branches && echo 'ext::sh -c touch% ${marker}' > ${gitdir}/branches/origin`,
    `mv ${gitdir} ${gitdir}-old && git init -q ${tree} && printf '${config}' >> ${gitdir}/config`,
  ];
  return steps.map((step) => `( ${step} ) >/dev/null 2>&1; true`);
}

/** What the user does in a work tree: status, log, a commit, a new branch, back. */
function useAsTheUser(tree: string): void {
  for (const args of [
    ["status", "--porcelain"],
    ["log", "--oneline", "-1"],
    ["diff", "HEAD"],
    ["commit", "-q", "--allow-empty", "-m", "host"],
    ["checkout", "-q", "-b", `host-${Date.now()}`],
    ["checkout", "-q", "-"],
  ]) {
    try {
      hostGit(tree, ...args);
    } catch {
      // A repository a command broke may refuse; running nothing is what counts.
    }
  }
}

describe.skipIf(skipReason !== undefined)(
  `git writes through bubblewrap ${runningAs()}${skipReason === undefined ? "" : ` (skipped: ${skipReason})`}`,
  () => {
    it("commit, checkout -b, stash and rebase work with allowGitWrites", async () => {
      const root = await workspace();
      const client = await createLocalSandbox({
        root,
        mode: "workspace-write",
        allowGitWrites: true,
      });
      try {
        const run = async (command: string) => {
          const result = await client.exec(command, { env: IDENTITY });
          expect(result.exitCode, `${command}: ${result.stderr}`).toBe(0);
          return result;
        };
        await run("echo 2 >> a.txt && git add a.txt && git commit -qm two");
        await run(
          "git checkout -q -b feature && echo f > f.txt && git add f.txt && git commit -qm f",
        );
        await run("echo 3 >> a.txt && git stash -q && git stash list | grep -q WIP");
        await run("git checkout -q main && echo m > m.txt && git add m.txt && git commit -qm m");
        await run("git checkout -q feature && git rebase -q main");
        await run("git stash pop -q && git merge -q --no-edit main");
        expect(hostGit(root, "log", "--format=%s", "feature")).toContain("f\nm\ntwo\n");
      } finally {
        await client.close();
      }
    });

    it("refuses them without, with a note naming --allow-git-writes", async () => {
      const root = await workspace();
      const client = await createLocalSandbox({ root, mode: "workspace-write" });
      try {
        for (const command of [
          "echo 2 >> a.txt && git add a.txt && git commit -qm two",
          "git checkout -q -b feature",
          "echo 3 >> a.txt && git stash -q",
          "git rebase -q HEAD~1",
        ]) {
          const result = await client.exec(command, { env: IDENTITY });
          expect(result.exitCode, command).not.toBe(0);
          expect(result.sandboxNotes?.join("\n"), command).toMatch(/--allow-git-writes/);
        }
        expect(hostGit(root, "log", "--format=%s")).toBe("submodule\none\n");
      } finally {
        await client.close();
      }
    });

    for (const allowGitWrites of [true, false]) {
      it(`no file under .git a command writes makes the user's git run a program (allowGitWrites: ${allowGitWrites})`, async () => {
        const root = await workspace();
        const marker = path.join(await useTempDir({ parent: "/var/tmp" }), "ran");
        const repositories = [
          { tree: root, gitdir: path.join(root, ".git") },
          { tree: path.join(root, "vendor/lib"), gitdir: path.join(root, "vendor/lib/.git") },
          { tree: path.join(root, "sub"), gitdir: path.join(root, ".git/modules/sub") },
        ];
        // Every entry the option leaves protected is tried (GIT_RUN_ENTRIES), and more.
        const tried = plantEverything("T", "G", marker).join("\n");
        for (const entry of GIT_RUN_ENTRIES) expect(tried).toContain(`G/${entry}`);
        const client = await createLocalSandbox({ root, mode: "workspace-write", allowGitWrites });
        try {
          // One command each: one that makes what git reads at once is stopped there.
          for (const { tree, gitdir } of repositories) {
            for (const step of plantEverything(tree, gitdir, marker)) {
              await client
                .exec(step, { env: IDENTITY })
                .catch((error: unknown) => expect(error).toMatchObject({ code: "PROTECTED_PATH" }));
            }
          }
          for (const { tree } of repositories) useAsTheUser(tree);
          expect(existsSync(marker)).toBe(false);
          expect(readFileSync(path.join(root, ".git/config"), "utf8")).not.toContain("fsmonitor");
        } finally {
          await client.close();
        }
        for (const { tree } of repositories) useAsTheUser(tree);
        expect(existsSync(marker)).toBe(false);
      });
    }

    for (const allowGitWrites of [true, false]) {
      it(`a command cannot make a work tree a git directory of its own by breaking its .git (allowGitWrites: ${allowGitWrites})`, async () => {
        // With git writes a command can break a .git (its HEAD); git then takes the work tree
        // for a git directory once it holds a HEAD, objects/ and refs/, and runs its config: the
        // command's. The user's git fetch (an editor's) there would run its uploadpack.
        const root = await workspace();
        const marker = path.join(await useTempDir({ parent: "/var/tmp" }), "ran");
        const config = `[remote "origin"]\\n\\turl = /tmp\\n\\tuploadpack = "touch ${marker}; false"\\n`;
        const client = await createLocalSandbox({ root, mode: "workspace-write", allowGitWrites });
        try {
          for (const tree of [".", "vendor/lib"]) {
            const after = path.join(root, tree, "went-on");
            let ended = false;
            const running = client
              .exec(
                [
                  `cd ${tree}`,
                  "echo broken > .git/HEAD",
                  "git init -q --bare /tmp/template",
                  "cp -r /tmp/template/objects /tmp/template/refs .",
                  `printf '${config}' > config`,
                  "cp /tmp/template/HEAD HEAD",
                  "sleep 2",
                  "touch went-on",
                ].join("; "),
                { env: IDENTITY, timeoutMs: 20_000 },
              )
              .then(
                (result) => ({ result }),
                (error: unknown) => ({ error }),
              )
              .finally(() => {
                ended = true;
              });
            if (!allowGitWrites) {
              // The .git stays whole (its HEAD is protected), so git never looks at the work
              // tree itself: the user's git there, over and over while the command runs, runs
              // nothing of the command's. With git writes the HEAD beside it is watched instead,
              // and a host git in the milliseconds before it is moved aside would use it
              // (docs/security-limitations.md), so there the loop would only time that window.
              const started = Date.now();
              while (!ended && Date.now() - started < 6_000) {
                try {
                  hostGit(path.join(root, tree), "fetch", "-q", "origin");
                } catch {
                  // Refused or failing: what counts is that it ran nothing of the command's.
                }
                await new Promise((resolve) => setTimeout(resolve, 50));
              }
            }
            const outcome = await running;
            expect(
              existsSync(marker),
              `the user's git fetch in ${tree} ran the command's program`,
            ).toBe(false);
            if (allowGitWrites) {
              // Stopped as soon as it made the HEAD, which is moved aside.
              expect(outcome).toMatchObject({
                error: { code: "PROTECTED_PATH", message: expect.stringContaining("HEAD") },
              });
              expect(existsSync(after), "the command went on after making the HEAD").toBe(false);
            } else {
              expect(outcome).toMatchObject({ result: { exitCode: 0 } });
            }
            expect(existsSync(path.join(root, tree, "HEAD"))).toBe(false);
            for (const args of [["fetch", "-q", "origin"], ["log", "-1"], ["status"]]) {
              try {
                hostGit(path.join(root, tree), ...args);
              } catch {
                // As above.
              }
            }
            expect(existsSync(marker), `the user's git in ${tree} ran the command's program`).toBe(
              false,
            );
          }
        } finally {
          await client.close();
        }
      });
    }

    it("comments out the exec lines a command leaves in a stopped rebase's todo list", async () => {
      const root = await workspace();
      const marker = path.join(await useTempDir({ parent: "/var/tmp" }), "ran");
      const client = await createLocalSandbox({
        root,
        mode: "workspace-write",
        allowGitWrites: true,
      });
      try {
        const result = await client.exec(
          [
            "echo 2 >> a.txt && git commit -qam two",
            `GIT_SEQUENCE_EDITOR="sed -i '1s/^pick/edit/'" git rebase -q -i --exec 'touch ${marker}' HEAD~1`,
            "test -d .git/rebase-merge && echo STOPPED",
          ].join(" && "),
          { env: IDENTITY },
        );
        expect(result.stdout).toContain("STOPPED");
        expect(result.sandboxNotes?.join("\n")).toMatch(/exec line.*commented/);
      } finally {
        await client.close();
      }
      expect(readFileSync(path.join(root, ".git/rebase-merge/git-rebase-todo"), "utf8")).toMatch(
        /^# pleach: .*exec/m,
      );
      try {
        hostGit(root, "rebase", "--continue");
      } catch {
        // Done or stopped: what counts is that the exec line did not run.
      }
      expect(existsSync(marker)).toBe(false);
    });
  },
);
