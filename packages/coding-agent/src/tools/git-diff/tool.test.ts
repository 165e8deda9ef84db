import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { useTempDir } from "@pleach/core/testing";
import { createLocalSandbox } from "@pleach/sandbox";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { SandboxClient } from "../../sandbox/index.js";
import { findPwned, git, HOSTILE_INPUTS } from "../../test-support/hostile-inputs.js";
import { createGitDiffTool, type DiffFile, parseNumstat } from "./tool.js";

let root: string;
let repo: string;

async function plant(files: Record<string, string | Buffer>): Promise<void> {
  for (const [name, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(repo, name)), { recursive: true });
    await writeFile(path.join(repo, name), content);
  }
}

beforeEach(async () => {
  root = await useTempDir("pleach-diff-");
  repo = path.join(root, "repo");
  await mkdir(repo);
  git(repo, "init", "-q");
  await plant({
    "src/a.ts": "one\ntwo\nthree\n",
    "docs/guide.md": "# Guide\n\nline\n",
    "logo.png": Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01]),
  });
  git(repo, "add", ".");
  git(repo, "commit", "-qm", "base");
});
afterEach(async () => {
  expect(await findPwned(root)).toEqual([]);
});

async function diffTool(options?: { maxDiffChars?: number }) {
  const client = await createLocalSandbox({ root, mode: "danger-full-access" });
  return createGitDiffTool(client, options);
}

describe("git_diff", () => {
  it("returns the unstaged diff and per-file counts", async () => {
    await plant({ "src/a.ts": "one\n2\nthree\nfour\n" });
    const tool = await diffTool();
    const output = await tool.execute({ cwd: "repo" });
    expect(output.files).toEqual([{ path: "src/a.ts", additions: 2, deletions: 1 }]);
    expect(output.diffTruncated).toBe(false);
    expect(output.diff).toContain("--- a/src/a.ts\n+++ b/src/a.ts\n");
    expect(
      tool.toModelOutput(output).output.replace(/index \w+\.\.\w+/, "index X..Y"),
    ).toMatchInlineSnapshot(`
        "1 file changed:
          src/a.ts  +2 -1

        diff --git a/src/a.ts b/src/a.ts
        index X..Y 100644
        --- a/src/a.ts
        +++ b/src/a.ts
        @@ -1,3 +1,4 @@
         one
        -two
        +2
         three
        +four
        "
      `);
  });

  it("separates staged from unstaged changes", async () => {
    await plant({ "src/a.ts": "one\ntwo\nthree\nstaged\n" });
    git(repo, "add", "src/a.ts");
    await plant({ "docs/guide.md": "# Guide\n" });
    const tool = await diffTool();
    const unstaged = await tool.execute({ cwd: "repo" });
    expect(unstaged.files).toEqual([{ path: "docs/guide.md", additions: 0, deletions: 2 }]);
    const staged = await tool.execute({ cwd: "repo", staged: true });
    expect(staged.files).toEqual([{ path: "src/a.ts", additions: 1, deletions: 0 }]);
    expect(staged.diff).toContain("+staged");
  });

  it("counts binary files as -1/-1", async () => {
    await plant({ "logo.png": Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x02, 0x03]) });
    const tool = await diffTool();
    const output = await tool.execute({ cwd: "repo" });
    expect(output.files).toEqual([{ path: "logo.png", additions: -1, deletions: -1 }]);
    expect(output.diff).toContain("Binary files a/logo.png and b/logo.png differ");
    expect(tool.toModelOutput(output).output).toContain("  logo.png  binary\n");
  });

  it("reports renames with the old path, and names with spaces, tabs, newlines and unicode", async () => {
    await mkdir(path.join(repo, "src/moved"));
    git(repo, "mv", "src/a.ts", "src/moved/a.ts");
    git(repo, "mv", "docs/guide.md", "docs/Guide ☕ café.md");
    await plant({ "tab\tand\nnewline.txt": "x\n", 'quote"back\\slash.txt': "y\n" });
    git(repo, "add", ".");
    const tool = await diffTool();
    const output = await tool.execute({ cwd: "repo", staged: true });
    expect(output.files).toEqual([
      { path: "docs/Guide ☕ café.md", additions: 0, deletions: 0, oldPath: "docs/guide.md" },
      { path: 'quote"back\\slash.txt', additions: 1, deletions: 0 },
      { path: "src/moved/a.ts", additions: 0, deletions: 0, oldPath: "src/a.ts" },
      { path: "tab\tand\nnewline.txt", additions: 1, deletions: 0 },
    ]);
  });

  it("limits the diff to paths relative to cwd, refusing escapes", async () => {
    await plant({ "src/a.ts": "changed\n", "docs/guide.md": "changed\n" });
    const tool = await diffTool();
    const only = await tool.execute({ cwd: "repo/src", paths: ["a.ts"] });
    expect(only.files).toEqual([{ path: "src/a.ts", additions: 1, deletions: 3 }]);
    const glob = await tool.execute({ cwd: "repo", paths: ["*.md"] });
    expect(glob.files.map((file) => file.path)).toEqual(["docs/guide.md"]);
    await expect(tool.execute({ cwd: "repo", paths: ["../../etc/passwd"] })).rejects.toMatchObject({
      code: "PATH_ESCAPE",
    });
    await expect(tool.execute({ cwd: "repo", paths: ["/etc/passwd"] })).rejects.toMatchObject({
      code: "PATH_ESCAPE",
    });
    await expect(tool.execute({ cwd: "repo", paths: ["a\0b"] })).rejects.toMatchObject({
      code: "INVALID_INPUT",
    });
    await expect(tool.execute({ cwd: "../" })).rejects.toMatchObject({ code: "PATH_ESCAPE" });
    await expect(tool.execute({ cwd: "repo/.git" })).rejects.toMatchObject({
      code: "INVALID_INPUT",
    });
  });

  it("takes an absolute cwd and absolute paths inside the workspace, refusing those outside", async () => {
    await plant({ "src/a.ts": "changed\n", "docs/guide.md": "changed\n" });
    const tool = await diffTool();
    const relative = await tool.execute({ cwd: "repo/src", paths: ["a.ts"] });
    expect(relative.files.map((file) => file.path)).toEqual(["src/a.ts"]);
    expect(
      await tool.execute({ cwd: path.join(repo, "src"), paths: [path.join(repo, "src/a.ts")] }),
    ).toEqual(relative);
    // An absolute path in paths is the file it names, whatever cwd is.
    expect(await tool.execute({ cwd: "repo/docs", paths: [path.join(repo, "src")] })).toEqual(
      relative,
    );
    expect((await tool.execute({ cwd: repo })).files).toHaveLength(2);
    await expect(tool.execute({ cwd: path.dirname(root) })).rejects.toMatchObject({
      code: "PATH_ESCAPE",
    });
    await expect(
      tool.execute({ cwd: repo, paths: [path.join(path.dirname(root), "x")] }),
    ).rejects.toMatchObject({ code: "PATH_ESCAPE" });
  });

  it("passes hostile paths to git as pathspecs, never to the shell", async () => {
    await plant({ "src/a.ts": "changed\n", "-rf": "x\n" });
    git(repo, "add", "--", "-rf");
    git(repo, "commit", "-qm", "dash file");
    await plant({ "-rf": "y\n" });
    const tool = await diffTool();
    for (const hostile of HOSTILE_INPUTS) {
      const output = await tool.execute({ cwd: "repo", paths: [hostile] }).catch((error) => {
        expect(error).toMatchObject({ name: "ToolError" });
        return undefined;
      });
      if (output !== undefined && hostile !== "-rf") expect(output.files).toEqual([]);
    }
    const dash = await tool.execute({ cwd: "repo", paths: ["-rf"] });
    expect(dash.files).toEqual([{ path: "-rf", additions: 1, deletions: 1 }]);
  });

  it("ignores user configuration that would change the output or run a program", async () => {
    await plant({ "src/a.ts": "one\nTWO\nthree\n" });
    git(repo, "config", "diff.noprefix", "true");
    git(repo, "config", "color.ui", "always");
    git(repo, "config", "diff.mnemonicPrefix", "true");
    git(repo, "config", "diff.external", `sh -c 'touch ${path.join(root, "pwned")}'`);
    git(repo, "config", "core.pager", `sh -c 'touch ${path.join(root, "pwned")}'`);
    git(repo, "config", "core.quotePath", "true");
    const tool = await diffTool();
    const output = await tool.execute({ cwd: "repo" });
    expect(output.diff).toContain("--- a/src/a.ts\n+++ b/src/a.ts\n");
    expect(output.diff).not.toContain("\u001b[");
    expect(output.files).toEqual([{ path: "src/a.ts", additions: 1, deletions: 1 }]);
  });

  it("cuts a very large diff but never the file list", async () => {
    const files = Object.fromEntries(
      Array.from({ length: 40 }, (_, index) => [`gen/f${index}.txt`, "x\n".repeat(200)]),
    );
    await plant(files);
    git(repo, "add", ".");
    const tool = await diffTool({ maxDiffChars: 2_000 });
    const output = await tool.execute({ cwd: "repo", staged: true });
    expect(output.diffTruncated).toBe(true);
    expect(output.diff.length).toBeLessThanOrEqual(2_000);
    expect(output.diff).toMatch(/\[\.\.\. [\d,]+ characters cut from the middle of this output/);
    expect(output.files).toHaveLength(40);
    // The cut names the way on: narrow with paths (no kept output from this client).
    expect(tool.toModelOutput(output).output.split("\n").at(-1)).toMatchInlineSnapshot(
      `"[the diff text was cut; to see the rest, call git_diff again with \`paths\` naming some of the 40 files above]"`,
    );
  });

  it("names the kept full diff when the client keeps long output", async () => {
    await plant(
      Object.fromEntries(
        Array.from({ length: 10 }, (_, index) => [`gen/f${index}.txt`, "y\n".repeat(300)]),
      ),
    );
    const local = await createLocalSandbox({ root, mode: "danger-full-access" });
    const asked: Array<number | undefined> = [];
    const client: SandboxClient = {
      ...local,
      async exec(command, options = {}) {
        const result = await local.exec(command, options);
        asked.push(options.fullOutputOverBytes);
        const over = options.fullOutputOverBytes;
        if (over === undefined || result.stdout.length <= over) return result;
        return {
          ...result,
          fullOutput: { path: "/run/pleach-output/cmd-2.log", bytes: result.stdout.length },
        };
      },
    };
    const tool = createGitDiffTool(client, { maxDiffChars: 1_000 });
    git(repo, "add", ".");
    const output = await tool.execute({ cwd: "repo", staged: true });
    expect(asked).toContain(1_000);
    expect(output.fullOutput?.path).toBe("/run/pleach-output/cmd-2.log");
    expect(
      tool.toModelOutput(output).output.split("\n").slice(-2).join("\n"),
    ).toMatchInlineSnapshot(`
      "[the diff text was cut; to see the rest, call git_diff again with \`paths\` naming some of the 10 files above]
      [full output: 10,300 bytes kept at /run/pleach-output/cmd-2.log — read_file with offset/limit, or search it with bash: grep -n PATTERN /run/pleach-output/cmd-2.log]"
    `);
  });

  it("returns nothing for a clean tree, and fails outside a repository", async () => {
    const tool = await diffTool();
    const clean = await tool.execute({ cwd: "repo" });
    expect(clean).toEqual({ diff: "", files: [], diffTruncated: false });
    expect(tool.toModelOutput(clean).output).toMatchInlineSnapshot(
      `"No changes. (Untracked files are not shown; check \`git status\`.)"`,
    );
    await mkdir(path.join(root, "plain"));
    await expect(tool.execute({ cwd: "plain" })).rejects.toMatchObject({
      code: "COMMAND_FAILED",
      message: expect.stringContaining("not a git repository"),
    });
  });
});

describe("parseNumstat", () => {
  it("reads plain lines: counts, binaries, brace and arrow renames, quoted names", () => {
    const stdout = [
      "-\t-\tbin.dat",
      "1\t0\tdir/{ => sub}/a.txt",
      "3\t2\tsrc/{old => new}/file.ts",
      '0\t0\t"caf\\303\\251.txt" => "th\\303\\251.txt"',
      "0\t0\tx y.txt => z w.txt",
      '5\t1\t"tab\\there.txt"',
      "12\t0\tplain.md",
      "",
    ].join("\n");
    expect(parseNumstat(stdout)).toEqual([
      { path: "bin.dat", additions: -1, deletions: -1 },
      { path: "dir/sub/a.txt", additions: 1, deletions: 0, oldPath: "dir/a.txt" },
      { path: "src/new/file.ts", additions: 3, deletions: 2, oldPath: "src/old/file.ts" },
      { path: "thé.txt", additions: 0, deletions: 0, oldPath: "café.txt" },
      { path: "z w.txt", additions: 0, deletions: 0, oldPath: "x y.txt" },
      { path: "tab\there.txt", additions: 5, deletions: 1 },
      { path: "plain.md", additions: 12, deletions: 0 },
    ]);
  });

  it("reads -z records, renames included", () => {
    const stdout = "-\t-\tbin.dat\x001\t0\t\0dir/a.txt\0dir/sub/a.txt\x002\t3\tx\ny.txt\0";
    expect(parseNumstat(stdout)).toEqual([
      { path: "bin.dat", additions: -1, deletions: -1 },
      { path: "dir/sub/a.txt", additions: 1, deletions: 0, oldPath: "dir/a.txt" },
      { path: "x\ny.txt", additions: 2, deletions: 3 },
    ]);
    expect(parseNumstat("")).toEqual([]);
  });

  const count = fc.oneof(fc.constant(-1), fc.nat({ max: 100_000 }));
  const anyName = fc.string({ minLength: 1, maxLength: 30 }).filter((name) => !name.includes("\0"));
  const segment = fc.stringMatching(/^[a-zA-Z0-9._ é☕-]{1,8}$/);
  const plainPath = fc
    .array(segment, { minLength: 1, maxLength: 4 })
    .map((segments) => segments.join("/"))
    .filter((name) => !name.startsWith('"') && !name.includes(" => ") && !/^\s|\s$/.test(name));

  function fileArbitrary(name: fc.Arbitrary<string>): fc.Arbitrary<DiffFile> {
    return fc
      .record({ path: name, oldPath: fc.option(name, { nil: undefined }), additions: count })
      .chain(({ path: filePath, oldPath, additions }) =>
        fc.constant<DiffFile>({
          path: filePath,
          additions,
          // git prints `-` for both counts of a binary file.
          deletions: additions === -1 ? -1 : additions % 7,
          ...(oldPath === undefined || oldPath === filePath ? {} : { oldPath }),
        }),
      );
  }

  const counts = (file: DiffFile) =>
    file.additions === -1 ? "-\t-" : `${file.additions}\t${file.deletions}`;

  it("gives back any file list rendered as -z records (property)", () => {
    fc.assert(
      fc.property(fc.array(fileArbitrary(anyName), { maxLength: 20 }), (files) => {
        const stdout = files
          .map((file) =>
            file.oldPath === undefined
              ? `${counts(file)}\t${file.path}\0`
              : `${counts(file)}\t\0${file.oldPath}\0${file.path}\0`,
          )
          .join("");
        expect(parseNumstat(stdout)).toEqual(files);
      }),
    );
  });

  it("gives back any file list rendered as plain lines the way git renders renames (property)", () => {
    fc.assert(
      fc.property(fc.array(fileArbitrary(plainPath), { maxLength: 20 }), (files) => {
        const stdout = files
          .map((file) => {
            const name =
              file.oldPath === undefined ? file.path : prettyRename(file.oldPath, file.path);
            return `${counts(file)}\t${name}\n`;
          })
          .join("");
        expect(parseNumstat(stdout)).toEqual(files);
      }),
    );
  });
});

/** git's `pprint_rename` (diff.c): common leading and trailing folders folded into braces. */
function prettyRename(from: string, to: string): string {
  let prefix = 0;
  for (
    let index = 0;
    index < from.length && index < to.length && from[index] === to[index];
    index++
  ) {
    if (from[index] === "/") prefix = index + 1;
  }
  let suffix = 0;
  const adjust = prefix > 0 ? 1 : 0;
  let fromIndex = from.length - 1;
  let toIndex = to.length - 1;
  while (
    fromIndex >= prefix - adjust &&
    toIndex >= prefix - adjust &&
    from[fromIndex] === to[toIndex]
  ) {
    if (from[fromIndex] === "/") suffix = from.length - fromIndex;
    fromIndex--;
    toIndex--;
  }
  const fromMiddle = from.slice(prefix, Math.max(prefix, from.length - suffix));
  const toMiddle = to.slice(prefix, Math.max(prefix, to.length - suffix));
  if (prefix + suffix === 0) return `${fromMiddle} => ${toMiddle}`;
  return `${from.slice(0, prefix)}{${fromMiddle} => ${toMiddle}}${from.slice(from.length - suffix)}`;
}
