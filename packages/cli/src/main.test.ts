import { execFile, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { createCodingAgentTools } from "@pleach/coding-agent/tools";
import { defineTool, runToolCall, ToolError } from "@pleach/core";
import { makeTempDir } from "@pleach/core/testing";
import { createLocalSandbox } from "@pleach/sandbox";
import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { counted } from "./cli-support.js";
import { callCommand } from "./commands/call.js";
import { COMMANDS } from "./main.js";
import { startProgress } from "./progress.js";
import { runCli } from "./test-support/run-cli.js";

const launcher = path.resolve(import.meta.dirname, "../bin/pleach.js");

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

  it("exits once it has printed, also after a write that starts the syntax check's worker", async () => {
    // The worker thread is the process's own: it must never keep `pleach call` from exiting.
    const root = await workspace();
    const started = promisify(execFile)(
      process.execPath,
      [launcher, "call", "write_file", '{"path":"b.json","content":"{}\\n"}', "--workspace", root],
      { timeout: 20_000 },
    );
    const { stdout } = await started;
    expect(JSON.parse(stdout)).toMatchObject({ bytesWritten: 3, path: "b.json" });
    expect(started.child.exitCode).toBe(0);
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

  it("runs a 200 KiB command with bash, and refuses one over 1 MiB with INVALID_INPUT", async () => {
    const root = await workspace();
    const long = `: ${"x".repeat(200 * 1024)}\necho long ok`;
    const result = await run(["call", "bash", JSON.stringify({ command: long })], { cwd: root });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ exitCode: 0, output: "long ok\n" });
    const tooLong = `: ${"x".repeat(1024 * 1024)}`;
    const refused = await run(["call", "bash", JSON.stringify({ command: tooLong })], {
      cwd: root,
    });
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stdout).error.code).toBe("INVALID_INPUT");
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

  it("prints with --text what a model sees of a result over 50,000 characters, capped the same", async () => {
    const root = await workspace();
    await mkdir(path.join(root, "many"));
    for (let index = 0; index < 3_000; index += 1) {
      await writeFile(path.join(root, "many", `file-number-${index}.txt`), "");
    }
    const input = { dir: "many" };
    const json = await run(["call", "list_files", JSON.stringify(input)], { cwd: root });
    expect(JSON.parse(json.stdout)).toHaveLength(3_000);
    const text = await run(["call", "list_files", JSON.stringify(input), "--text"], { cwd: root });
    expect(text.code).toBe(0);
    // The runtime's rendering of the same call: the one cap every face applies.
    const tools = createCodingAgentTools(await createLocalSandbox({ root }));
    const seen = await runToolCall({ tools, name: "list_files", input });
    expect(seen.output.length).toBeLessThanOrEqual(50_000);
    expect(seen.output).toMatch(
      /\[\.\.\. [\d,]+ characters cut from the middle of this output \.\.\.\]/,
    );
    expect(text.stdout).toBe(`${seen.output}\n`);
  });

  it("caps an error's text with --text too", async () => {
    const root = await workspace();
    const huge = defineTool({
      name: "huge_error",
      description: "Fails with a long message.",
      inputSchema: z.object({}),
      outputSchema: z.object({}),
      execute: async () => {
        throw new ToolError("COMMAND_FAILED", `start ${"x".repeat(80_000)} end`);
      },
    });
    let stdout = "";
    const code = await callCommand({
      args: ["huge_error", "{}", "--text"],
      io: {
        stdout: (text) => {
          stdout += text;
        },
        stderr() {},
        readStdin: async () => undefined,
        cwd: root,
      },
      extraTools: [{ name: "huge_error", create: () => huge }],
    });
    expect(code).toBe(1);
    const seen = await runToolCall({ tools: [huge], name: "huge_error", input: {} });
    expect(seen.output.length).toBeLessThanOrEqual(50_000);
    expect(stdout).toBe(`${seen.output}\n`);
    expect(stdout).toMatch(/^start x+\n\n\[\.\.\. [\d,]+ characters cut/);
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
    for (const port of ["0", "65536", "3000x", ""]) {
      expect(await run(["mcp", "--publish", port])).toMatchObject({
        code: 2,
        stderr: expect.stringContaining(
          `--publish takes a TCP port from 1 to 65535, got ${JSON.stringify(port)}`,
        ),
      });
    }
    expect(await run(["mcp", "--mode", "yolo"])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("--mode must be one of"),
    });
  });

  it("says how many tools it serves, in agreement: 1 tool", async () => {
    const root = await workspace();
    // stdin is /dev/null: it ends at once, which ends the server.
    const child = spawn(
      process.execPath,
      [launcher, "mcp", "--tools", "read_file", "--workspace", root],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    expect(await new Promise((resolve) => child.once("close", resolve))).toBe(0);
    expect(stderr).toContain(`pleach mcp: serving 1 tool on ${root} (workspace-write) over stdio`);
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

describe("help", () => {
  it("lists every option each command parses, in its help, its usage, pleach help and docs/cli.md", async () => {
    const overview = (await run(["help"])).stdout;
    const readme = await readFile(
      path.resolve(import.meta.dirname, "../../../docs/cli.md"),
      "utf8",
    );
    for (const [name, { usage, help, options }] of Object.entries(COMMANDS)) {
      const flags = Object.keys(options).map((option) => `--${option}`);
      // The Options section: one line per option, starting with it.
      const listed = help
        .split("\n")
        .filter((line) => /^ {2}-/.test(line))
        .map((line) => /--[\w-]+/.exec(line)?.[0]);
      expect(listed.sort(), `pleach ${name} --help`).toEqual([...flags].sort());
      for (const [option, { short }] of Object.entries(options)) {
        if (short !== undefined) expect(help).toContain(`-${short}, --${option}`);
      }
      const inUsage = new Set([...usage.matchAll(/--[\w-]+/g)].map((match) => match[0]));
      expect(inUsage, `the usage of ${name}`).toEqual(
        new Set(flags.filter((flag) => flag !== "--help")),
      );
      expect(help.startsWith(`Usage: ${usage}\n`)).toBe(true);
      expect(overview).toContain(`  ${usage.replaceAll("\n", "\n  ")}\n`);
      expect(readme).toContain(`${usage}\n`);
      expect((await run([name, "--help"])).stdout).toBe(help);
      expect((await run(["help", name])).stdout).toBe(help);
    }
    expect(overview).toContain(
      "pleach call <tool> ['<json>'] [--workspace DIR] [--mode MODE] [--network]",
    );
    expect(await run(["help", "constructor"])).toMatchObject({ code: 2 });
  });
});

describe("counts", () => {
  it("agree in number with their noun", () => {
    expect(counted(1, "step")).toBe("1 step");
    expect(counted(0, "tool call")).toBe("0 tool calls");
    expect(counted(2, "tool call")).toBe("2 tool calls");
    expect(counted(12_345, "token")).toBe("12,345 tokens");
    expect(counted(1, "match", "matches")).toBe("1 match");
    expect(counted(3, "match", "matches")).toBe("3 matches");
  });
});

/**
 * Run the built CLI with one of its output streams read until `lines` lines have come (0: closed
 * at once, before it writes), then closed, as `| head -n` does; the exit code and the rest.
 */
function runWithClosedOutput(
  args: readonly string[],
  {
    stream = "stdout",
    lines = 0,
    cwd = process.cwd(),
  }: { stream?: "stdout" | "stderr"; lines?: number; cwd?: string } = {},
): Promise<{ code: number | null; read: string; other: string }> {
  const child = spawn(process.execPath, [launcher, ...args], {
    cwd,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const closing = child[stream];
  const other = stream === "stdout" ? child.stderr : child.stdout;
  let read = "";
  let rest = "";
  if (lines === 0) closing.destroy();
  else {
    closing.on("data", (chunk: Buffer) => {
      read += chunk.toString();
      if (read.split("\n").length > lines) closing.destroy();
    });
  }
  other.on("data", (chunk: Buffer) => {
    rest += chunk.toString();
  });
  return new Promise((resolve) =>
    child.once("close", (code) => resolve({ code, read, other: rest })),
  );
}

describe("a closed pipe", () => {
  it("ends every command quietly with 141, as SIGPIPE would", async () => {
    for (const args of [
      ["tools"],
      ["tools", "--json"],
      ["help"],
      ["call", "--help"],
      ["--version"],
    ]) {
      const { code, other } = await runWithClosedOutput(args);
      expect({ args, code, stderr: other }).toEqual({ args, code: 141, stderr: "" });
    }
    // stderr closed: a usage error has nowhere to go, and ends the same way.
    const usage = await runWithClosedOutput(["call", "nope"], { stream: "stderr" });
    expect(usage).toMatchObject({ code: 141, other: "" });
  });

  it("ends a call whose output is larger than the pipe once the reader has its first line", async () => {
    const root = await workspace();
    await mkdir(path.join(root, "many"));
    for (let index = 0; index < 3_000; index += 1) {
      await writeFile(path.join(root, "many", `file-number-${index}.txt`), "");
    }
    // About 200 KB of JSON, more than a pipe holds, so the write meets the closed end.
    const { code, read, other } = await runWithClosedOutput(
      ["call", "list_files", '{"dir": "many"}'],
      { lines: 1, cwd: root },
    );
    expect(read.startsWith("[\n")).toBe(true);
    expect({ code, stderr: other }).toEqual({ code: 141, stderr: "" });
  });

  it("stops the demo mid-run and removes its temporary copy", async () => {
    const { code, read, other } = await runWithClosedOutput(["demo"], { lines: 2 });
    expect({ code, stderr: other }).toEqual({ code: 141, stderr: "" });
    const copy = /^workspace: (\S+) /m.exec(read)?.[1];
    expect(copy).toMatch(/pleach-demo-/);
    expect(existsSync(copy as string)).toBe(false);
  }, 30_000);
});

describe("pleach tools", () => {
  it("lists the fourteen tools with their input schemas, the job tools included", async () => {
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
      "job_input",
      "job_kill",
      "job_list",
      "job_output",
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
    const { stdout } = await promisify(execFile)(process.execPath, [launcher, "--version"]);
    expect(stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });
});
