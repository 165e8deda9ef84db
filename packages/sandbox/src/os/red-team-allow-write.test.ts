// Red team of `allowWrites` (`--allow-write DIR`): a folder besides the workspace that commands
// write under the workspace's rules. Each case is an attack by a sandboxed command (or a hostile
// setup it can count on) and asserts that the attack FAILS: a marker file outside the workspace and
// DIR, made only when the host ran the command's code, must stay missing, and what lies outside the
// folders commands may write must stay as it was. Findings are marked `// FINDING n:`.
import { execFileSync } from "node:child_process";
import { existsSync, lstatSync, readFileSync, statSync } from "node:fs";
import { chmod, mkdir, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { useTempDir } from "@pleach/core/testing";
import { describe, expect, it } from "vitest";
import { createLocalSandbox } from "../local-sandbox.js";
import { writableFolders } from "../policy/writable-folders.js";
import { createCommandWrapper } from "./create-command-wrapper.js";
import { GIT_IDENTITY_ENVIRONMENT } from "./test-support/git-identity.js";
import { attackSuiteSkipReason, runningAs } from "./test-support/suite.js";

const skipReason = await attackSuiteSkipReason();

/** A folder of its own in the running user's home (not a dot-entry), removed after the test. */
const extraFolder = () => useTempDir({ parent: os.homedir(), prefix: "pleach-redaw-" });

/** A path in a folder of its own in /var/tmp: made only when the host ran the command's code. */
const markerPath = async () => path.join(await useTempDir({ parent: "/var/tmp" }), "ran");

/** The user's git on the host; failures are ignored (running nothing is what counts). */
function hostGit(cwd: string, ...args: string[]): string {
  try {
    return execFileSync(
      "git",
      ["-c", "user.name=u", "-c", "user.email=u@example.invalid", ...args],
      { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 20_000 },
    );
  } catch {
    return "";
  }
}

/** A repository at `folder` with one commit. */
async function repositoryAt(folder: string): Promise<string> {
  await mkdir(folder, { recursive: true });
  hostGit(folder, "init", "-q", "-b", "main");
  await writeFile(path.join(folder, "a"), "a\n");
  hostGit(folder, "add", ".");
  hostGit(folder, "commit", "-qm", "a");
  return folder;
}

/** Run `command`, ignoring a refusal (the attack failing that way is fine). */
async function attempt(
  client: Awaited<ReturnType<typeof createLocalSandbox>>,
  command: string,
  env?: Record<string, string>,
): Promise<{ exitCode: number; notes: string } | { refused: unknown }> {
  try {
    const result = await client.exec(command, env === undefined ? {} : { env });
    return { exitCode: result.exitCode ?? -1, notes: result.sandboxNotes?.join("\n") ?? "" };
  } catch (error) {
    return { refused: error };
  }
}

/** A hook script that touches `marker`, as shell text for printf. */
const hookText = (marker: string) => `#!/bin/sh\\ntouch ${marker}\\n`;

describe.skipIf(skipReason !== undefined)(
  `red team: allowWrites ${runningAs()}${skipReason === undefined ? "" : ` (skipped: ${skipReason})`}`,
  () => {
    // ---------------------------------------------------------------- the folder's validation

    // FINDING 1: the system folders refused are HOST_FOLDERS (read-view.ts): /usr /bin /sbin
    // /lib* /etc /opt /var /nix and /proc /sys /dev /tmp /run. /boot (the kernel, the boot
    // loader's config: code run as root at the next boot), /efi and /snap were accepted.
    it("refuses /boot and the other system folders the read view does not list", async () => {
      const root = await useTempDir("pleach-redaw-root-");
      for (const folder of ["/boot", "/efi", "/snap"]) {
        if (!existsSync(folder)) continue;
        expect(
          () => writableFolders({ given: [folder], root, hiddenPaths: [], hostEnvironment: {} }),
          folder,
        ).toThrow(expect.objectContaining({ code: "INVALID_INPUT" }));
      }
    });

    // FINDING 2: the folder is checked by its real path, at every command; a path given through a
    // link that lies in the workspace (`--allow-write ./build`, build -> /srv/out) is a link the
    // command may re-point: the next command's folder is whatever it chose (any folder outside
    // the refused ones: another checkout, a user's project, ...).
    it("refuses a folder given through a link in the workspace, which a command could re-point", async () => {
      const root = await useTempDir("pleach-redaw-root-");
      const out = await extraFolder();
      const victim = await extraFolder();
      await symlink(out, path.join(root, "build"));
      await expect(
        createLocalSandbox({ root, allowWrites: [path.join(root, "build")] }),
      ).rejects.toMatchObject({ code: "INVALID_INPUT" });
      // With a wrapper of its own the client is made, and the check runs at every command.
      const client = await createLocalSandbox({
        root,
        commandWrapper: createCommandWrapper({ allowWrites: [path.join(root, "build")] }),
      });
      try {
        await expect(client.exec("true")).rejects.toMatchObject({
          code: "INVALID_INPUT",
          message: expect.stringContaining("re-point a link"),
        });
        await attempt(client, `rm build && ln -s ${victim} build`);
        await attempt(client, `echo owned > ${victim}/owned`);
        expect(existsSync(path.join(victim, "owned"))).toBe(false);
      } finally {
        await client.close();
      }
    });

    // FINDING 2c: the same where the link in the workspace is not on the path as given but on
    // the way its links lead (/srv/l -> WORKSPACE/x, x -> /srv/out).
    it("refuses a folder whose links lead through a link in the workspace", async () => {
      const root = await useTempDir("pleach-redaw-root-");
      const out = await extraFolder();
      const victim = await extraFolder();
      const given = path.join(await extraFolder(), "l");
      await symlink(out, path.join(root, "x"));
      await symlink(path.join(root, "x"), given);
      await expect(createLocalSandbox({ root, allowWrites: [given] })).rejects.toMatchObject({
        code: "INVALID_INPUT",
      });
      const client = await createLocalSandbox({
        root,
        commandWrapper: createCommandWrapper({ allowWrites: [given] }),
      });
      try {
        await expect(client.exec("true")).rejects.toMatchObject({
          code: "INVALID_INPUT",
          message: expect.stringContaining("re-point a link"),
        });
        await attempt(client, `rm x && ln -s ${victim} x`);
        await attempt(client, `echo owned > ${victim}/owned`);
        expect(existsSync(path.join(victim, "owned"))).toBe(false);
      } finally {
        await client.close();
      }
    });

    // FINDING 2b: the same through a link in another writable folder.
    it("refuses a folder given through a link in another writable folder", async () => {
      const root = await useTempDir("pleach-redaw-root-");
      const first = await extraFolder();
      const second = await extraFolder();
      const victim = await extraFolder();
      await symlink(second, path.join(first, "next"));
      await expect(
        createLocalSandbox({ root, allowWrites: [first, path.join(first, "next")] }),
      ).rejects.toMatchObject({ code: "INVALID_INPUT" });
      const client = await createLocalSandbox({
        root,
        commandWrapper: createCommandWrapper({ allowWrites: [first, path.join(first, "next")] }),
      });
      try {
        await attempt(client, `rm ${first}/next && ln -s ${victim} ${first}/next`);
        await attempt(client, `echo owned > ${victim}/owned`);
        expect(existsSync(path.join(victim, "owned"))).toBe(false);
      } finally {
        await client.close();
      }
    });

    // FINDING 3: the check refuses a folder inside a home's dot-entry by its path only; a
    // dot-entry that is a link into the folder (a dotfiles checkout linked from the home, as
    // stow, chezmoi or yadm make it: ~/.bashrc -> ~/dotfiles/bashrc) is the host's shell
    // configuration, written by the command.
    it("refuses a folder a home's dot-entry links into (~/.bashrc -> DIR/bashrc)", async () => {
      const root = await useTempDir("pleach-redaw-root-");
      const home = await extraFolder();
      const dotfiles = await extraFolder();
      const marker = await markerPath();
      await writeFile(path.join(dotfiles, "bashrc"), "# mine\n");
      await symlink(path.join(dotfiles, "bashrc"), path.join(home, ".bashrc"));
      const hostEnvironment = { ...process.env, HOME: home };
      const client = await createLocalSandbox({
        root,
        commandWrapper: createCommandWrapper({ allowWrites: [dotfiles], hostEnvironment }),
      });
      try {
        await expect(client.exec("true")).rejects.toMatchObject({
          code: "INVALID_INPUT",
          message: expect.stringContaining("is a link into it"),
        });
        await attempt(client, `echo 'touch ${marker}' >> ${dotfiles}/bashrc`);
        try {
          execFileSync("bash", ["-ic", "true"], {
            env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home },
            stdio: "ignore",
            timeout: 20_000,
          });
        } catch {
          // Whether bash liked the rest of it does not matter.
        }
        expect(existsSync(marker)).toBe(false);
        expect(readFileSync(path.join(dotfiles, "bashrc"), "utf8")).toBe("# mine\n");
      } finally {
        await client.close();
      }
    });

    // FINDING 3b: the same one level down, where stow folds a folder (~/.config/nvim -> DIR/nvim).
    it("refuses a folder an entry of a home's dot-folder links into (~/.config/nvim -> DIR/nvim)", async () => {
      const root = await useTempDir("pleach-redaw-root-");
      const home = await extraFolder();
      const dotfiles = await extraFolder();
      await mkdir(path.join(dotfiles, "nvim"));
      await mkdir(path.join(home, ".config"));
      await symlink(path.join(dotfiles, "nvim"), path.join(home, ".config", "nvim"));
      const client = await createLocalSandbox({
        root,
        commandWrapper: createCommandWrapper({
          allowWrites: [path.join(dotfiles, "nvim")],
          hostEnvironment: { ...process.env, HOME: home },
        }),
      });
      try {
        await expect(client.exec(`echo x > ${dotfiles}/nvim/init.lua`)).rejects.toMatchObject({
          code: "INVALID_INPUT",
          message: expect.stringContaining("is a link into it"),
        });
        expect(existsSync(path.join(dotfiles, "nvim", "init.lua"))).toBe(false);
      } finally {
        await client.close();
      }
    });

    it("refuses a folder a credential store links into (~/.ssh -> DIR/ssh)", async () => {
      const root = await useTempDir("pleach-redaw-root-");
      const home = await extraFolder();
      const dotfiles = await extraFolder();
      await mkdir(path.join(dotfiles, "ssh"));
      await writeFile(path.join(dotfiles, "ssh", "id_ed25519"), "secret\n");
      await symlink(path.join(dotfiles, "ssh"), path.join(home, ".ssh"));
      const client = await createLocalSandbox({
        root,
        commandWrapper: createCommandWrapper({
          allowWrites: [dotfiles],
          credentialHomes: [home],
          hostEnvironment: { ...process.env, HOME: home },
        }),
      });
      try {
        await expect(client.exec(`cat ${dotfiles}/ssh/id_ed25519`)).rejects.toMatchObject({
          code: "INVALID_INPUT",
        });
      } finally {
        await client.close();
      }
    });

    it("gives INVALID_INPUT, never a crash, for bad folders: twice, a link to one given, a file, NUL, not a string", async () => {
      const root = await useTempDir("pleach-redaw-root-");
      const extra = await extraFolder();
      const other = await extraFolder();
      await symlink(extra, path.join(other, "same"));
      await writeFile(path.join(other, "file"), "x\n");
      const cases: unknown[][] = [
        [extra, extra],
        [extra, path.join(other, "same")],
        [path.join(other, "file")],
        [`${extra}\0/x`],
        [42],
        ["/"],
        [`${extra}/../..`],
      ];
      for (const given of cases) {
        const client = await createLocalSandbox({
          root,
          commandWrapper: createCommandWrapper({ allowWrites: given as string[] }),
        });
        try {
          await expect(client.exec("true"), JSON.stringify(given)).rejects.toMatchObject({
            code: "INVALID_INPUT",
          });
        } finally {
          await client.close();
        }
      }
    });

    // ------------------------------------------------- git machinery across the two folders

    // FINDING 4: each folder's protection keeps only the git machinery inside that folder
    // (`gitMachinery` drops what lies outside its root): a workspace repository whose
    // core.hooksPath names a folder in DIR (shared hooks) leaves those hooks writable.
    it.each([false, true])(
      "keeps the hooks a workspace repository's core.hooksPath names in DIR read-only (git writes: %s)",
      async (allowGitWrites) => {
        const root = await repositoryAt(await useTempDir("pleach-redaw-root-"));
        const extra = await extraFolder();
        const marker = await markerPath();
        await mkdir(path.join(extra, "hooks"));
        hostGit(root, "config", "core.hooksPath", path.join(extra, "hooks"));
        const client = await createLocalSandbox({ root, allowWrites: [extra], allowGitWrites });
        try {
          const result = await attempt(
            client,
            `printf '${hookText(marker)}' > ${extra}/hooks/pre-commit && chmod +x ${extra}/hooks/pre-commit`,
          );
          expect(result).not.toMatchObject({ exitCode: 0 });
          hostGit(root, "commit", "-q", "--allow-empty", "-m", "b");
          expect(existsSync(marker)).toBe(false);
        } finally {
          await client.close();
        }
      },
    );

    it("keeps the folders above those hooks in DIR pinned: a rename and a new folder in its place", async () => {
      const root = await repositoryAt(await useTempDir("pleach-redaw-root-"));
      const extra = await extraFolder();
      const marker = await markerPath();
      await mkdir(path.join(extra, "a", "b", "hooks"), { recursive: true });
      hostGit(root, "config", "core.hooksPath", path.join(extra, "a", "b", "hooks"));
      const client = await createLocalSandbox({ root, allowWrites: [extra] });
      try {
        await attempt(
          client,
          [
            `mv ${extra}/a ${extra}/a2 || mv ${extra}/a/b ${extra}/a/b2 || mv ${extra}/a/b/hooks ${extra}/a/b/h2`,
            `mkdir -p ${extra}/a/b/hooks`,
            `printf '${hookText(marker)}' > ${extra}/a/b/hooks/pre-commit; chmod +x ${extra}/a/b/hooks/pre-commit`,
          ].join("; "),
        );
        hostGit(root, "commit", "-q", "--allow-empty", "-m", "b");
        expect(existsSync(marker)).toBe(false);
        for (const moved of ["a2", "a/b2", "a/b/h2"]) {
          expect(existsSync(path.join(extra, moved)), moved).toBe(false);
        }
      } finally {
        await client.close();
      }
    });

    // FINDING 4d: the hooks folder missing in DIR: the command makes it (moved aside when it ends).
    it("moves aside the hooks folder a workspace repository's core.hooksPath names in DIR, made by a command", async () => {
      const root = await repositoryAt(await useTempDir("pleach-redaw-root-"));
      const extra = await extraFolder();
      const marker = await markerPath();
      hostGit(root, "config", "core.hooksPath", path.join(extra, "hooks"));
      const client = await createLocalSandbox({ root, allowWrites: [extra] });
      try {
        await attempt(
          client,
          `mkdir ${extra}/hooks && printf '${hookText(marker)}' > ${extra}/hooks/pre-commit && chmod +x ${extra}/hooks/pre-commit`,
        );
        hostGit(root, "commit", "-q", "--allow-empty", "-m", "b");
        expect(existsSync(marker)).toBe(false);
        expect(existsSync(path.join(extra, "hooks.made-by-command"))).toBe(true);
      } finally {
        await client.close();
      }
    });

    // FINDING 4e: the same made by a session's job, looked at before the next call.
    it("moves aside the hooks folder in DIR a session's job makes for a workspace repository", async () => {
      const root = await repositoryAt(await useTempDir("pleach-redaw-root-"));
      const extra = await extraFolder();
      const marker = await markerPath();
      hostGit(root, "config", "core.hooksPath", path.join(extra, "hooks"));
      const client = await createLocalSandbox({ root, session: true, allowWrites: [extra] });
      try {
        await client.exec("true");
        expect(
          await client.jobs?.start(
            `sleep 0.2; mkdir ${extra}/hooks && printf '${hookText(marker)}' > ${extra}/hooks/pre-commit && chmod +x ${extra}/hooks/pre-commit; sleep 30`,
          ),
        ).toBeDefined();
        const deadline = Date.now() + 10_000;
        while (!existsSync(path.join(extra, "hooks.made-by-command")) && Date.now() < deadline) {
          await attempt(client, "sleep 0.1");
        }
        hostGit(root, "commit", "-q", "--allow-empty", "-m", "b");
        expect(existsSync(marker)).toBe(false);
        expect(existsSync(path.join(extra, "hooks.made-by-command"))).toBe(true);
      } finally {
        await client.close();
      }
    });

    // FINDING 4b: the other way round: a repository in DIR whose core.hooksPath lies in the
    // workspace.
    it("keeps the hooks a DIR repository's core.hooksPath names in the workspace read-only", async () => {
      const root = await useTempDir("pleach-redaw-root-");
      const extra = await extraFolder();
      const repo = await repositoryAt(path.join(extra, "repo"));
      const marker = await markerPath();
      await mkdir(path.join(root, "hooks"));
      hostGit(repo, "config", "core.hooksPath", path.join(root, "hooks"));
      const client = await createLocalSandbox({ root, allowWrites: [extra] });
      try {
        await attempt(
          client,
          `printf '${hookText(marker)}' > hooks/pre-commit && chmod +x hooks/pre-commit`,
        );
        hostGit(repo, "commit", "-q", "--allow-empty", "-m", "b");
        expect(existsSync(marker)).toBe(false);
      } finally {
        await client.close();
      }
    });

    // FINDING 4b': the file tools, which write the workspace from the host, refused the same.
    it("the file tools refuse the hooks a DIR repository's core.hooksPath names in the workspace", async () => {
      const root = await useTempDir("pleach-redaw-root-");
      const extra = await extraFolder();
      const repo = await repositoryAt(path.join(extra, "repo"));
      await mkdir(path.join(root, "hooks"));
      hostGit(repo, "config", "core.hooksPath", path.join(root, "hooks"));
      const client = await createLocalSandbox({ root, allowWrites: [extra] });
      try {
        await expect(client.writeFile("hooks/pre-commit", "#!/bin/sh\n")).rejects.toMatchObject({
          code: "PROTECTED_PATH",
        });
        expect(existsSync(path.join(root, "hooks", "pre-commit"))).toBe(false);
      } finally {
        await client.close();
      }
    });

    it("moves aside what a session's job makes at a protected name in DIR while no call follows", async () => {
      const root = await useTempDir("pleach-redaw-root-");
      const extra = await extraFolder();
      const client = await createLocalSandbox({ root, session: true, allowWrites: [extra] });
      try {
        await client.exec("true");
        expect(
          await client.jobs?.start(`sleep 0.3; echo planted > ${extra}/.envrc; sleep 30`),
        ).toBeDefined();
        const deadline = Date.now() + 10_000;
        while (!existsSync(path.join(extra, ".envrc.made-by-command")) && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        expect(lstatSync(path.join(extra, ".envrc"), { throwIfNoEntry: false })).toBeUndefined();
        expect(existsSync(path.join(extra, ".envrc.made-by-command"))).toBe(true);
      } finally {
        await client.close();
      }
    });

    // FINDING 4c: a file a workspace repository's config includes (include.path) that lies in DIR.
    it("keeps a config file a workspace repository includes from DIR read-only", async () => {
      const root = await repositoryAt(await useTempDir("pleach-redaw-root-"));
      const extra = await extraFolder();
      const marker = await markerPath();
      await writeFile(path.join(extra, "shared.gitconfig"), "[color]\n\tui = auto\n");
      hostGit(root, "config", "include.path", path.join(extra, "shared.gitconfig"));
      const client = await createLocalSandbox({ root, allowWrites: [extra] });
      try {
        await attempt(
          client,
          `printf '[core]\\n\\tfsmonitor = touch ${marker}; false\\n' >> ${extra}/shared.gitconfig`,
        );
        hostGit(root, "status");
        expect(existsSync(marker)).toBe(false);
      } finally {
        await client.close();
      }
    });

    it("keeps the files and hooks the user's git config names in DIR read-only", async () => {
      const root = await repositoryAt(await useTempDir("pleach-redaw-root-"));
      const home = await extraFolder();
      const dotfiles = await extraFolder();
      const marker = await markerPath();
      await writeFile(path.join(dotfiles, "extra.gitconfig"), "[color]\n\tui = auto\n");
      await mkdir(path.join(dotfiles, "hooks"));
      await writeFile(
        path.join(home, ".gitconfig"),
        `[include]\n\tpath = ${dotfiles}/extra.gitconfig\n[core]\n\thooksPath = ${dotfiles}/hooks\n`,
      );
      const hostEnvironment = { ...process.env, HOME: home };
      const client = await createLocalSandbox({
        root,
        commandWrapper: createCommandWrapper({ allowWrites: [dotfiles], hostEnvironment }),
      });
      try {
        await attempt(
          client,
          `printf '[core]\\n\\tfsmonitor = touch ${marker}; false\\n' >> ${dotfiles}/extra.gitconfig; printf '${hookText(marker)}' > ${dotfiles}/hooks/pre-commit; chmod +x ${dotfiles}/hooks/pre-commit`,
        );
        for (const args of [["status"], ["commit", "-q", "--allow-empty", "-m", "b"]]) {
          try {
            execFileSync("git", args, {
              cwd: root,
              env: {
                PATH: process.env.PATH ?? "/usr/bin:/bin",
                HOME: home,
                ...GIT_IDENTITY_ENVIRONMENT,
              },
              stdio: "ignore",
              timeout: 20_000,
            });
          } catch {
            // Running nothing of the command's is what counts.
          }
        }
        expect(existsSync(marker)).toBe(false);
      } finally {
        await client.close();
      }
    });

    it("keeps a workspace repository's separate git directory in DIR read-only", async () => {
      const root = await useTempDir("pleach-redaw-root-");
      const extra = await extraFolder();
      const marker = await markerPath();
      hostGit(root, "init", "-q", "--separate-git-dir", path.join(extra, "ws.git"));
      const client = await createLocalSandbox({ root, allowWrites: [extra] });
      try {
        await attempt(
          client,
          `printf '[core]\\n\\tfsmonitor = touch ${marker}; false\\n' >> ${extra}/ws.git/config; printf '${hookText(marker)}' > ${extra}/ws.git/hooks/pre-commit; chmod +x ${extra}/ws.git/hooks/pre-commit`,
        );
        hostGit(root, "status");
        hostGit(root, "commit", "-q", "--allow-empty", "-m", "b");
        expect(existsSync(marker)).toBe(false);
      } finally {
        await client.close();
      }
    });

    it("keeps a worktree's machinery in DIR of a workspace repository, and the reverse, read-only", async () => {
      const root = await repositoryAt(await useTempDir("pleach-redaw-root-"));
      const extra = await extraFolder();
      const repo = await repositoryAt(path.join(extra, "repo"));
      const marker = await markerPath();
      hostGit(root, "worktree", "add", "-q", path.join(extra, "wt"));
      hostGit(repo, "worktree", "add", "-q", path.join(root, "wt"));
      const client = await createLocalSandbox({ root, allowWrites: [extra] });
      try {
        await attempt(
          client,
          [
            `printf 'gitdir: ${extra}/evil\\n' > ${extra}/wt/.git`,
            `printf 'gitdir: ${root}/evil\\n' > ${root}/wt/.git`,
            `echo ${extra}/evil > ${extra}/repo/.git/worktrees/wt/commondir`,
            `echo ${root}/evil > ${root}/.git/worktrees/wt/commondir`,
            `git init -q --bare ${extra}/evil && git -C ${extra}/evil config core.fsmonitor 'touch ${marker}; false'`,
            `git init -q --bare ${root}/evil && git -C ${root}/evil config core.fsmonitor 'touch ${marker}; false'`,
          ].join("; "),
        );
        hostGit(path.join(extra, "wt"), "status");
        hostGit(path.join(root, "wt"), "status");
        expect(existsSync(marker)).toBe(false);
      } finally {
        await client.close();
      }
    });

    it("a repository a command makes in DIR whose commondir or gitdir is the workspace's .git is moved aside, the workspace's untouched", async () => {
      const root = await repositoryAt(await useTempDir("pleach-redaw-root-"));
      const extra = await extraFolder();
      const marker = await markerPath();
      const config = readFileSync(path.join(root, ".git", "config"), "utf8");
      const client = await createLocalSandbox({ root, allowWrites: [extra] });
      try {
        await attempt(
          client,
          [
            `mkdir -p ${extra}/a/.git && echo ref: refs/heads/main > ${extra}/a/.git/HEAD && echo ${root}/.git > ${extra}/a/.git/commondir`,
            `mkdir ${extra}/b && printf 'gitdir: ${root}/.git\\n' > ${extra}/b/.git`,
            `mkdir sub && printf 'gitdir: ${extra}/c.git\\n' > sub/.git && git init -q --bare ${extra}/c.git && git -C ${extra}/c.git config core.fsmonitor 'touch ${marker}; false'`,
          ].join("; "),
        );
        for (const where of [
          path.join(extra, "a"),
          path.join(extra, "b"),
          path.join(root, "sub"),
        ]) {
          hostGit(where, "status");
        }
        expect(existsSync(marker)).toBe(false);
        expect(readFileSync(path.join(root, ".git", "config"), "utf8")).toBe(config);
      } finally {
        await client.close();
      }
    });

    // --------------------------------------------------- host-side code acting outside DIR

    it("moves aside a link or FIFO a command makes at a protected name in DIR, never what it leads to", async () => {
      const root = await repositoryAt(await useTempDir("pleach-redaw-root-"));
      const rootConfig = readFileSync(path.join(root, ".git", "config"), "utf8");
      const extra = await extraFolder();
      const outside = await extraFolder();
      await writeFile(path.join(outside, "target"), "mine\n");
      const victimRepo = await repositoryAt(path.join(outside, "repo"));
      const victimConfig = readFileSync(path.join(victimRepo, ".git", "config"), "utf8");
      const client = await createLocalSandbox({ root, allowWrites: [extra] });
      try {
        const result = await attempt(
          client,
          [
            `ln -s ${outside}/target ${extra}/.envrc`,
            `mkfifo ${extra}/.vscode`,
            `mkdir ${extra}/x && ln -s ${victimRepo}/.git ${extra}/x/.git`,
            `mkdir ${extra}/y && printf 'gitdir: ${victimRepo}/.git\\n' > ${extra}/y/.git`,
            `ln -s ${outside} ${extra}/.idea`,
            `mkfifo ${extra}/.git`,
            `mkdir ${extra}/z && ln -s ${root}/.git ${extra}/z/.git`,
          ].join("; "),
        );
        expect(result).toHaveProperty("exitCode");
        for (const name of [".envrc", ".vscode", "x/.git", "y/.git", ".idea", ".git", "z/.git"]) {
          expect(
            lstatSync(path.join(extra, name), { throwIfNoEntry: false }),
            name,
          ).toBeUndefined();
        }
        expect(readFileSync(path.join(outside, "target"), "utf8")).toBe("mine\n");
        expect(existsSync(path.join(outside, "target.made-by-command"))).toBe(false);
        expect(readFileSync(path.join(victimRepo, ".git", "config"), "utf8")).toBe(victimConfig);
        expect(existsSync(path.join(victimRepo, ".git", "hooks"))).toBe(true);
        expect(readFileSync(path.join(root, ".git", "config"), "utf8")).toBe(rootConfig);
        expect(existsSync(path.join(root, ".git", "hooks"))).toBe(true);
      } finally {
        await client.close();
      }
    });

    // FINDING 7 (fixed, unprivileged only, the workspace had it too): a command that makes a
    // repository and then takes the read bits off a folder above it (chmod 000) blinded the walk
    // that follows it (`folder-walk.ts` lists it as unreadable; `makeNewRepositoriesInert` never
    // saw the repository): the folder was protected whole from the next command on, but the
    // repository was live; once the user restored the folder's mode, host git there ran its
    // core.fsmonitor. Root lists the folder anyway. Fixed: a folder a command closed gets its
    // owner's bits back when the command ends, and the look goes on inside it
    // (`reopenClosedFolders`).
    const unprivileged = process.getuid?.() !== 0;
    it.each([
      ["DIR", false],
      ["workspace", false],
      ["workspace", true],
    ])(
      "makes inert a repository a command made in the %s and then locked (mode 000; session: %s)",
      async (where, session) => {
        const root = await useTempDir("pleach-redaw-root-");
        const extra = await extraFolder();
        const top = where === "DIR" ? extra : root;
        const marker = await markerPath();
        const client = await createLocalSandbox({ root, allowWrites: [extra], session });
        try {
          const result = await attempt(
            client,
            `mkdir -p ${top}/locked/inner && git init -q ${top}/locked/inner/r && git -C ${top}/locked/inner/r config core.fsmonitor 'touch ${marker}; false' && chmod 000 ${top}/locked/inner ${top}/locked`,
          );
          if (unprivileged) {
            expect(result).toMatchObject({
              exitCode: 0,
              notes: expect.stringContaining(
                "locked (mode 000), locked/inner (mode 000) could not be read, by a mode a sandboxed command set",
              ),
            });
            expect(statSync(path.join(top, "locked", "inner")).mode & 0o700).toBe(0o700);
          }
          await chmod(path.join(top, "locked"), 0o755).catch(() => {});
          await chmod(path.join(top, "locked", "inner"), 0o755).catch(() => {});
          hostGit(path.join(top, "locked", "inner", "r"), "status");
          expect(existsSync(marker)).toBe(false);
        } finally {
          await chmod(path.join(top, "locked"), 0o755).catch(() => {});
          await chmod(path.join(top, "locked", "inner"), 0o755).catch(() => {});
          await client.close();
        }
      },
    );

    // The same with the repository's own parts closed: its git directory, its config, its hooks,
    // or the folder a `.git` file names.
    it.each([
      ["its git directory", "git init -q r && CFG && chmod 000 r/.git"],
      ["its config", "git init -q r && CFG && chmod 000 r/.git/config"],
      ["its hooks", "git init -q r && CFG && HOOK && chmod 000 r/.git/hooks"],
      [
        "the folder its .git file names",
        "git init -q r && CFG && mv r/.git gd && echo 'gitdir: ../gd' > r/.git && chmod 000 gd",
      ],
    ])("makes inert a repository a command made with %s closed (mode 000)", async (_, script) => {
      const root = await useTempDir("pleach-redaw-root-");
      const marker = await markerPath();
      const client = await createLocalSandbox({ root });
      const HOOKS_ASIDE = "r/.git/hooks.made-by-command";
      const reopenAll = async () => {
        for (const each of ["gd", "r/.git", "r/.git/config", "r/.git/hooks", HOOKS_ASIDE]) {
          await chmod(path.join(root, each), each.endsWith("config") ? 0o644 : 0o755).catch(
            () => {},
          );
        }
      };
      try {
        await attempt(
          client,
          `cd ${root} && ${script
            .replace("CFG", `git -C r config core.fsmonitor 'touch ${marker}; false'`)
            .replace(
              "HOOK",
              `printf '${hookText(marker)}' > r/.git/hooks/pre-commit && chmod +x r/.git/hooks/pre-commit`,
            )}`,
        );
        await reopenAll();
        hostGit(path.join(root, "r"), "status");
        hostGit(path.join(root, "r"), "commit", "-q", "--allow-empty", "-m", "x");
        expect(existsSync(marker)).toBe(false);
      } finally {
        await reopenAll();
        await client.close();
      }
    });

    // A second red team's ways around the first fix, each fixed: a gitdir inside another `.git`
    // closed (a worktree's, whose commondir leads to a repository the command armed), a closed
    // folder past the walk's folder limit, the workspace root or the writable folder itself
    // closed, and a session job that closes the folder again as fast as pleach opens it (warned of
    // while it runs, made inert by the look once it is killed). The user then opens everything
    // (`chmod -R u+rwx`) and runs git.
    it.each([
      {
        name: "a worktree's gitdir inside .git",
        repo: "wt",
        script: (arm: (repo: string) => string) =>
          `git init -q m && git -C m -c user.name=a -c user.email=a@b commit -q --allow-empty -m i && git -C m worktree add -q ../wt && ${arm("m/.git/evil")} && echo ../../evil > m/.git/worktrees/wt/commondir && chmod 000 m/.git/worktrees/wt`,
      },
      {
        name: "a folder past the folder limit",
        repo: "zz/c/r",
        maxDirectories: 40,
        script: (arm: (repo: string) => string) =>
          `mkdir $(seq 1 100) && mkdir -p zz/c && ${arm("zz/c/r")} && chmod 000 zz/c`,
      },
      {
        name: "the workspace root",
        repo: "r",
        script: (arm: (repo: string) => string) => `${arm("r")} && chmod 100 .`,
      },
      {
        name: "the writable folder",
        repo: "r",
        inExtra: true,
        script: (arm: (repo: string) => string) => `${arm("r")} && chmod 300 .`,
      },
      {
        name: "a folder a job keeps closing",
        repo: "X/r",
        job: true,
        script: (arm: (repo: string) => string) =>
          `mkdir X && ${arm("X/r")} && while :; do chmod 000 X; done`,
      },
    ])(
      "makes inert a repository a command made behind $name, closed",
      async ({ repo, script, maxDirectories, inExtra, job }) => {
        const root = await useTempDir("pleach-redaw-root-");
        const extra = await extraFolder();
        const top = inExtra === true ? extra : root;
        const marker = await markerPath();
        const arm = (at: string) =>
          at.endsWith("evil")
            ? `git init -q --bare ${at} && git -C ${at} config core.fsmonitor 'touch ${marker}; false'`
            : `git init -q ${at} && git -C ${at} config core.fsmonitor 'touch ${marker}; false'`;
        const client = await createLocalSandbox({
          root,
          session: job === true,
          ...(maxDirectories === undefined
            ? { allowWrites: [extra] }
            : { commandWrapper: createCommandWrapper({ maxDirectories, allowWrites: [extra] }) }),
        });
        const openAll = () => execFileSync("chmod", ["-R", "u+rwx", root, extra]);
        try {
          if (job === true) {
            await attempt(client, "true");
            await client.jobs?.start(`cd ${top} && ${script(arm)}`);
            await new Promise((resolve) => setTimeout(resolve, 1_000));
            // Host-side calls while it runs (each opens X again, or warns that it could not).
            for (let call = 0; call < 3; call += 1) await attempt(client, "true");
          } else {
            expect(await attempt(client, `cd ${top} && ${script(arm)}`)).toMatchObject({
              exitCode: 0,
            });
          }
        } finally {
          await client.close();
          openAll();
        }
        hostGit(path.join(top, repo), "status");
        hostGit(path.join(top, repo), "commit", "-q", "--allow-empty", "-m", "x");
        expect(existsSync(marker)).toBe(false);
      },
    );

    // A folder closed before the command started is protected whole, and stays closed; in a
    // session too, where the user closed it after the last command. But once the session had a
    // job, what changed since its last look is taken for the jobs' (docs/security-limitations.md):
    // the folder is opened again, as one a job closed.
    it.skipIf(!unprivileged).each([
      ["one-off", false],
      ["a session", false],
      ["a session that had a job", true],
    ])(
      "a folder the user closed before a command, in %s (unprivileged: root lists it anyway)",
      async (where, hadJob) => {
        const root = await useTempDir("pleach-redaw-root-");
        await mkdir(path.join(root, "private"));
        const client = await createLocalSandbox({ root, session: where !== "one-off" });
        try {
          if (hadJob) {
            const job = await client.jobs?.start("echo done");
            await client.jobs?.output(job?.jobId ?? "", { waitMs: 5_000, until: "done" });
            expect(await client.jobs?.list()).toHaveLength(1);
          }
          if (where !== "one-off")
            expect(await attempt(client, "true")).toMatchObject({ exitCode: 0 });
          await chmod(path.join(root, "private"), 0o000);
          const result = await attempt(client, `chmod 755 ${root}/private; true`);
          expect(result).toMatchObject({ exitCode: 0 });
          expect(statSync(path.join(root, "private")).mode & 0o777).toBe(hadJob ? 0o755 : 0o000);
          const said = "private (mode 000) could not be read";
          expect((result as { notes: string }).notes.includes(said)).toBe(hadJob);
        } finally {
          await chmod(path.join(root, "private"), 0o755).catch(() => {});
          await client.close();
        }
      },
    );

    it("keeps the folders above a missing protected path in DIR pinned (git writes)", async () => {
      const root = await useTempDir("pleach-redaw-root-");
      const extra = await extraFolder();
      const repo = await repositoryAt(path.join(extra, "d", "repo"));
      const marker = await markerPath();
      const client = await createLocalSandbox({ root, allowWrites: [extra], allowGitWrites: true });
      try {
        await attempt(
          client,
          [
            `mv ${extra}/d ${extra}/d2`,
            `mv ${repo}/.git ${repo}/.git2`,
            `mkdir -p ${extra}/d/repo/.git`,
            `printf '[core]\\n\\tfsmonitor = touch ${marker}; false\\n' > ${repo}/.git/config.worktree`,
            `git -C ${repo} config extensions.worktreeConfig true`,
            `printf '${hookText(marker)}' > ${repo}/.git/hooks/pre-commit; chmod +x ${repo}/.git/hooks/pre-commit`,
            `echo ${extra}/evil > ${repo}/.git/commondir`,
          ].join("; "),
          GIT_IDENTITY_ENVIRONMENT,
        );
        hostGit(repo, "status");
        hostGit(repo, "commit", "-q", "--allow-empty", "-m", "b");
        expect(existsSync(marker)).toBe(false);
        expect(existsSync(path.join(extra, "d2"))).toBe(false);
      } finally {
        await client.close();
      }
    });

    // FINDING 5 (fixed, not allowWrites' own: the workspace had it too): once a one-off command
    // ends, the repositories it made are found by a walk (`madeIn` in workspace-looks.ts, `look:
    // false`: `walker.scan()`, not `completeScan`), which stops at maxDirectories without saying
    // so; a command that makes more folders than that (before the repository in the walk's
    // order) leaves its repository live: host git runs its core.fsmonitor. A session's look
    // (`completeScan`) throws TOO_LARGE instead, and only a note warns. The next command is refused
    // (TOO_LARGE), but the repository was never made inert. Fixed: past the limit the rest is
    // searched too (`searchTree`).
    it.each(["DIR", "workspace"])(
      "makes inert a repository a command made in the %s past a flood of folders over the folder limit",
      async (where) => {
        const root = await useTempDir("pleach-redaw-root-");
        const extra = await extraFolder();
        const top = where === "DIR" ? extra : root;
        const marker = await markerPath();
        const client = await createLocalSandbox({
          root,
          commandWrapper: createCommandWrapper({ allowWrites: [extra], maxDirectories: 40 }),
        });
        try {
          await attempt(
            client,
            `mkdir -p ${top}/zz && git init -q ${top}/zz/r && git -C ${top}/zz/r config core.fsmonitor 'touch ${marker}; false' && for i in $(seq 1 80); do mkdir ${top}/a$i; done`,
          );
          hostGit(path.join(top, "zz", "r"), "status");
          expect(existsSync(marker)).toBe(false);
        } finally {
          await client.close();
        }
      },
    );

    // FINDING 8: a session's look after a command takes the folders one by one (`madeSince` in
    // workspace-looks.ts), and its walk of a folder past the folder limit throws TOO_LARGE
    // (`completeScan`) before that folder's repositories are made inert, and before the next
    // folder is looked at at all: a command that floods the workspace keeps the repository it made
    // in DIR live (host git runs its core.fsmonitor). Fixed: each folder's repositories are made
    // inert from its own walk before its look, and every folder is looked at whatever failed in
    // another. (The look of one folder walks the others too, for their repositories' machinery in
    // it: the reverse case keeps that from bringing the hole back.)
    it.each(["DIR", "workspace"])(
      "makes inert a repository a session's command made while it flooded the other folder than the %s",
      async (where) => {
        const root = await useTempDir("pleach-redaw-root-");
        const extra = await extraFolder();
        const [top, flooded] = where === "DIR" ? [extra, root] : [root, extra];
        const marker = await markerPath();
        const client = await createLocalSandbox({
          root,
          session: true,
          commandWrapper: createCommandWrapper({ allowWrites: [extra], maxDirectories: 40 }),
        });
        try {
          await client.exec("true");
          await attempt(
            client,
            `git init -q ${top}/r && git -C ${top}/r config core.fsmonitor 'touch ${marker}; false' && for i in $(seq 1 80); do mkdir ${flooded}/a$i; done`,
          );
          hostGit(path.join(top, "r"), "status");
          expect(existsSync(marker)).toBe(false);
        } finally {
          await client.close();
        }
      },
    );

    it("disarms the exec lines of a rebase a command with git writes stopped in a repository in DIR", async () => {
      const root = await useTempDir("pleach-redaw-root-");
      const extra = await extraFolder();
      const repo = await repositoryAt(path.join(extra, "repo"));
      const marker = await markerPath();
      const client = await createLocalSandbox({ root, allowWrites: [extra], allowGitWrites: true });
      try {
        const result = await client.exec(
          [
            `cd ${repo}`,
            "echo 2 >> a && git commit -qam two",
            `GIT_SEQUENCE_EDITOR="sed -i '1s/^pick/edit/'" git rebase -q -i --exec 'touch ${marker}' HEAD~1`,
            "test -d .git/rebase-merge && echo STOPPED",
          ].join(" && "),
          { env: GIT_IDENTITY_ENVIRONMENT },
        );
        expect(result.stdout).toContain("STOPPED");
      } finally {
        await client.close();
      }
      hostGit(repo, "rebase", "--continue");
      expect(existsSync(marker)).toBe(false);
    });

    // ------------------------------------------------------------ sessions, warm sandboxes

    it.each([
      ["a session's", true],
      ["warm", false],
    ] as const)(
      "protects a repository the host made in DIR between %s calls from the next call on",
      async (_how, session) => {
        const root = await useTempDir("pleach-redaw-root-");
        const extra = await extraFolder();
        const marker = await markerPath();
        const client = await createLocalSandbox({ root, session, allowWrites: [extra] });
        try {
          await client.exec("true");
          const repo = await repositoryAt(path.join(extra, "late"));
          await attempt(
            client,
            `printf '${hookText(marker)}' > ${repo}/.git/hooks/pre-commit; chmod +x ${repo}/.git/hooks/pre-commit; printf '[core]\\n\\tfsmonitor = touch ${marker}; false\\n' >> ${repo}/.git/config`,
          );
          hostGit(repo, "status");
          hostGit(repo, "commit", "-q", "--allow-empty", "-m", "b");
          expect(existsSync(marker)).toBe(false);
        } finally {
          await client.close();
        }
      },
    );

    it("a session's job cannot re-point a linked DIR or plant a repository in DIR for the host", async () => {
      const root = await useTempDir("pleach-redaw-root-");
      const extra = await extraFolder();
      const victim = await extraFolder();
      const marker = await markerPath();
      const client = await createLocalSandbox({ root, session: true, allowWrites: [extra] });
      try {
        await client.exec("true");
        await client.jobs?.start(
          `sleep 0.3; git init -q ${extra}/j && git -C ${extra}/j config core.fsmonitor 'touch ${marker}; false'; echo 'touch ${marker}' > ${extra}/.envrc; sleep 30`,
        );
        await new Promise((resolve) => setTimeout(resolve, 1500));
        await attempt(client, "true");
        await attempt(client, `echo owned > ${victim}/owned`);
        hostGit(path.join(extra, "j"), "status");
        expect(existsSync(marker)).toBe(false);
        expect(existsSync(path.join(extra, ".envrc"))).toBe(false);
        expect(existsSync(path.join(victim, "owned"))).toBe(false);
      } finally {
        await client.close();
      }
    });

    it("a warm sandbox does not keep the old DIR after the host replaced it", async () => {
      const root = await useTempDir("pleach-redaw-root-");
      const parent = await extraFolder();
      const extra = path.join(parent, "out");
      await mkdir(extra);
      const client = await createLocalSandbox({ root, allowWrites: [extra] });
      try {
        await client.exec(`echo one > ${extra}/a`);
        execFileSync("mv", [extra, path.join(parent, "old")]);
        await mkdir(extra);
        execFileSync("git", ["init", "-q", path.join(extra, "repo")]);
        const hook = await attempt(client, `echo x > ${extra}/repo/.git/hooks/pre-commit`);
        expect(hook).not.toMatchObject({ exitCode: 0 });
        await client.exec(`echo two > ${extra}/b`);
        expect(readFileSync(path.join(extra, "b"), "utf8")).toBe("two\n");
        expect(existsSync(path.join(parent, "old", "b"))).toBe(false);
      } finally {
        await client.close();
      }
    });

    // FINDING 6 (fixed): the secrets preset hid the .env files below the workspace only
    // (hide-globs.ts, `path.join(root, preset.glob)`); those of a folder given with allowWrites,
    // shown to commands whole, stayed readable. The presets now cover each writable folder.
    it("hides the .env files of DIR from commands with --hide-read @secrets", async () => {
      const root = await useTempDir("pleach-redaw-root-");
      const extra = await extraFolder();
      await writeFile(path.join(extra, ".env"), "TOKEN=hunter2\n");
      await writeFile(path.join(root, ".env"), "TOKEN=hunter3\n");
      const client = await createLocalSandbox({
        root,
        hideReads: ["@secrets"],
        allowWrites: [extra],
      });
      try {
        const inWorkspace = await attempt(client, `cat ${root}/.env`);
        expect(JSON.stringify(inWorkspace)).not.toContain("hunter3");
        const result = await client.exec(`cat ${extra}/.env`).catch(() => undefined);
        expect(result?.stdout ?? "").not.toContain("hunter2");
      } finally {
        await client.close();
      }
    });

    // ---------------------------------------------------------------------- read-only mode

    it("read-only mode with allowWrites writes nothing and reads nothing hidden", async () => {
      const root = await useTempDir("pleach-redaw-root-");
      const extra = await extraFolder();
      await writeFile(path.join(extra, "in.txt"), "there\n");
      const client = await createLocalSandbox({ root, mode: "read-only", allowWrites: [extra] });
      try {
        const result = await attempt(
          client,
          `touch ${extra}/new; mkdir ${extra}/d; ln -s x ${extra}/l; cat ${os.homedir()}/.ssh/* 2>/dev/null; ls ${os.homedir()}`,
        );
        expect(existsSync(path.join(extra, "new"))).toBe(false);
        expect(existsSync(path.join(extra, "d"))).toBe(false);
        expect(result).toHaveProperty("exitCode");
      } finally {
        await client.close();
      }
    });
  },
);
