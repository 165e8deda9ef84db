// deepagents' sandbox backend over a pleach client, checked the way deepagents' own standard suite
// for sandbox backends (@langchain/sandbox-standard-tests, which is not on the npm registry) checks
// a backend: commands, the three primitives, and the file operations deepagents builds on them.
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { createLocalSandbox } from "@pleach/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTempDir } from "../testing/temp-dir.js";
import { PleachDeepAgentsSandbox } from "./deepagents.js";

let root: string;
let sandbox: PleachDeepAgentsSandbox;
let cleanup: () => Promise<void>;
/** deepagents works with absolute paths: the workspace's own. */
const at = (relative: string) => path.join(root, relative);

beforeAll(async () => {
  ({ dir: root, cleanup } = await makeTempDir("pleach-deepagents-"));
  sandbox = new PleachDeepAgentsSandbox(await createLocalSandbox({ root }));
});
afterAll(() => cleanup());

describe("execute", () => {
  it("returns output and exit codes, stderr included, and says when a command is missing", async () => {
    expect(await sandbox.execute("echo hello")).toEqual({
      output: "hello\n",
      exitCode: 0,
      truncated: false,
    });
    expect(await sandbox.execute("printf 'a\\nb\\nc'")).toMatchObject({ output: "a\nb\nc" });
    expect(await sandbox.execute("echo out; echo err >&2; exit 7")).toEqual({
      output: "out\nerr\n",
      exitCode: 7,
      truncated: false,
    });
    expect(await sandbox.execute("GREETING=hi sh -c 'echo $GREETING'")).toMatchObject({
      output: "hi\n",
    });
    const missing = await sandbox.execute("no-such-command-here");
    expect(missing.exitCode).toBe(127);
    expect(missing.output).toMatch(/not found/);
  });

  it("marks output cut to its bound as truncated", async () => {
    const small = new PleachDeepAgentsSandbox(await createLocalSandbox({ root }), {
      maxOutputBytes: 1000,
    });
    const result = await small.execute("head -c 100000 /dev/zero | tr '\\0' x");
    expect(result.truncated).toBe(true);
    expect(result.output.length).toBeLessThan(5000);
  });
});

describe("uploadFiles and downloadFiles", () => {
  it("round-trips every byte value exactly", async () => {
    const bytes = new Uint8Array(256 * 4).map((_, index) => index % 256);
    expect(await sandbox.uploadFiles([[at("bin/all.bytes"), bytes]])).toEqual([
      { path: at("bin/all.bytes"), error: null },
    ]);
    const [download] = await sandbox.downloadFiles([at("bin/all.bytes")]);
    expect(download?.error).toBeNull();
    expect(download?.content).toEqual(bytes);
  });

  it("answers each file on its own: a missing file, a folder, a path outside the workspace", async () => {
    await mkdir(at("folder"), { recursive: true });
    await writeFile(at("ok.txt"), "ok");
    const downloads = await sandbox.downloadFiles([
      at("ok.txt"),
      at("absent.txt"),
      at("folder"),
      "/etc/hostname",
    ]);
    expect(downloads.map(({ path: file, error }) => [file, error])).toEqual([
      [at("ok.txt"), null],
      [at("absent.txt"), "file_not_found"],
      [at("folder"), "is_directory"],
      ["/etc/hostname", "invalid_path"],
    ]);
    const uploads = await sandbox.uploadFiles([
      [at("fine.txt"), new TextEncoder().encode("fine")],
      ["/etc/pleach-should-not-exist", new TextEncoder().encode("no")],
      [at(".git/config"), new TextEncoder().encode("no")],
    ]);
    expect(uploads.map(({ error }) => error)).toEqual([null, "invalid_path", "permission_denied"]);
  });
});

describe("the file operations deepagents builds on them", () => {
  it("writes new files (parents made), overwrites, and keeps special characters and unicode", async () => {
    expect(await sandbox.write(at("deep/er/new.txt"), "first")).toMatchObject({
      path: at("deep/er/new.txt"),
    });
    expect((await sandbox.write(at("deep/er/new.txt"), "again")).error).toBeUndefined();
    expect(String((await sandbox.read(at("deep/er/new.txt"))).content)).toContain("again");
    const special = "quotes ' \" $HOME `ls` \\ and 日本語 ✓\n".repeat(200);
    await sandbox.write(at("special.txt"), special);
    expect(await sandbox.read(at("special.txt"), 0, 1)).toMatchObject({
      content: expect.stringContaining("quotes ' \" $HOME `ls` \\ and 日本語 ✓"),
    });
    const [download] = await sandbox.downloadFiles([at("special.txt")]);
    expect(new TextDecoder().decode(download?.content ?? new Uint8Array())).toBe(special);
  });

  it("reads with offset and limit, and says so for a missing file", async () => {
    await sandbox.write(at("lines.txt"), "l1\nl2\nl3\nl4\nl5\n");
    const read = await sandbox.read(at("lines.txt"), 1, 2);
    expect(read.error).toBeUndefined();
    expect(String(read.content)).toContain("l2");
    expect(String(read.content)).toContain("l3");
    expect(String(read.content)).not.toContain("l4");
    expect((await sandbox.read(at("nothing.txt"))).error).toMatch(/not found|nothing\.txt/i);
  });

  it("edits one occurrence, refuses several without replaceAll, replaces all with it", async () => {
    await sandbox.write(at("edit.txt"), "alpha beta alpha\nünïcode\n");
    expect((await sandbox.edit(at("edit.txt"), "beta", "BETA")).error).toBeUndefined();
    expect((await sandbox.edit(at("edit.txt"), "alpha", "A")).error).toBeTruthy();
    expect(await sandbox.edit(at("edit.txt"), "alpha", "A", true)).toMatchObject({
      occurrences: 2,
    });
    expect((await sandbox.edit(at("edit.txt"), "absent", "x")).error).toBeTruthy();
    expect(await sandbox.edit(at("edit.txt"), "ünïcode\n", "multi\nline\n")).toMatchObject({
      occurrences: 1,
    });
    const [download] = await sandbox.downloadFiles([at("edit.txt")]);
    expect(new TextDecoder().decode(download?.content ?? new Uint8Array())).toBe(
      "A BETA A\nmulti\nline\n",
    );
  });

  it("lists a folder (hidden files included, an empty one empty), greps and globs", async () => {
    await sandbox.write(at("tree/a.ts"), "export const needle = 1;\n");
    await sandbox.write(at("tree/sub/b.ts"), "// needle here\n");
    await sandbox.write(at("tree/sub/c.md"), "needle in markdown\n");
    await sandbox.write(at("tree/.hidden"), "x");
    await mkdir(at("empty"), { recursive: true });
    const listed = await sandbox.ls(at("tree"));
    expect(
      listed.files?.map((file) => [path.basename(file.path), file.is_dir ?? false]).sort(),
    ).toEqual([
      [".hidden", false],
      ["a.ts", false],
      ["sub", true],
    ]);
    expect((await sandbox.ls(at("empty"))).files).toEqual([]);
    const grep = await sandbox.grep("needle", at("tree"), "*.ts");
    expect(grep.matches?.map((match) => path.relative(root, match.path)).sort()).toEqual([
      "tree/a.ts",
      "tree/sub/b.ts",
    ]);
    expect(grep.matches?.find((match) => match.path.endsWith("a.ts"))).toMatchObject({ line: 1 });
    // Glob's paths are relative to where it searched.
    const glob = await sandbox.glob("**/*.ts", at("tree"));
    expect(glob.files?.map((file) => file.path).sort()).toEqual(["a.ts", "sub/b.ts"]);
    expect((await sandbox.glob("*.md", at("tree/sub"))).files?.length).toBe(1);
  });

  it("deletes a file, and says so for one that is not there", async () => {
    await sandbox.write(at("gone.txt"), "bye");
    expect((await sandbox.delete(at("gone.txt"))).error).toBeUndefined();
    expect((await sandbox.downloadFiles([at("gone.txt")]))[0]?.error).toBe("file_not_found");
    expect((await sandbox.delete(at("gone.txt"))).error).toBeTruthy();
  });
});
