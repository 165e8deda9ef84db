import { mkdir, readFile } from "node:fs/promises";
import path from "node:path";
import { type SandboxMode, type ToolContext, toToolDef } from "@pleach/core";
import { makeTempDir } from "@pleach/core/testing";
import { createCommandWrapper, createLocalSandbox } from "@pleach/sandbox";
import { afterEach, describe, expect, it } from "vitest";
import { createEditFileTool } from "../edit-file/tool.js";
import { createReadFileTool } from "../read-file/tool.js";
import { createWriteFileTool } from "../write-file/tool.js";
import { type BashToolOptions, createBashTool } from "./tool.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function workspace() {
  const temp = await makeTempDir();
  cleanups.push(temp.cleanup);
  return temp.dir;
}

// Commands run unconfined until the OS sandbox lands, which only danger-full-access allows.
async function setup(options: BashToolOptions = {}) {
  const root = await workspace();
  const client = await createLocalSandbox({ root, mode: "danger-full-access" });
  return { root, client, tool: createBashTool(client, options) };
}

describe("bash", () => {
  it("runs a command in the workspace and returns what it printed", async () => {
    const { root, tool } = await setup();
    const output = await tool.execute({ command: "echo héllo ✓; pwd" });
    expect(output).toMatchObject({
      output: `héllo ✓\n${root}\n`,
      exitCode: 0,
      timedOut: false,
      truncated: false,
    });
    expect(output.signal).toBeUndefined();
    expect(tool.toModelOutput(output)).toEqual({ output: `héllo ✓\n${root}\n`, error: false });
  });

  it("merges stdout then stderr and appends the exit code on failure", async () => {
    const { tool } = await setup();
    const output = await tool.execute({
      command: "echo to-stderr >&2; printf 'to-stdout'; exit 3",
    });
    expect(output.exitCode).toBe(3);
    expect(tool.toModelOutput(output)).toMatchInlineSnapshot(`
      {
        "error": true,
        "output": "to-stdout
      to-stderr
      [exit 3]",
      }
    `);
    expect((await tool.execute({ command: "exit 1" })).output).toBe("[exit 1]");
  });

  it("shows the sandbox's note on the network switch when a failed command could not resolve a host", async () => {
    const root = await workspace();
    const tool = createBashTool(await createLocalSandbox({ root, mode: "workspace-write" }));
    // `.invalid` never resolves, network or not.
    const output = await tool.execute({ command: "git ls-remote https://example.invalid/x.git" });
    expect(output.exitCode).not.toBe(0);
    expect(output.output).toMatch(
      /Could not resolve host: example\.invalid\n\[exit 128\]\n\[sandbox: the network is off /,
    );
    expect(tool.toModelOutput(output).output).toContain("`--network`");
    // The same words in a command that succeeds, or a failure of another kind, add nothing.
    const fine = await tool.execute({ command: "echo 'Could not resolve host: x'" });
    expect(fine.output).toBe("Could not resolve host: x\n");
    expect((await tool.execute({ command: "ls /no-such-folder" })).output).not.toContain(
      "sandbox:",
    );
  });

  it("shows the domain proxy's refusal the same way", async () => {
    const root = await workspace();
    const client = await createLocalSandbox({ root, network: { allowDomains: [] } });
    const output = await createBashTool(client).execute({
      command: "curl -sS --max-time 20 https://evil.example/",
    });
    expect(output.exitCode).not.toBe(0);
    expect(output.output).toMatch(
      /\n\[exit \d+\]\n\[pleach's sandbox refused a connection to evil\.example:443: not in the allowed domains \(none\)\. To allow it, start pleach with --allow-domain evil\.example \(or allowDomains\)\.\]$/,
    );
  });

  it("shows the sandbox's note on a write to a protected path, as the model reads it", async () => {
    const root = await workspace();
    await mkdir(path.join(root, ".git"));
    const tool = createBashTool(await createLocalSandbox({ root, mode: "workspace-write" }));
    const output = await tool.execute({ command: "echo '[core]' > .git/config" });
    expect(tool.toModelOutput(output)).toEqual({
      output:
        "/bin/bash: line 1: .git/config: Read-only file system\n[exit 1]\n" +
        "[sandbox: writing .git/config was refused: .git at the top of the workspace is protected: git runs its hooks and the commands its config names (core.fsmonitor). pleach keeps the repository's git machinery and files that make the host run code read-only for commands, and the file tools refuse them too; ask the user to make this change.]",
      error: true,
    });
  });

  it("reports a command ended by a signal", async () => {
    const { tool } = await setup();
    const output = await tool.execute({ command: "echo before; kill -KILL $$" });
    expect(output).toMatchObject({ exitCode: null, signal: "SIGKILL" });
    expect(output.output).toBe("before\n[exit signal SIGKILL]");
    expect(tool.toModelOutput(output).error).toBe(true);
  });

  it("caps 50 MB of output at 50,000 characters, keeping head and tail", async () => {
    const { tool } = await setup();
    const output = await tool.execute({
      command: "echo FIRST; head -c 52428800 /dev/zero | tr '\\0' x; echo; echo LAST; exit 2",
    });
    expect(output.truncated).toBe(true);
    expect(output.output.length).toBeLessThanOrEqual(50_000);
    expect(output.output.startsWith("FIRST\nxxx")).toBe(true);
    expect(output.output.endsWith("xxx\nLAST\n[exit 2]")).toBe(true);
    // The client's marker survives the cap, so the model learns how much really was cut.
    const cut = /\[\.\.\. ([\d,]+) bytes of stdout cut \.\.\.\]/.exec(output.output)?.[1];
    expect(Number(cut?.replaceAll(",", ""))).toBeGreaterThan(52_000_000);
  });

  it("keeps the head of stdout and the tail of stderr when both are huge", async () => {
    const { tool } = await setup();
    const output = await tool.execute({
      command:
        "echo OUT-START; seq 1 200000; echo ERR-START >&2; seq 1 200000 >&2; echo ERR-END >&2",
    });
    expect(output).toMatchObject({ exitCode: 0, truncated: true });
    expect(output.output.length).toBeLessThanOrEqual(50_000);
    expect(output.output.startsWith("OUT-START\n1\n2\n")).toBe(true);
    expect(output.output.endsWith("199999\n200000\nERR-END\n")).toBe(true);
  });

  it("kills a hanging command at its timeout and says so", async () => {
    const { tool } = await setup();
    const output = await tool.execute({ command: "echo started; sleep 30", timeout: 300 });
    expect(output.timedOut).toBe(true);
    expect(output.output.startsWith("started\n[exit ")).toBe(true);
    expect(output.output.split("\n").at(-1)).toMatchInlineSnapshot(
      `"[timed out after 300 ms and was killed; pass a larger \`timeout\` (at most 600000 ms) or make the command finish sooner]"`,
    );
    expect(tool.toModelOutput(output).error).toBe(true);
  });

  it("kills a command that waits on the network while it is off, and names the network, not a larger timeout", async () => {
    const root = await workspace();
    const tool = createBashTool(await createLocalSandbox({ root, mode: "workspace-write" }));
    // Looks a name up again and again, as npm retries its requests, printing nothing.
    const output = await tool.execute({
      command: `node -e "setInterval(() => require('dns').lookup('registry.npmjs.org', () => {}), 100)"`,
      timeout: 1_500,
    });
    expect(output.timedOut).toBe(true);
    const lines = tool.toModelOutput(output).output.split("\n");
    expect(lines[0]).toMatch(/^\[exit /);
    expect(lines.slice(1)).toEqual([
      "[timed out after 1500 ms and was killed; the network is off for commands here, which a command waiting on it never gets past (see the sandbox's note for how it is turned on); if it does not need the network, pass a larger `timeout` (at most 600000 ms) or make it finish sooner]",
      expect.stringMatching(
        /^\[sandbox: the network is off for commands here: a command that needs it .* a larger timeout will not help\. It is turned on where pleach is started: `--allow-domain HOST` .*`--network` for all; /,
      ),
    ]);
  });

  it("passes the abort signal on to the command", async () => {
    const { tool } = await setup();
    const controller = new AbortController();
    const running = tool.execute({ command: "sleep 30" }, { abortSignal: controller.signal });
    setTimeout(() => controller.abort(), 100);
    await expect(running).rejects.toMatchObject({ code: "ABORTED" });
  });

  it("runs in a workspace folder given as cwd, and refuses one outside it", async () => {
    const { root, tool } = await setup();
    await mkdir(path.join(root, "sub dir"));
    const output = await tool.execute({ command: "pwd", cwd: "sub dir" });
    expect(output.output).toBe(`${path.join(root, "sub dir")}\n`);
    await expect(tool.execute({ command: "pwd", cwd: "../" })).rejects.toMatchObject({
      code: "PATH_ESCAPE",
    });
    await expect(tool.execute({ command: "pwd", cwd: "/etc" })).rejects.toMatchObject({
      code: "PATH_ESCAPE",
    });
    await expect(tool.execute({ command: "pwd", cwd: "missing" })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
  });

  it("passes on the client's refusal to run without an OS sandbox", async () => {
    const root = await workspace();
    const client = await createLocalSandbox({
      root,
      mode: "workspace-write",
      commandWrapper: createCommandWrapper({ backend: "none" }),
    });
    const tool = createBashTool(client);
    await expect(tool.execute({ command: "touch made.txt" })).rejects.toMatchObject({
      code: "NO_SANDBOX",
    });
    const result = await toToolDef(tool).run(
      { command: "touch made.txt" },
      { cwd: root, sandbox: "workspace-write" },
    );
    expect(result).toMatchObject({ error: true, code: "NO_SANDBOX" });
    await expect(readFile(path.join(root, "made.txt"))).rejects.toThrow();
  });

  it("reports wrong input types as INVALID_INPUT", async () => {
    const { tool } = await setup();
    for (const input of [
      {},
      { command: 42 },
      { command: "" },
      { command: "true", timeout: 0 },
      { command: "true", timeout: 600_001 },
      { command: "true", timeout: "10" },
      { command: "true", cwd: 1 },
      { command: "true", env: { A: "1" } },
    ]) {
      await expect(tool.execute(input)).rejects.toMatchObject({ code: "INVALID_INPUT" });
    }
  });
});

describe("the four contracts of a tool result, through toToolDef", () => {
  async function tools(mode: SandboxMode = "danger-full-access") {
    const root = await workspace();
    const client = await createLocalSandbox({ root, mode });
    const context: ToolContext = { cwd: root, sandbox: mode };
    return {
      root,
      context,
      bash: toToolDef(createBashTool(client)),
      read: toToolDef(createReadFileTool(client)),
      write: toToolDef(createWriteFileTool(client)),
      edit: toToolDef(createEditFileTool(client)),
    };
  }

  it("exposes the model-facing ToolDef shape", async () => {
    const { bash, read, edit } = await tools();
    expect(bash.name).toBe("bash");
    expect(bash.description.startsWith("Run a shell command in the working directory")).toBe(true);
    expect(bash.parameters).toMatchObject({
      type: "object",
      properties: { command: { type: "string" } },
      required: ["command"],
    });
    expect(read.parameters).toMatchObject({ required: ["path"] });
    expect(
      edit.description.startsWith(
        "Replace `old` with `new` in a file; `old` must appear exactly once.",
      ),
    ).toBe(true);
    expect(edit.parameters).toMatchObject({
      properties: { path: { type: "string" }, old: { type: "string" }, new: { type: "string" } },
    });
  });

  it("runs a command and checks its output", async () => {
    const { bash, context } = await tools();
    expect(await bash.run({ command: "echo contract" }, context)).toEqual({
      output: "contract\n",
      error: false,
    });
    expect(await bash.run({ command: "echo no >&2; false" }, context)).toEqual({
      output: "no\n[exit 1]",
      error: true,
    });
  });

  it("writes a file and reads it back", async () => {
    const { write, read, context } = await tools();
    const text = "line one\r\nline two ✓\n";
    expect(await write.run({ path: "notes/a.txt", content: text }, context)).toEqual({
      output: "created notes/a.txt (23 bytes)",
      error: false,
    });
    expect(await read.run({ path: "notes/a.txt" }, context)).toEqual({
      output: text,
      error: false,
    });
    expect(await read.run({ path: "../../etc/passwd" }, context)).toMatchObject({
      output: "path escapes the workspace: ../../etc/passwd",
      error: true,
      code: "PATH_ESCAPE",
    });
  });

  it("makes a one-match edit and confirms it", async () => {
    const { write, edit, read, context } = await tools();
    await write.run({ path: "app.txt", content: "alpha\nbeta\ngamma\n" }, context);
    expect(await edit.run({ path: "app.txt", old: "beta", new: "BETA" }, context)).toEqual({
      output: "edited app.txt (1 replacement at line 2)",
      error: false,
    });
    expect(await read.run({ path: "app.txt" }, context)).toEqual({
      output: "alpha\nBETA\ngamma\n",
      error: false,
    });
    expect(await edit.run({ path: "fresh.txt", old: "", new: "new file\n" }, context)).toEqual({
      output: "wrote fresh.txt",
      error: false,
    });
  });

  it("refuses an ambiguous edit and leaves the file alone", async () => {
    const { write, edit, root, context } = await tools();
    await write.run({ path: "twice.txt", content: "same\nother\nsame\n" }, context);
    const result = await edit.run({ path: "twice.txt", old: "same", new: "changed" }, context);
    expect(result).toMatchObject({ error: true, code: "AMBIGUOUS_MATCH" });
    expect(result.output).toMatch(/occurs 2 times in twice.txt, starting at lines 1, 3/);
    expect(await readFile(path.join(root, "twice.txt"), "utf8")).toBe("same\nother\nsame\n");
  });
});
