// Text from a dataset, a repository or a model never reaches the terminal as control bytes.
import { execFile } from "node:child_process";
import { mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { makeTempDir } from "@pleach/core/testing";
import { afterEach, describe, expect, it } from "vitest";
import { sandboxVisibleTempParent } from "../eval/mini-dataset.js";
import type { EvalReport } from "../eval/report.js";
import { fakeChatServer } from "../test-support/fake-chat-server.js";
import { runCli } from "../test-support/run-cli.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** A clipboard write (OSC 52), a window title (OSC 0), a line clear (CSI 2K) and a bare CR. */
const HOSTILE = "\x1b]52;c;cHduZWQ=\x07\x1b]0;pwned\x07\x1b[2K\rspoofed";
const SHOWN = "\\u001b]52;c;cHduZWQ=\\u0007\\u001b]0;pwned\\u0007\\u001b[2K\\rspoofed";

/** Whether `text` could drive a terminal: an ESC, a BEL, a C1 control or a CR not before LF. */
function drivesTerminal(text: string): boolean {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control bytes are what it finds.
  return /[\x1b\x07\x80-\x9f]|\r(?!\n)/.test(text);
}

async function workspace(files: Record<string, string>): Promise<string> {
  const temp = await makeTempDir("pleach-terminal-");
  cleanups.push(temp.cleanup);
  for (const [name, content] of Object.entries(files)) {
    await writeFile(path.join(temp.dir, name), content);
  }
  return temp.dir;
}

describe("pleach eval output", () => {
  it("shows an instance id and error text carrying escape sequences as visible text", async () => {
    // The repository must be visible inside the sandbox, which has a private /tmp.
    const repo = await realpath(
      await mkdtemp(path.join(await sandboxVisibleTempParent(), "pleach-terminal-repo-")),
    );
    cleanups.push(() => rm(repo, { recursive: true, force: true }));
    const git = (...args: string[]) =>
      promisify(execFile)("git", args, {
        cwd: repo,
        env: {
          ...process.env,
          GIT_AUTHOR_NAME: "t",
          GIT_AUTHOR_EMAIL: "t@example.invalid",
          GIT_COMMITTER_NAME: "t",
          GIT_COMMITTER_EMAIL: "t@example.invalid",
        },
      });
    await writeFile(path.join(repo, "a.txt"), "a\n");
    await git("init", "--quiet");
    await git("add", "a.txt");
    await git("commit", "--quiet", "--message", "one");
    const dataset = await workspace({});
    const file = path.join(dataset, "instances.jsonl");
    // The checkout of this base commit fails, and git's error quotes it.
    await writeFile(
      file,
      `${JSON.stringify({
        instance_id: `id-${HOSTILE}`,
        repo: pathToFileURL(repo).href,
        base_commit: `c-${HOSTILE}`,
        problem_statement: "x",
        test_patch: "",
        FAIL_TO_PASS: ["a"],
        test_command: "true",
      })}\n`,
    );

    const table = await runCli(["eval", file, "--model", "empty", "--concurrency", "1"]);
    expect(table.code).toBe(1);
    for (const text of [table.stdout, table.stderr]) {
      expect(drivesTerminal(text)).toBe(false);
      expect(text).toContain(`id-${SHOWN}`);
    }
    expect(table.stdout).toContain(`c-${SHOWN}`);
    expect(table.stderr).toMatch(/\[1\/1\] id-.* error \(Command failed: git checkout/);

    const json = await runCli(["eval", file, "--model", "empty", "--json"]);
    expect(drivesTerminal(json.stdout)).toBe(false);
    // Escaped the JSON way, the report still parses to the dataset's own text.
    const report = JSON.parse(json.stdout) as EvalReport;
    expect(report.instances[0]?.instance_id).toBe(`id-${HOSTILE}`);
    expect(report.instances[0]?.error).toContain(`c-${HOSTILE}`);
  });
});

describe("pleach call output", () => {
  it("shows a file's escape sequences as visible text, with --text and as JSON", async () => {
    const root = await workspace({ "evil.txt": `line one\n${HOSTILE}\nline three\r\n` });
    const text = await runCli(["call", "read_file", '{"path": "evil.txt"}', "--text"], {
      cwd: root,
    });
    expect(text.code).toBe(0);
    expect(drivesTerminal(text.stdout)).toBe(false);
    expect(text.stdout).toBe(`line one\n${SHOWN}\nline three\r\n\n`);

    const json = await runCli(["call", "read_file", '{"path": "evil.txt"}'], { cwd: root });
    expect(drivesTerminal(json.stdout)).toBe(false);
    expect(JSON.parse(json.stdout).content).toBe(`line one\n${HOSTILE}\nline three\r\n`);
  });
});

describe("pleach run output", () => {
  it("shows what the model and the tools said with their escape sequences visible", async () => {
    const root = await workspace({ "evil.txt": `${HOSTILE}\n` });
    const replies = [
      {
        content: `Reading ${HOSTILE}`,
        tool_calls: [
          { name: "read_file", arguments: { path: "evil.txt" } },
          { name: `tool${HOSTILE}`, arguments: { note: HOSTILE } },
        ],
      },
      { content: `Done ${HOSTILE}\nsecond line` },
    ];
    const { port } = await fakeChatServer(replies);
    const model = ["--model", `http://127.0.0.1:${port}/v1`, "--workspace", root];

    const run = await runCli(["run", "look", ...model]);
    expect(run.code).toBe(0);
    for (const output of [run.stdout, run.stderr]) expect(drivesTerminal(output)).toBe(false);
    expect(run.stdout).toContain(`model: Reading ${SHOWN}`);
    expect(run.stdout).toContain(`← ok: ${SHOWN}`);
    expect(run.stdout).toContain(`→ tool${SHOWN} `);
    expect(run.stdout).toContain(`\nDone ${SHOWN}\nsecond line\n`);
  });
});
