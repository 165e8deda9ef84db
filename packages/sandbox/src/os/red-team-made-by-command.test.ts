// Red-team findings against the move-aside design (what a command makes at a missing protected
// path is moved aside when it ends) and `allowGitWrites`. Each case asserts the SAFE outcome and is
// was marked `it.fails` while the hole was open; each is fixed now. A command that makes what git
// on the host reads at once is stopped (its exec rejects with PROTECTED_PATH).
import { execFileSync } from "node:child_process";
import { existsSync, lstatSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { useTempDir } from "@pleach/core/testing";
import { describe, expect, it } from "vitest";
import { createLocalSandbox } from "../local-sandbox.js";
import { GIT_IDENTITY_ENVIRONMENT } from "./test-support/git-identity.js";
import { attackSuiteSkipReason, runningAs } from "./test-support/suite.js";

const skipReason = await attackSuiteSkipReason();

const IDENTITY = GIT_IDENTITY_ENVIRONMENT;

/** The user's git on the host; failures are ignored (running nothing is what counts). */
function hostGit(cwd: string, ...args: string[]): string {
  try {
    return execFileSync(
      "git",
      ["-c", "user.name=u", "-c", "user.email=u@example.invalid", ...args],
      {
        cwd,
        encoding: "utf8",
        stdio: ["ignore", "pipe", "pipe"],
        timeout: 20_000,
      },
    );
  } catch {
    return "";
  }
}

/** A repository with three commits on `main`, each changing `a`. */
async function repository(): Promise<string> {
  const root = await useTempDir("pleach-red-team-");
  hostGit(root, "init", "-q", "-b", "main");
  for (const text of ["a", "b", "c"]) {
    await writeFile(path.join(root, "a"), `${text}\n`);
    hostGit(root, "add", ".");
    hostGit(root, "commit", "-qm", text);
  }
  return root;
}

/** Shell text making a bare repository `evil` whose config runs `touch marker` (core.fsmonitor). */
function evilRepository(marker: string): string {
  return `git init -q --bare evil && printf '[core]\\n\\tfsmonitor = touch ${marker}; false\\n' >> evil/config`;
}

describe.skipIf(skipReason !== undefined)(
  `red team: made-by-command move-aside ${runningAs()}${skipReason === undefined ? "" : ` (skipped: ${skipReason})`}`,
  () => {
    // FINDING 1: freeName tries only NAME.made-by-command, .2 ... .100; a command that takes all
    // of them makes the move-aside fail, and what it planted stays in place (only a note says so).
    it("moves a protected name aside even when every .made-by-command name is taken", async () => {
      const root = await repository();
      const marker = path.join(await useTempDir({ parent: "/var/tmp" }), "ran");
      const client = await createLocalSandbox({ root, allowGitWrites: true });
      try {
        await client
          .exec(
            [
              "touch .envrc.made-by-command .git/commondir.made-by-command",
              "for i in $(seq 2 100); do touch .envrc.made-by-command.$i .git/commondir.made-by-command.$i; done",
              `echo 'touch ${marker}' > .envrc`,
              evilRepository(marker),
              'echo "$PWD/evil" > .git/commondir',
            ].join("\n"),
            { env: IDENTITY },
          )
          .catch((error: unknown) => expect(error).toMatchObject({ code: "PROTECTED_PATH" }));
        hostGit(root, "status");
        expect(existsSync(path.join(root, ".envrc"))).toBe(false);
        expect(existsSync(path.join(root, ".git/commondir"))).toBe(false);
        expect(existsSync(marker)).toBe(false);
      } finally {
        await client.close();
      }
    });

    // FINDING 1b: the same in the default mode (no git writes, a workspace that is no
    // repository): `git init` with core.fsmonitor and config.made-by-command{,.2..100} taken keeps
    // `makeNewRepositoriesInert` from moving the config aside; host git runs the fsmonitor.
    it("makes a repository inert even when every config.made-by-command name is taken", async () => {
      const root = await useTempDir("pleach-red-team-");
      const marker = path.join(await useTempDir({ parent: "/var/tmp" }), "ran");
      const client = await createLocalSandbox({ root });
      try {
        await client.exec(
          `git init -q && git config core.fsmonitor 'touch ${marker}; false' && touch .git/config.made-by-command && for i in $(seq 2 100); do touch .git/config.made-by-command.$i; done`,
        );
        hostGit(root, "status");
        expect(existsSync(marker)).toBe(false);
      } finally {
        await client.close();
      }
    });

    // FINDING 2: with git writes, `.git/rebase-merge/strategy` is the command's to write; git runs
    // `git merge-<strategy>`, and a strategy with a slash (`x/../evil.sh`) is executed as a path
    // relative to the work tree: `git rebase --continue` on the host runs the command's script.
    it("a strategy in rebase-merge/strategy that is not git's own is moved aside before the host's rebase --continue", async () => {
      const root = await repository();
      const marker = path.join(await useTempDir({ parent: "/var/tmp" }), "ran");
      const client = await createLocalSandbox({ root, allowGitWrites: true });
      try {
        await client.exec(
          [
            `GIT_SEQUENCE_EDITOR="sed -i '1i break'" git rebase -q -i HEAD~2`,
            "mkdir git-merge-x",
            `printf '#!/bin/sh\\ntouch ${marker}\\n' > evil.sh && chmod +x evil.sh`,
            "echo z > z.txt && git add z.txt && git commit -qm z",
            "echo 'x/../evil.sh' > .git/rebase-merge/strategy",
          ].join("\n"),
          { env: IDENTITY },
        );
        hostGit(root, "rebase", "--continue");
        expect(existsSync(marker)).toBe(false);
      } finally {
        await client.close();
      }
    });

    // FINDING 2b: the same through `.git/sequencer/opts` (`options.strategy`): the host's
    // `git cherry-pick --continue` of a stopped multi-commit cherry-pick runs the script.
    it("a strategy in sequencer/opts that is not git's own is moved aside before the host's cherry-pick --continue", async () => {
      const root = await useTempDir("pleach-red-team-");
      const put = (name: string, text: string) => writeFile(path.join(root, name), text);
      hostGit(root, "init", "-q", "-b", "main");
      await put("a", "a\n");
      await put("b", "b\n");
      hostGit(root, "add", ".");
      hostGit(root, "commit", "-qm", "base");
      await put("a", "main-a\n");
      hostGit(root, "commit", "-qam", "ma");
      await put("b", "main-b\n");
      hostGit(root, "commit", "-qam", "mb");
      hostGit(root, "checkout", "-q", "-b", "side", "HEAD~2");
      await put("a", "side-a\n");
      hostGit(root, "commit", "-qam", "sa");
      // Stops on a conflict with a sequencer (two commits to pick).
      hostGit(root, "cherry-pick", "main~1", "main");
      const marker = path.join(await useTempDir({ parent: "/var/tmp" }), "ran");
      const client = await createLocalSandbox({ root, allowGitWrites: true });
      try {
        await client.exec(
          [
            "mkdir git-merge-x",
            `printf '#!/bin/sh\\ntouch ${marker}\\n' > evil.sh && chmod +x evil.sh`,
            "printf '[options]\\n\\tstrategy = x/../evil.sh\\n' >> .git/sequencer/opts",
          ].join("\n"),
        );
        await put("a", "resolved\n");
        hostGit(root, "add", "a");
        hostGit(root, "cherry-pick", "--continue");
        expect(existsSync(marker)).toBe(false);
      } finally {
        await client.close();
      }
    });

    // FINDING 4: a rebase todo list over 4 MiB, or one that is a link (into the work tree), is
    // only noted, not disarmed: `git rebase --continue` on the host runs its exec line.
    for (const how of ["large", "link"] as const) {
      it(`a ${how} rebase todo list is moved aside before the host's rebase --continue`, async () => {
        const root = await repository();
        const marker = path.join(await useTempDir({ parent: "/var/tmp" }), "ran");
        const client = await createLocalSandbox({ root, allowGitWrites: true });
        const todo = ".git/rebase-merge/git-rebase-todo";
        const plant =
          how === "large"
            ? `{ echo 'exec touch ${marker}'; cat ${todo}; head -c 5000000 /dev/zero | tr '\\0' '#' | fold -w 100; echo; } > /tmp/t && cp /tmp/t ${todo}`
            : `{ echo 'exec touch ${marker}'; cat ${todo}; } > todo.txt && rm ${todo} && ln -s ../../todo.txt ${todo}`;
        try {
          await client.exec(
            `GIT_SEQUENCE_EDITOR="sed -i '1i break'" git rebase -q -i HEAD~2; ${plant}`,
            { env: IDENTITY },
          );
          hostGit(root, "rebase", "--continue");
          expect(existsSync(marker)).toBe(false);
        } finally {
          await client.close();
        }
      });
    }

    // FINDING 3: nothing stands at a missing protected path while a command runs, and nothing
    // watches it (one-off commands have no watcher; a session's ignores it without jobs): the
    // host's git (an editor's or a prompt's polling) uses what the command made until it ends.
    for (const session of [false, true]) {
      it(`a command that makes .git/commondir is stopped at once, before host git uses it (session: ${session})`, async () => {
        const root = await repository();
        const marker = path.join(await useTempDir({ parent: "/var/tmp" }), "ran");
        const client = await createLocalSandbox({ root, allowGitWrites: true, session });
        try {
          const running = client
            .exec(`${evilRepository(marker)} && echo "$PWD/evil" > .git/commondir; sleep 6`, {
              timeoutMs: 30_000,
            })
            .then(
              () => undefined,
              (error: unknown) => error,
            );
          await new Promise((resolve) => setTimeout(resolve, 3000));
          hostGit(root, "status");
          expect(await running).toMatchObject({
            code: "PROTECTED_PATH",
            message: expect.stringMatching(/the command was stopped: it made \.git\/commondir/),
          });
          expect(existsSync(marker)).toBe(false);
        } finally {
          await client.close();
        }
      });
    }

    // Held: a command's background processes (setsid, nohup, &) die with it, in a session too.
    for (const session of [false, true]) {
      it(`what a command leaves running cannot plant after it ends (session: ${session})`, async () => {
        const root = await useTempDir("pleach-red-team-");
        const client = await createLocalSandbox({ root, session });
        try {
          await client.exec(
            [
              "setsid sh -c 'sleep 2; echo x > .envrc' >/dev/null 2>&1 </dev/null &",
              "nohup sh -c 'sleep 2; mkdir .vscode' >/dev/null 2>&1 &",
              "(sleep 2; echo x > .mcp.json) >/dev/null 2>&1 </dev/null &",
            ].join("\n"),
          );
          await new Promise((resolve) => setTimeout(resolve, 4000));
          for (const name of [".envrc", ".vscode", ".mcp.json"]) {
            expect(existsSync(path.join(root, name)), name).toBe(false);
          }
        } finally {
          await client.close();
        }
      });
    }

    // Held: FIFOs, dangling links, link loops and a folder of mode 000 are moved aside.
    it("moves aside FIFOs, dangling and looping links and unreadable folders", async () => {
      const root = await useTempDir("pleach-red-team-");
      const client = await createLocalSandbox({ root });
      try {
        await client.exec(
          "mkfifo .zshrc; mkdir .claude; chmod 000 .claude; ln -s nowhere .idea; ln -s .cursor .cursor; ln -s .codex/x .kiro",
        );
        for (const name of [".zshrc", ".claude", ".idea", ".cursor", ".kiro"]) {
          expect(
            lstatSync(path.join(root, `${name}.made-by-command`), { throwIfNoEntry: false }),
            name,
          ).toBeDefined();
          expect(lstatSync(path.join(root, name), { throwIfNoEntry: false }), name).toBeUndefined();
        }
      } finally {
        await client.close();
      }
    });
  },
);
