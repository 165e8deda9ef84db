import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, lstatSync, readFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { useTempDir } from "@pleach/core/testing";
import { describe, expect, it } from "vitest";
import { createLocalSandbox } from "../local-sandbox.js";
import { createCommandWrapper } from "./create-command-wrapper.js";
import { attackSuiteSkipReason, runningAs } from "./test-support/suite.js";

const skipReason = await attackSuiteSkipReason();

/** Whether the host finds a file (not a folder of ours) at `target`. */
function fileAt(target: string): boolean {
  return lstatSync(target, { throwIfNoEntry: false })?.isFile() === true;
}

/** A workspace (a git repository) whose client runs over a host with `variables` set. */
async function sandboxOver(root: string, variables: Record<string, string>) {
  execFileSync("git", ["init", "-q", root]);
  const hostEnvironment = { ...process.env, ...variables };
  return createLocalSandbox({ root, commandWrapper: createCommandWrapper({ hostEnvironment }) });
}

/** A command that tries to make each of `targets` (its folders too), quietly. */
function plantAll(targets: readonly string[]): string {
  const quoted = targets.map((target) => `'${target}'`).join(" ");
  return `for p in ${quoted}; do mkdir -p "$(dirname "$p")"; echo 'touch /var/tmp/pwned' > "$p"; done 2>/dev/null; true`;
}

describe.skipIf(skipReason !== undefined)(
  `host-run folders by their role ${runningAs()}${skipReason === undefined ? "" : ` (skipped: ${skipReason})`}`,
  () => {
    it("keeps git's global config unwritable where XDG_CONFIG_HOME points into the workspace, so host git runs no planted fsmonitor", async () => {
      const root = await useTempDir();
      const outside = await useTempDir({ parent: "/var/tmp" });
      const marker = path.join(outside, "fsmonitor-ran");
      const config = path.join(root, "config-home");
      const client = await sandboxOver(root, { XDG_CONFIG_HOME: config });
      const payload = `[core]\\n\\tfsmonitor = "touch ${marker}; false"\\n`;
      const planted = await client.exec(
        `mkdir -p config-home/git && printf '${payload}' >> config-home/git/config`,
      );
      // The folder was missing: what the command made there is moved aside when it ends.
      expect(planted.sandboxNotes?.join("\n")).toMatch(
        /config-home was made by a sandboxed command/,
      );
      await expect(
        client.writeFile("config-home/git/config", "[core]\n\tfsmonitor = true\n"),
      ).rejects.toMatchObject({ code: "PROTECTED_PATH" });
      expect(fileAt(path.join(config, "git", "config"))).toBe(false);
      // The user's own git, with the same variables, in the workspace.
      spawnSync("git", ["status"], {
        cwd: root,
        env: { ...process.env, XDG_CONFIG_HOME: config, HOME: outside },
        stdio: "ignore",
      });
      expect(existsSync(marker)).toBe(false);
      await client.close();
    });

    it("keeps a home folder's start-up and tool folders unwritable when the workspace is that home", async () => {
      const root = await useTempDir();
      // A dot-file no list names, and a ~/.local the user has already.
      await writeFile(path.join(root, ".unlistedrc"), "set ok\n");
      await mkdir(path.join(root, ".local", "share"), { recursive: true });
      const client = await sandboxOver(root, { HOME: root, ZDOTDIR: path.join(root, "zdot") });
      const targets = [
        ".local/bin/git",
        ".local/lib/python3.12/site-packages/evil.pth",
        ".vimrc",
        ".vim/plugin/evil.vim",
        ".config/nvim/init.lua",
        ".tmux.conf",
        ".config/tmux/tmux.conf",
        ".bashrc.d/evil.sh",
        ".oh-my-zsh/custom/evil.zsh",
        ".hgrc",
        ".config/Code/User/settings.json",
        ".vscode-server/data/Machine/settings.json",
        "zdot/.zshrc",
        ".unlistedrc",
      ];
      await client.exec(plantAll(targets));
      for (const target of targets) {
        // The one there already must keep its content (below); every other must not appear.
        if (target !== ".unlistedrc")
          expect.soft(fileAt(path.join(root, target)), target).toBe(false);
        await expect
          .soft(client.writeFile(target, "touch /var/tmp/pwned\n"), target)
          .rejects.toMatchObject({ code: "PROTECTED_PATH" });
      }
      expect(readFileSync(path.join(root, ".unlistedrc"), "utf8")).toBe("set ok\n");
      // The rest of the workspace stays writable.
      expect((await client.exec("echo ok > notes.txt")).exitCode).toBe(0);
      await client.close();
    });

    it("keeps a PATH folder inside the workspace unwritable, with the rule in the refusal", async () => {
      const root = await useTempDir();
      const bin = path.join(root, ".venv", "bin");
      await mkdir(bin, { recursive: true });
      const client = await sandboxOver(root, { PATH: `${bin}:${process.env.PATH ?? "/usr/bin"}` });
      const planted = await client.exec("echo 'touch /var/tmp/pwned' > .venv/bin/git");
      expect(planted.exitCode).not.toBe(0);
      expect(fileAt(path.join(bin, "git"))).toBe(false);
      await expect(client.writeFile(".venv/bin/ls", "x")).rejects.toThrow(
        /\.venv\/bin is protected: it is what the host's PATH names/,
      );
      await client.close();
    });
  },
);
