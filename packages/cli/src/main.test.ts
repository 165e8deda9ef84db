import { execFile } from "node:child_process";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { makeTempDir } from "@pleach/core/testing";
import { afterEach, describe, expect, it, vi } from "vitest";
import { startProgress } from "./progress.js";
import { runCli } from "./test-support/run-cli.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function workspace(): Promise<string> {
  const temp = await makeTempDir("pleach-cli-");
  cleanups.push(temp.cleanup);
  return temp.dir;
}

const run = runCli;

describe("pleach call", () => {
  it("runs a tool on the current folder and prints JSON", async () => {
    const root = await workspace();
    await writeFile(path.join(root, "hello.txt"), "hi there\n");
    const result = await run(["call", "read_file", '{"path":"hello.txt"}'], { cwd: root });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ content: "hi there\n", bytes: 9 });
  });

  it("reads the input from stdin and honours --workspace", async () => {
    const root = await workspace();
    const result = await run(["call", "write_file", "--workspace", root], {
      stdin: '{"path":"a/b.txt","content":"xyz"}',
    });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ bytesWritten: 3 });
    const back = await run(["call", "read_file", '{"path":"a/b.txt"}', "--workspace", root]);
    expect(JSON.parse(back.stdout).content).toBe("xyz");
  });

  it("prints a tool error as JSON and exits 1", async () => {
    const root = await workspace();
    const result = await run(["call", "read_file", '{"path":"../../etc/passwd"}'], { cwd: root });
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout)).toEqual({
      error: { code: "PATH_ESCAPE", message: "path escapes the workspace: ../../etc/passwd" },
    });
  });

  it("refuses writes in read-only mode", async () => {
    const root = await workspace();
    const result = await run(
      ["call", "write_file", '{"path":"x","content":"y"}', "--mode", "read-only"],
      { cwd: root },
    );
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout).error.code).toBe("READ_ONLY");
  });

  it("says what is wrong with the command line and exits 2", async () => {
    expect(await run(["call"])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("call needs a tool name"),
    });
    expect(await run(["call", "nope", "{}"])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('unknown tool "nope"; the tools are: read_file'),
    });
    expect(await run(["call", "read_file", "{not json"])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("the input is not valid JSON"),
    });
    expect(await run(["call", "read_file", "{}", "--mode", "yolo"])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("--mode must be one of"),
    });
    expect(await run(["frobnicate"])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("unknown command"),
    });
  });

  it("reports bad tool input with each wrong field", async () => {
    const root = await workspace();
    const result = await run(["call", "read_file", '{"path": 5}'], { cwd: root });
    expect(result.code).toBe(1);
    const { error } = JSON.parse(result.stdout);
    expect(error.code).toBe("INVALID_INPUT");
    expect(error.message).toContain("- path:");
  });

  it("prints what a model sees with --text", async () => {
    const root = await workspace();
    await writeFile(path.join(root, "note.md"), "# note\n");
    const result = await run(["call", "read_file", '{"path":"note.md"}', "--text"], { cwd: root });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("# note");
  });

  it("has help for every command", async () => {
    for (const argv of [
      ["--help"],
      ["help"],
      ["call", "--help"],
      ["tools", "--help"],
      ["mcp", "--help"],
      ["mcp", "-h"],
      ["help", "call"],
      ["help", "mcp"],
    ]) {
      const result = await run(argv);
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/Usage:/);
    }
  });
});

describe("pleach mcp", () => {
  it("refuses a wrong command line before serving, pointing at its help", async () => {
    expect(await run(["mcp", "--tools", "read_file,nope"])).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/unknown tool "nope".*\n.*pleach mcp --help/),
    });
    expect(await run(["mcp", "--http", "localhost"])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("--http takes PORT or HOST:PORT"),
    });
    expect(await run(["mcp", "--mode", "yolo"])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("--mode must be one of"),
    });
  });

  it("refuses to serve HTTP without a bearer token and says how to give one", async () => {
    const result = await run(["mcp", "--http", "0"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      "--http needs a bearer token of at least 16 characters without whitespace: pass --token-file FILE or set PLEACH_MCP_TOKEN",
    );
    const missing = await run(["mcp", "--http", "0", "--token-file", "/nonexistent/token"]);
    expect(missing).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("cannot read --token-file"),
    });
  });
});

describe("progress on stderr", () => {
  it("shows the elapsed time of a long call only when stderr is a terminal", () => {
    vi.useFakeTimers();
    try {
      let terminal = "";
      const tty = startProgress({
        label: "git_clone",
        io: {
          stdout() {},
          stderr: (text) => {
            terminal += text;
          },
          readStdin: async () => undefined,
          cwd: "/",
          stderrIsTTY: true,
        },
      });
      vi.advanceTimersByTime(2500);
      tty.stop();
      expect(terminal).toContain("pleach: git_clone running… 2s");
      expect(terminal.endsWith("\r\x1b[2K")).toBe(true);

      let piped = "";
      const pipe = startProgress({
        label: "git_clone",
        io: {
          stdout() {},
          stderr: (text) => {
            piped += text;
          },
          readStdin: async () => undefined,
          cwd: "/",
        },
      });
      vi.advanceTimersByTime(5000);
      pipe.stop();
      expect(piped).toBe("");
    } finally {
      vi.useRealTimers();
    }
  });
});

describe("pleach tools", () => {
  it("lists the ten tools with their input schemas", async () => {
    const result = await run(["tools", "--json"]);
    expect(result.code).toBe(0);
    const tools = JSON.parse(result.stdout) as Array<{
      name: string;
      inputSchema: { type: string };
    }>;
    expect(tools.map((tool) => tool.name).sort()).toEqual([
      "apply_diff",
      "bash",
      "edit_file",
      "git_clone",
      "git_diff",
      "list_files",
      "read_file",
      "run_tests",
      "search_files",
      "write_file",
    ]);
    for (const tool of tools) expect(tool.inputSchema.type).toBe("object");
  });
});

describe("the pleach bin", () => {
  it("runs through the committed launcher after a build", async () => {
    const launcher = path.resolve(import.meta.dirname, "../bin/pleach.js");
    const { stdout } = await promisify(execFile)(process.execPath, [launcher, "--version"]);
    expect(stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });
});
