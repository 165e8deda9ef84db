import { execFileSync } from "node:child_process";
import { lstatSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import {
  createApplyDiffTool,
  createEditFileTool,
  createWriteFileTool,
} from "@pleach/coding-agent/tools";
import type { SandboxClient } from "@pleach/core/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLocalSandbox } from "../local-sandbox.js";
import { createCommandWrapper } from "../os/create-command-wrapper.js";
import { takeMovedAside } from "../os/test-support/fixture.js";
import { attackSuiteSkipReason, runningAs } from "../os/test-support/suite.js";
import { HOME_FOLDER_ENTRIES, PROTECTED_ENTRIES } from "./protected-entries.js";

// One protection policy for commands and file tools: for every kind of protected path, a bash
// command and every writing tool are refused, the file tools with PROTECTED_PATH naming the rule,
// and nothing on the host changes.

const skipReason = await attackSuiteSkipReason();

/** A protected path of the fixture, and the words its rule must contain. */
interface Row {
  kind: string;
  target: string;
  rule: RegExp;
}

const GIT_ROWS: Row[] = [
  {
    kind: "gitdir through a .git file",
    target: "realgit/hooks/pre-commit",
    rule: /gitdir that \.git points to/,
  },
  { kind: "gitdir's config", target: "realgit/config", rule: /gitdir that \.git points to/ },
  { kind: "common dir of a worktree", target: "store/config", rule: /common gitdir of sub\/\.git/ },
  { kind: "core.hooksPath folder", target: "githooks/pre-commit", rule: /core\.hooksPath/ },
  { kind: "include.path target", target: "shared.gitconfig", rule: /include\.path/ },
  { kind: "nested .git", target: "vendor/lib/.git/config", rule: /\.git/ },
  { kind: "nested .git hooks", target: "vendor/lib/.git/hooks/post-checkout", rule: /\.git/ },
  { kind: "a .git made later", target: "later/.git/config", rule: /\.git/ },
];

const NAME_ROWS: Row[] = PROTECTED_ENTRIES.filter((entry) => entry.name !== ".git").map(
  (entry) => ({
    kind: `protected name ${entry.name}`,
    target: entry.name,
    rule: new RegExp(escapeRegex(`${entry.name} at the top of the workspace is protected`)),
  }),
);

const HOME_ROWS: Row[] = HOME_FOLDER_ENTRIES.map((entry) => ({
  kind: `home-folder entry ${entry.name}`,
  target: `${entry.name}/planted`,
  rule: new RegExp(escapeRegex(`${entry.name} of a home folder is protected`)),
}));

const ROWS = [
  ...GIT_ROWS,
  ...NAME_ROWS,
  { kind: "inside a protected folder", target: ".vscode/tasks.json", rule: /\.vscode/ },
  { kind: "inside a protected folder, deeper", target: ".claude/hooks/x.sh", rule: /\.claude/ },
  ...HOME_ROWS,
];

/** The fixture's protected paths that are folders (see beforeAll). */
function isFolderTarget(target: string): boolean {
  return [".vscode", ".config"].includes(target);
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

function git(cwd: string, ...args: string[]): void {
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.invalid", ...args], {
    cwd,
    stdio: "ignore",
  });
}

/** The host's state at `target` and its parents below the root: what must not change. */
function stateAt(root: string, target: string): string {
  const parts: string[] = [];
  for (let current = target; current !== "."; current = path.dirname(current)) {
    const full = path.join(root, current);
    const info = lstatSync(full, { throwIfNoEntry: false });
    if (info === undefined) parts.push(`${current}: missing`);
    else if (info.isFile()) parts.push(`${current}: file ${readFileSync(full, "hex")}`);
    else parts.push(`${current}: ${info.isDirectory() ? "dir" : "other"} ${info.mode.toString(8)}`);
  }
  return parts.join("\n");
}

/** The shallowest path that {@link stateAt} found missing. */
function shallowestMissing(state: string): string {
  const missing = state
    .split("\n")
    .filter((line) => line.endsWith(": missing"))
    .map((line) => line.slice(0, -": missing".length));
  const shallowest = missing[missing.length - 1];
  if (shallowest === undefined) throw new Error(`nothing is missing in ${state}`);
  return shallowest;
}

describe.skipIf(skipReason !== undefined)(
  `one protection policy for commands and file tools ${runningAs()}${skipReason === undefined ? "" : ` (skipped: ${skipReason})`}`,
  () => {
    let root: string;
    let client: SandboxClient;

    beforeAll(async () => {
      root = await realpath(await mkdtemp(path.join(os.tmpdir(), "pleach-protection-")));
      // The repository's gitdir lies beside its work tree, named by a .git file.
      git(root, "init", "-q", "--separate-git-dir=realgit", ".");
      git(root, "config", "core.hooksPath", "githooks");
      git(root, "config", "include.path", "../shared.gitconfig");
      await writeFile(path.join(root, "shared.gitconfig"), "[user]\n\tname = t\n");
      // A worktree whose gitdir and common dir are folders of the workspace.
      await mkdir(path.join(root, "store/worktrees/sub"), { recursive: true });
      await writeFile(path.join(root, "store/worktrees/sub/commondir"), "../..\n");
      await writeFile(path.join(root, "store/config"), "[core]\n");
      await mkdir(path.join(root, "sub"));
      await writeFile(path.join(root, "sub/.git"), "gitdir: ../store/worktrees/sub\n");
      await mkdir(path.join(root, "vendor/lib"), { recursive: true });
      git(path.join(root, "vendor/lib"), "init", "-q");
      await mkdir(path.join(root, "later"));
      // Existing protected files, so that edits are tried too.
      await writeFile(path.join(root, ".bashrc"), "echo hello\n");
      await mkdir(path.join(root, ".vscode"));
      await writeFile(path.join(root, ".vscode/tasks.json"), "{}\n");
      await mkdir(path.join(root, ".config"));
      await mkdir(path.join(root, ".ssh"));
      await writeFile(path.join(root, ".ssh/planted"), "key\n");
      client = await createLocalSandbox({
        root,
        mode: "workspace-write",
        // The workspace is the home folder of the user running pleach.
        commandWrapper: createCommandWrapper({
          hostEnvironment: { ...process.env, HOME: root },
        }),
      });
    });

    afterAll(async () => {
      await rm(root, { recursive: true, force: true });
    });

    it("every row is judged by a rule that names it", () => {
      expect(ROWS.length).toBeGreaterThan(60);
    });

    describe.each(ROWS)("$kind ($target)", ({ target, rule }) => {
      const exists = () =>
        lstatSync(path.join(root, target), { throwIfNoEntry: false }) !== undefined;

      it("write_file is refused with PROTECTED_PATH naming the rule", async () => {
        const before = stateAt(root, target);
        const error = await createWriteFileTool(client)
          .execute({ path: target, content: "pwned\n" })
          .then(
            () => undefined,
            (failure: unknown) => failure,
          );
        expect(error).toMatchObject({
          code: "PROTECTED_PATH",
          message: expect.stringMatching(rule),
        });
        expect(stateAt(root, target)).toBe(before);
      });

      const folderSkip = isFolderTarget(target)
        ? " (skipped: a folder is not a file to edit; its files are rows of their own)"
        : "";
      it.skipIf(folderSkip !== "")(
        `edit_file is refused with PROTECTED_PATH naming the rule${folderSkip}`,
        async () => {
          const before = stateAt(root, target);
          const input = exists()
            ? { path: target, old: readFileSync(path.join(root, target), "utf8"), new: "pwned\n" }
            : { path: target, old: "", new: "pwned\n" };
          const error = await createEditFileTool(client)
            .execute(input)
            .then(
              () => undefined,
              (failure: unknown) => failure,
            );
          expect(error).toMatchObject({
            code: "PROTECTED_PATH",
            message: expect.stringMatching(rule),
          });
          expect(stateAt(root, target)).toBe(before);
        },
      );

      it.skipIf(folderSkip !== "")(
        `apply_diff is refused by both engines${folderSkip}`,
        async () => {
          const before = stateAt(root, target);
          const diff = exists()
            ? `--- a/${target}\n+++ b/${target}\n@@ -1 +1 @@\n-${readFileSync(path.join(root, target), "utf8").split("\n")[0]}\n+pwned\n`
            : `--- /dev/null\n+++ b/${target}\n@@ -0,0 +1 @@\n+pwned\n`;
          const tool = createApplyDiffTool(client);
          const viaEngine = await tool.execute({ path: ".", diff }).then(
            () => undefined,
            (failure: unknown) => failure,
          );
          expect(viaEngine).toMatchObject({
            code: "PROTECTED_PATH",
            message: expect.stringMatching(rule),
          });
          // GNU patch runs inside the OS sandbox, which refuses the write itself.
          const viaPatch = await tool.execute({ path: ".", diff, engine: "patch" }).then(
            (output) => output.conflicts.length > 0 || output.hunksApplied === 0,
            (failure: unknown) => failure,
          );
          expect(viaPatch === true || (viaPatch as { code?: string }).code !== undefined).toBe(
            true,
          );
          expect(stateAt(root, target)).toBe(before);
        },
      );

      const ownRepository = target.startsWith("later/")
        ? " (skipped: a command may make a repository of its own; the file tools refuse its .git by name)"
        : "";
      it.skipIf(ownRepository !== "")(
        `a bash command cannot write it, or what it made there is moved aside${ownRepository}`,
        async () => {
          const before = stateAt(root, target);
          const quoted = `'${target}'`;
          const result = await client.exec(
            `mkdir -p "$(dirname ${quoted})" 2>/dev/null; printf pwned > ${quoted} && echo WROTE; true`,
          );
          if (result.stdout.includes("WROTE")) {
            // Nothing stood there: the command could make it, and it was moved aside at the end.
            expect(before).toMatch(/: missing$/);
            expect(result.sandboxNotes?.join("\n")).toMatch(/made by a sandboxed command/);
            expect(await takeMovedAside(root)).not.toEqual([]);
            // The folders on the way that are not protected themselves stay, as mkdir made them.
            await rm(path.join(root, shallowestMissing(before)), { recursive: true, force: true });
          }
          expect(stateAt(root, target)).toBe(before);
        },
      );
    });
  },
);
