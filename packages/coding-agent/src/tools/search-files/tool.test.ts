import { execFileSync } from "node:child_process";
import { chmod, mkdir, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { runToolCall, toolInputJSONSchema } from "@pleach/core";
import { makeTempDir } from "@pleach/core/testing";
import { createCommandWrapper, createLocalSandbox, probeSandboxBackend } from "@pleach/sandbox";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ExecResult, SandboxClient } from "../../sandbox/index.js";
import { findPwned, git, HOSTILE_INPUTS } from "../../test-support/hostile-inputs.js";
import { compareTreePaths } from "../shared/path-order.js";
import { createSearchFilesTool, type SearchBackend, type SearchFilesOutput } from "./tool.js";

let root: string;
let cleanup: () => Promise<void>;

beforeEach(async () => {
  ({ dir: root, cleanup } = await makeTempDir("pleach-search-"));
});
afterEach(async () => {
  expect(await findPwned(root)).toEqual([]);
  await cleanup();
});

async function plant(files: Record<string, string | Buffer>): Promise<void> {
  for (const [name, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(root, name)), { recursive: true });
    await writeFile(path.join(root, name), content);
  }
}

async function searchTool(searchBackend: SearchBackend = "auto", maxSnippetChars?: number) {
  const client = await createLocalSandbox({ root, mode: "danger-full-access" });
  return createSearchFilesTool(client, { searchBackend, maxSnippetChars });
}

/**
 * A local client that records each command a tool runs. `run` gives the command actually run
 * (default: the command itself); `answer` may change its result.
 */
async function recordingClient({
  run = (command: string) => command,
  answer = (_command: string, result: ExecResult) => result,
}: {
  run?: (command: string) => string;
  answer?: (command: string, result: ExecResult) => ExecResult;
} = {}): Promise<{ client: SandboxClient; commands: string[] }> {
  const sandbox = await createLocalSandbox({ root, mode: "danger-full-access" });
  const commands: string[] = [];
  const client: SandboxClient = {
    ...sandbox,
    async exec(command, options) {
      commands.push(command);
      return answer(command, await sandbox.exec(run(command), options));
    },
  };
  return { client, commands };
}

/** 40 files of two matches each, in four folders: `dir-N/file-NN.txt`. */
async function plantFortyFiles(): Promise<void> {
  const files: Record<string, string> = {};
  for (let index = 0; index < 40; index++) {
    files[`dir-${index % 4}/file-${String(index).padStart(2, "0")}.txt`] = "needle\nhay\nneedle\n";
  }
  await plant(files);
}

describe.each(["rg", "grep"] as const)("search_files with %s", (backend) => {
  it("returns workspace-relative path, line and snippet, sorted by path and line", async () => {
    await plant({
      "src/b.ts": "const needle = 1;\nother\nneedle again\n",
      "src/a.ts": "no\nthe needle: here\n",
      "README.md": "needle in docs\r\n",
    });
    const tool = await searchTool(backend);
    expect(await tool.execute({ pattern: "needle" })).toEqual([
      { path: "README.md", line: 1, snippet: "needle in docs" },
      { path: "src/a.ts", line: 2, snippet: "the needle: here" },
      { path: "src/b.ts", line: 1, snippet: "const needle = 1;" },
      { path: "src/b.ts", line: 3, snippet: "needle again" },
    ]);
  });

  it("searches only inside `path`, and reports paths from the workspace root", async () => {
    await plant({ "src/deep/a.ts": "needle\n", "lib/b.ts": "needle\n" });
    const tool = await searchTool(backend);
    expect(await tool.execute({ pattern: "needle", path: "src" })).toEqual([
      { path: "src/deep/a.ts", line: 1, snippet: "needle" },
    ]);
    expect(await tool.execute({ pattern: "needle", path: "./src/deep/" })).toEqual([
      { path: "src/deep/a.ts", line: 1, snippet: "needle" },
    ]);
  });

  it("filters file names with glob", async () => {
    await plant({ "a.ts": "needle\n", "b.js": "needle\n", "sub/c.ts": "needle\n" });
    const tool = await searchTool(backend);
    const found = await tool.execute({ pattern: "needle", glob: "*.ts" });
    expect(found.map((match) => match.path)).toEqual(["a.ts", "sub/c.ts"]);
  });

  it("treats the pattern as a regular expression", async () => {
    await plant({ "a.txt": "foo123\nfoo\nbar456\n" });
    const tool = await searchTool(backend);
    const found = await tool.execute({ pattern: "(foo|bar)[0-9]+$" });
    expect(found.map((match) => match.line)).toEqual([1, 3]);
  });

  it("returns an empty list when nothing matches", async () => {
    await plant({ "a.txt": "hay\n" });
    const tool = await searchTool(backend);
    const found = await tool.execute({ pattern: "needle" });
    expect(found).toEqual([]);
    expect(tool.toModelOutput(found).output).toMatchInlineSnapshot(
      `"No matches. (Files left out by .gitignore or .ignore are searched with includeIgnored: true; binary files and .git never are.)"`,
    );
  });

  it("refuses an invalid regular expression with the engine's message", async () => {
    await plant({ "a.txt": "(\n" });
    const tool = await searchTool(backend);
    const failure = tool.execute({ pattern: "(unclosed" });
    await expect(failure).rejects.toMatchObject({ code: "INVALID_INPUT" });
    await expect(failure).rejects.toThrow(/exit 2/);
  });

  it("caps results at maxMatches and marks the last one", async () => {
    await plant({ "a.txt": "needle\n".repeat(5) });
    const tool = await searchTool(backend);
    const capped = await tool.execute({ pattern: "needle", maxMatches: 3 });
    expect(capped).toHaveLength(3);
    expect(capped[2]?.truncatedAfter).toBe(true);
    expect(tool.toModelOutput(capped).output).toMatchInlineSnapshot(`
      "a.txt:1:needle
      a.txt:2:needle
      a.txt:3:needle
      [results capped at 3 matches; narrow the pattern, glob or path, or raise maxMatches]"
    `);
    const exact = await tool.execute({ pattern: "needle", maxMatches: 5 });
    expect(exact).toHaveLength(5);
    expect(exact.some((match) => match.truncatedAfter)).toBe(false);
  });

  it("orders paths folder by folder: a folder's files before its longer-named siblings", async () => {
    await plant({
      "a.txt": "needle\n",
      "a-b.txt": "needle\n",
      "a/b.txt": "needle\n",
      "B.txt": "needle\n",
    });
    const tool = await searchTool(backend);
    const found = await tool.execute({ pattern: "needle" });
    expect(found.map((match) => match.path)).toEqual(["B.txt", "a/b.txt", "a-b.txt", "a.txt"]);
  });

  it.each([
    ["in Latin-1, compared natively as one-byte", ["a", "a-b", "a.b", "a b", "B", "_", "é", "ÿ"]],
    ["below U+D800, compared natively", ["a", "a-b", "a.b", "a b", "B", "_", "é", "中", "z9"]],
    ["up to U+10FFFF, compared by UTF-8", ["a", "a-b", "a.b", "B", "中", "\uFF21", "\u{1F600}"]],
  ])(
    "orders many files in nested folders as a sorted walk does, names %s",
    async (_what, parts) => {
      // Names that sort differently folder by folder than as whole strings (`-`, `.` and space sort
      // before `/`), and characters of every UTF-8 length.
      let state = 7;
      const next = (below: number) => {
        state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
        // The high bits: the low ones of this generator repeat within a few steps.
        return Math.floor(state / 2 ** 16) % below;
      };
      // Files end in `.txt` and folders never do, so no file is another's folder.
      const files: Record<string, string> = {};
      for (let attempt = 0; attempt < 1_000; attempt++) {
        const depth = 1 + next(3);
        const name = Array.from({ length: depth }, () => parts[next(parts.length)]).join("/");
        files[`${name}.txt`] = "needle\nhay\nneedle\n";
      }
      expect(Object.keys(files).length).toBeGreaterThan(100);
      await plant(files);
      const tool = await searchTool(backend);
      const found = await tool.execute({ pattern: "needle", maxMatches: 1_000 });
      const expected = Object.keys(files)
        .sort(compareTreePaths)
        .flatMap((name) => [`${name}:1`, `${name}:3`]);
      expect(found.map((match) => `${match.path}:${match.line}`)).toEqual(expected);
    },
  );

  it("orders names by their UTF-8 bytes, as the file system does", async () => {
    await plant({ "\u{1F600}.txt": "needle\n", "\uFF21.txt": "needle\n", "z.txt": "needle\n" });
    const tool = await searchTool(backend);
    const found = await tool.execute({ pattern: "needle" });
    expect(found.map((match) => match.path)).toEqual(["z.txt", "\uFF21.txt", "\u{1F600}.txt"]);
    const cut = await tool.execute({ pattern: "needle", maxMatches: 2 });
    if (backend === "rg") expect(cut.map((match) => match.path)).toEqual(["z.txt", "\uFF21.txt"]);
  });

  it.each([
    ["dd", ""],
    // A dd without GNU's iflag=fullblock fails before reading: cat passes the output on.
    ["cat, where dd fails", "dd() { echo 'dd: invalid operand' >&2; return 1; }; "],
  ])("passes a large output on whole, through %s", async (_through, prefix) => {
    const files: Record<string, string> = {};
    for (let file = 0; file < 40; file++) {
      files[`f${String(file).padStart(2, "0")}.txt`] = "needle with some text around it\n".repeat(
        100,
      );
    }
    await plant(files);
    const { client, commands } = await recordingClient({ run: (command) => prefix + command });
    const tool = createSearchFilesTool(client, { searchBackend: backend });
    const found = await tool.execute({ pattern: "needle", maxMatches: 5_000 });
    expect(commands.every((command) => command.includes("| { dd bs=256k"))).toBe(true);
    expect(found).toHaveLength(4_000);
    expect(found.some((match) => match.truncatedAfter)).toBe(false);
    expect(found[3_999]).toEqual({
      path: "f39.txt",
      line: 100,
      snippet: "needle with some text around it",
    });
    const capped = await tool.execute({ pattern: "needle", maxMatches: 1_500 });
    expect(capped).toHaveLength(1_500);
    expect(capped[1_499]?.truncatedAfter).toBe(true);
    // ripgrep's cut keeps the first matches in path order; grep's, those of its directory order.
    if (backend === "rg") expect(capped[1_499]).toMatchObject({ path: "f14.txt", line: 100 });
  });

  it("counts a newline in a file name as a line for head, and reports the cut there", async () => {
    await plant({ "new\nline.txt": "needle\n".repeat(8) });
    const tool = await searchTool(backend);
    // `head -n 4` lets two records of two lines each through: the third match was cut. (ripgrep's
    // first search, which prints the name once, is cut too: `head -n 8` stops it after the name's
    // newline and 7 matches. Its second search, in path order, prints records as grep does.)
    const found = await tool.execute({ pattern: "needle", maxMatches: 3 });
    expect(found).toEqual([
      { path: "new\nline.txt", line: 1, snippet: "needle" },
      { path: "new\nline.txt", line: 2, snippet: "needle", truncatedAfter: true },
    ]);
  });

  it("cuts long lines with a marker", async () => {
    await plant({
      "min.js": `${"x".repeat(300)}needle${"y".repeat(20_000)}\n`,
      "ok.js": "needle\n",
    });
    const tool = await searchTool(backend, 50);
    const [long, short] = await tool.execute({ pattern: "needle" });
    expect(long).toEqual({
      path: "min.js",
      line: 1,
      snippet: `${"x".repeat(50)} [... line cut at 50 characters]`,
      snippetTruncated: true,
    });
    expect(short).toEqual({ path: "ok.js", line: 1, snippet: "needle" });
  });

  it("parses file names with spaces, colons, newlines and unicode", async () => {
    const names = ["with space.txt", "a:1:b.txt", "new\nline.txt", "café ☕.txt", "tab\there.txt"];
    await plant(Object.fromEntries(names.map((name) => [name, "x\nneedle: 7:8\n"])));
    const tool = await searchTool(backend);
    const found = await tool.execute({ pattern: "needle" });
    expect(found).toEqual(
      [...names].sort().map((name) => ({ path: name, line: 2, snippet: "needle: 7:8" })),
    );
    expect(tool.toModelOutput(found).output).toMatchInlineSnapshot(`
      ""a:1:b.txt":2:needle: 7:8
      café ☕.txt:2:needle: 7:8
      "new\\nline.txt":2:needle: 7:8
      "tab\\there.txt":2:needle: 7:8
      with space.txt:2:needle: 7:8"
    `);
  });

  it("skips binary files", async () => {
    await plant({
      "blob.bin": Buffer.from([0x6e, 0x65, 0x65, 0x64, 0x6c, 0x65, 0x00, 0x01, 0x0a]),
      "text.txt": "needle\n",
    });
    const tool = await searchTool(backend);
    expect((await tool.execute({ pattern: "needle" })).map((match) => match.path)).toEqual([
      "text.txt",
    ]);
  });

  it("never searches .git, but does search other hidden files", async () => {
    git(root, "init", "-q");
    await plant({ ".git/needle.txt": "needle\n", ".github/ci.yml": "needle\n" });
    const tool = await searchTool(backend);
    expect((await tool.execute({ pattern: "needle" })).map((match) => match.path)).toEqual([
      ".github/ci.yml",
    ]);
    await expect(tool.execute({ pattern: "needle", path: ".git" })).rejects.toMatchObject({
      code: "INVALID_INPUT",
    });
    await symlink(".git", path.join(root, "sneaky"));
    await expect(tool.execute({ pattern: "needle", path: "sneaky" })).rejects.toMatchObject({
      code: "INVALID_INPUT",
    });
  });

  it("skips node_modules in a git repository", async () => {
    git(root, "init", "-q");
    await plant({
      ".gitignore": "node_modules\n",
      "node_modules/dep/index.js": "needle\n",
      "src/a.js": "needle\n",
    });
    const tool = await searchTool(backend);
    expect((await tool.execute({ pattern: "needle" })).map((match) => match.path)).toEqual([
      "src/a.js",
    ]);
  });

  it("runs no hostile pattern, glob or path", async () => {
    await plant({
      "a.txt": `${HOSTILE_INPUTS.join("\n")}\n`,
      "-rf": "-rf\n",
    });
    const tool = await searchTool(backend);
    for (const hostile of HOSTILE_INPUTS) {
      await tool.execute({ pattern: hostile }).catch((error) => {
        expect(error).toMatchObject({ code: "INVALID_INPUT" });
      });
      expect(await tool.execute({ pattern: "needle", glob: hostile })).toEqual([]);
      await expect(tool.execute({ pattern: "needle", path: hostile })).rejects.toMatchObject({
        name: "ToolError",
      });
    }
    // A pattern that looks like an option is a pattern, found where it occurs.
    expect(await tool.execute({ pattern: "-rf" })).toEqual([
      { path: "-rf", line: 1, snippet: "-rf" },
      { path: "a.txt", line: 6, snippet: "-rf" },
    ]);
    expect(await tool.execute({ pattern: "touch pwned`" })).toEqual([
      { path: "a.txt", line: 2, snippet: "`touch pwned`" },
    ]);
  });
});

/** Why the sandboxed searches cannot run here, or `undefined` when they can. */
const noBubblewrap =
  process.platform !== "linux"
    ? "bubblewrap runs on Linux only"
    : await probeSandboxBackend({ backend: "bubblewrap" }).then((probe) =>
        probe.available ? undefined : `no working bubblewrap: ${probe.reason}`,
      );

describe.skipIf(noBubblewrap !== undefined)(
  `search_files in a bubblewrap sandbox${noBubblewrap === undefined ? "" : ` (skipped: ${noBubblewrap})`}`,
  () => {
    it.each(["rg", "grep"] as const)(
      "passes a large non-ASCII output on whole through its dd stage, with %s",
      async (backend) => {
        const files: Record<string, string> = {};
        for (let file = 0; file < 40; file++) {
          files[`f${String(file).padStart(2, "0")}.txt`] = "needle é 中 🙂\n".repeat(100);
        }
        await plant(files);
        for (const mode of ["read-only", "workspace-write"] as const) {
          const client = await createLocalSandbox({ root, mode });
          const tool = createSearchFilesTool(client, { searchBackend: backend });
          const found = await tool.execute({ pattern: "needle", maxMatches: 5_000 });
          expect(found).toHaveLength(4_000);
          expect(found[3_999]).toEqual({ path: "f39.txt", line: 100, snippet: "needle é 中 🙂" });
        }
      },
    );

    it.each(["rg", "grep"] as const)(
      "skips and counts the files hidden by --hide-read, with %s, on every face",
      async (backend) => {
        await plant({ ".env": "TOKEN=1\n", "keys/a.txt": "TOKEN=2\n", "src/app.ts": "TOKEN\n" });
        const client = await createLocalSandbox({
          root,
          mode: "workspace-write",
          commandWrapper: createCommandWrapper({
            hideReads: [path.join(root, ".env"), path.join(root, "keys")],
          }),
        });
        const tool = createSearchFilesTool(client, { searchBackend: backend });
        const found = await tool.execute({ pattern: "TOKEN" });
        expect([...found]).toEqual([{ path: "src/app.ts", line: 1, snippet: "TOKEN" }]);
        expect((found as SearchFilesOutput).hiddenSkipped).toBe(2);
        const skipped =
          "[2 hidden paths skipped (--hide-read): the sandbox's read policy keeps them from commands and file tools; if the task needs them, ask the user to give them back with --allow-read <path> (allowReads)]";
        expect(tool.toModelOutput(found).output).toBe(`src/app.ts:1:TOKEN\n${skipped}`);
        // The only hit hidden: no matches, not a failure, as a face renders it.
        const onlyEnv = await createLocalSandbox({
          root,
          mode: "workspace-write",
          commandWrapper: createCommandWrapper({ hideReads: [path.join(root, ".env")] }),
        });
        const only = await runToolCall({
          tools: [createSearchFilesTool(onlyEnv, { searchBackend: backend })],
          name: "search_files",
          input: { pattern: "TOKEN=1" },
        });
        expect(only).toEqual({
          output:
            "No matches. [1 hidden path skipped (--hide-read): the sandbox's read policy keeps it from commands and file tools; if the task needs it, ask the user to give it back with --allow-read <path> (allowReads)] (Files left out by .gitignore or .ignore are searched with includeIgnored: true; binary files and .git never are.)",
          error: false,
        });
      },
    );

    it("still fails on a file unreadable for another reason than the read policy", async () => {
      await plant({ "mine.txt": "TOKEN\n" });
      await chmod(path.join(root, "mine.txt"), 0o000);
      // The sandbox drops every capability, so even root cannot read a file of mode 000 there.
      const client = await createLocalSandbox({ root, mode: "workspace-write" });
      const tool = createSearchFilesTool(client, { searchBackend: "rg" });
      await expect(tool.execute({ pattern: "TOKEN" })).rejects.toMatchObject({
        code: "INVALID_INPUT",
        message: expect.stringContaining("./mine.txt: Permission denied"),
      });
    });
  },
);

describe("search_files", () => {
  it("with rg, a cut result is the first maxMatches matches in path order, call after call", async () => {
    await plantFortyFiles();
    const tool = await searchTool("rg");
    const everything = await tool.execute({ pattern: "needle", maxMatches: 1_000 });
    expect(everything).toHaveLength(80);
    expect(everything.some((match) => match.truncatedAfter)).toBe(false);
    const firstTen = everything.slice(0, 10).map((match) => ({ ...match }));
    const last = firstTen[9];
    if (last !== undefined) last.truncatedAfter = true;
    for (let call = 0; call < 3; call++) {
      expect(await tool.execute({ pattern: "needle", maxMatches: 10 })).toEqual(firstTen);
    }
  });

  it("with rg, cuts a search its first run printed whole in path order, without a second", async () => {
    await plantFortyFiles();
    const { client, commands } = await recordingClient();
    const tool = createSearchFilesTool(client, { searchBackend: "rg" });
    const everything = await tool.execute({ pattern: "needle" });
    expect(everything).toHaveLength(80);
    // 80 matches and 39 blank lines fit in `head -n 142`: one search, cut here in path order.
    commands.length = 0;
    const firstSeventy = everything.slice(0, 70).map((match) => ({ ...match }));
    const last = firstSeventy[69];
    if (last !== undefined) last.truncatedAfter = true;
    expect(await tool.execute({ pattern: "needle", maxMatches: 70 })).toEqual(firstSeventy);
    expect(commands).toHaveLength(1);
    expect(commands[0]).not.toContain("--sort=path");
    // 80 matches and 39 blank lines do not fit in `head -n 102`: a second search, in path order.
    commands.length = 0;
    const firstFifty = everything.slice(0, 50).map((match) => ({ ...match }));
    const fiftieth = firstFifty[49];
    if (fiftieth !== undefined) fiftieth.truncatedAfter = true;
    expect(await tool.execute({ pattern: "needle", maxMatches: 50 })).toEqual(firstFifty);
    expect(commands).toHaveLength(2);
    expect(commands[1]).toContain("--sort=path");
  });

  it("with rg, skips the warning ripgrep prints about a file it found binary after a match", async () => {
    await plant({
      "a.txt": "needle in a\n",
      // The NUL byte lies beyond ripgrep's first read: it has printed a match when it sees it.
      "late.bin": Buffer.concat([
        Buffer.from("needle early\n"),
        Buffer.alloc(200_000, "x"),
        Buffer.from("\nneedle late\n\0\nneedle after the NUL\n"),
      ]),
      "m.txt": "needle in m\n",
      "z.txt": "needle in z\n",
    });
    const tool = await searchTool("rg");
    const match = (path: string, snippet: string) => ({ path, line: 1, snippet });
    // ripgrep prints `./late.bin: WARNING: stopped searching binary file after match (...)` on a
    // line of its own: neither a match nor part of the next file's path.
    expect(await tool.execute({ pattern: "needle" })).toEqual([
      match("a.txt", "needle in a"),
      match("late.bin", "needle early"),
      match("m.txt", "needle in m"),
      match("z.txt", "needle in z"),
    ]);
    // The first search's 8 lines (4 matches, the warning, 3 blank lines) are cut at 8: the search
    // in path order prints records, the warning among them, and is cut after 4 lines.
    expect(await tool.execute({ pattern: "needle", maxMatches: 3 })).toEqual([
      match("a.txt", "needle in a"),
      match("late.bin", "needle early"),
      { ...match("m.txt", "needle in m"), truncatedAfter: true },
    ]);
  });

  it("keeps the first cut when the search in path order runs out of time", async () => {
    // Eight files of one match: with their blank separators, 15 lines, more than the first
    // search's `head -n 6` lets through.
    await plant(Object.fromEntries([..."abcdefgh"].map((name) => [`${name}.txt`, "needle\n"])));
    const { client, commands } = await recordingClient({
      answer: (command, result) =>
        command.includes("--sort=path") ? { ...result, timedOut: true } : result,
    });
    const found = await createSearchFilesTool(client, { searchBackend: "rg" }).execute({
      pattern: "needle",
      maxMatches: 2,
    });
    expect(commands).toHaveLength(2);
    expect(found).toHaveLength(2);
    expect(found[1]?.truncatedAfter).toBe(true);
  });

  it("with auto and no rg on PATH, searches with grep, and cuts without a second search", async () => {
    git(root, "init", "-q");
    await plant({ ".gitignore": "*.log\n", "build.log": "needle\n", "a.txt": "needle\n" });
    const { dir: bin, cleanup: removeBin } = await makeTempDir("pleach-bin-");
    for (const program of ["grep", "cut", "head"]) {
      await symlink(
        execFileSync("which", [program], { encoding: "utf8" }).trim(),
        path.join(bin, program),
      );
    }
    const savedPath = process.env.PATH;
    process.env.PATH = bin;
    try {
      const tool = await searchTool("auto");
      expect((await tool.execute({ pattern: "needle" })).map((match) => match.path)).toEqual([
        "a.txt",
        "build.log",
      ]);
      const cut = await tool.execute({ pattern: "needle", maxMatches: 1 });
      expect(cut).toHaveLength(1);
      expect(cut[0]?.truncatedAfter).toBe(true);
      const failure = await tool.execute({ pattern: "(unclosed" }).catch((error: unknown) => error);
      expect(failure).toMatchObject({ code: "INVALID_INPUT" });
      expect(String(failure)).not.toContain("pleach-search-backend");
    } finally {
      process.env.PATH = savedPath;
      await removeBin();
    }
  });

  it("probes for rg and finds the same matches as either backend", async () => {
    await plant({ "a.txt": "needle\n", "sub/b.txt": "x needle\n" });
    const auto = await (await searchTool("auto")).execute({ pattern: "needle" });
    expect(auto).toEqual(await (await searchTool("rg")).execute({ pattern: "needle" }));
    expect(auto).toEqual(await (await searchTool("grep")).execute({ pattern: "needle" }));
  });

  it("with rg, skips files ignored by .gitignore (grep does not know .gitignore)", async () => {
    git(root, "init", "-q");
    await plant({ ".gitignore": "*.log\n", "build.log": "needle\n", "a.txt": "needle\n" });
    const rg = await (await searchTool("rg")).execute({ pattern: "needle" });
    expect(rg.map((match) => match.path)).toEqual(["a.txt"]);
    const grep = await (await searchTool("grep")).execute({ pattern: "needle" });
    expect(grep.map((match) => match.path)).toEqual(["a.txt", "build.log"]);
  });

  it("refuses patterns that span lines, before running anything", async () => {
    const tool = await searchTool();
    await expect(tool.execute({ pattern: "a\nb" })).rejects.toMatchObject({
      code: "INVALID_INPUT",
    });
    await expect(tool.execute({ pattern: "a\0b" })).rejects.toMatchObject({
      code: "INVALID_INPUT",
    });
  });

  it("takes an absolute path inside the workspace, as read_file does", async () => {
    await plant({ "a.txt": "needle\n", "sub/b.txt": "needle\n" });
    const tool = await searchTool();
    const relative = await tool.execute({ pattern: "needle", path: "sub" });
    expect(relative.map((match) => match.path)).toEqual(["sub/b.txt"]);
    expect(await tool.execute({ pattern: "needle", path: path.join(root, "sub") })).toEqual(
      relative,
    );
    expect(await tool.execute({ pattern: "needle", path: `${root}/` })).toEqual(
      await tool.execute({ pattern: "needle" }),
    );
  });

  it("refuses a path outside the workspace (relative or absolute), a file, a missing folder", async () => {
    await plant({ "a.txt": "needle\n" });
    const tool = await searchTool();
    await expect(tool.execute({ pattern: "x", path: "../" })).rejects.toMatchObject({
      code: "PATH_ESCAPE",
    });
    await expect(tool.execute({ pattern: "x", path: "/etc" })).rejects.toMatchObject({
      code: "PATH_ESCAPE",
    });
    await expect(tool.execute({ pattern: "x", path: `${root}/..` })).rejects.toMatchObject({
      code: "PATH_ESCAPE",
    });
    await expect(tool.execute({ pattern: "x", path: "a.txt" })).rejects.toMatchObject({
      code: "NOT_A_DIRECTORY",
    });
    await expect(tool.execute({ pattern: "x", path: "missing" })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
    const { dir: outside, cleanup: removeOutside } = await makeTempDir("pleach-outside-");
    await writeFile(path.join(outside, "secret.txt"), "needle\n");
    await symlink(outside, path.join(root, "out"));
    await expect(tool.execute({ pattern: "needle", path: "out" })).rejects.toMatchObject({
      code: "PATH_ESCAPE",
    });
    await removeOutside();
  });

  it("in read-only mode, searches under the OS sandbox or refuses without one", async () => {
    await plant({ "a.txt": "needle\n" });
    const client = await createLocalSandbox({ root, mode: "read-only" });
    const search = createSearchFilesTool(client).execute({ pattern: "needle" });
    if (client.backend === "none") {
      await expect(search).rejects.toMatchObject({ code: "NO_SANDBOX" });
    } else {
      expect(await search).toEqual([{ path: "a.txt", line: 1, snippet: "needle" }]);
    }
  });

  it("shows the model a strict input schema", async () => {
    const schema = toolInputJSONSchema(await searchTool()) as {
      required?: string[];
      additionalProperties?: boolean;
    };
    expect(schema.required).toEqual(["pattern"]);
    expect(schema.additionalProperties).toBe(false);
  });
});
