import { renderToolResult } from "@pleach/core";
import { describe, expect, it } from "vitest";
import type { ExecOptions, ExecResult, KeptOutput, SandboxClient } from "../../sandbox/index.js";
import { createBashTool } from "../bash/tool.js";
import { createRunTestsTool } from "../run-tests/tool.js";

const KEPT: KeptOutput = { path: "/run/pleach-output/cmd-4.log", bytes: 213_455 };
const NOTE =
  "[full output: 213,455 bytes kept at /run/pleach-output/cmd-4.log — read_file with offset/limit, or search it with bash: grep -n PATTERN /run/pleach-output/cmd-4.log]";

/**
 * A client whose `exec` prints `stdout` and keeps it whole (unless `fullOutput` is null) when
 * asked, recording the options.
 */
function printing(stdout: string, fullOutput: KeptOutput | null = KEPT) {
  const asked: ExecOptions[] = [];
  const client: SandboxClient = {
    async exec(_command, options = {}) {
      asked.push(options);
      const over = options.fullOutputOverBytes;
      const result: ExecResult = {
        exitCode: 0,
        stdout,
        stderr: "",
        durationMs: 5,
        timedOut: false,
        truncated: false,
      };
      if (over !== undefined && stdout.length > over && fullOutput !== null) {
        result.fullOutput = fullOutput;
      }
      return result;
    },
    readFile: async () => "",
    writeFile: async () => {},
  };
  return { client, asked };
}

describe("the full output's note", () => {
  it("bash says where a cut output is kept whole, within the 50,000 characters", async () => {
    const { client, asked } = printing(`${"line\n".repeat(40_000)}`);
    const bash = createBashTool(client);
    const output = await bash.execute({ command: "cat log" });
    expect(asked[0]?.fullOutputOverBytes).toBe(48_000);
    expect(output).toMatchObject({ truncated: true, fullOutput: KEPT });
    const seen = bash.toModelOutput(output).output;
    expect(seen.endsWith(`\n${NOTE}`)).toBe(true);
    expect(seen.length).toBeLessThanOrEqual(50_000);
    expect(renderToolResult({ ok: true, result: bash.toModelOutput(output) }).output).toBe(seen);
  });

  it("says what the session's bound left out", async () => {
    const { client } = printing("x".repeat(60_000), { ...KEPT, droppedBytes: 12_000 });
    const output = await createBashTool(client).execute({ command: "yes" });
    expect(output.output).toContain(
      "[full output: its first 213,455 bytes kept (12,000 more were past the session's bound on kept output) at /run/pleach-output/cmd-4.log",
    );
  });

  it("bash adds nothing when the output was not cut or was not kept", async () => {
    const short = await createBashTool(printing("hello\n").client).execute({ command: "x" });
    expect(short.output).toBe("hello\n");
    expect(short.fullOutput).toBeUndefined();
    // Kept whole (over the threshold), yet shown whole: no note.
    const whole = await createBashTool(printing("x".repeat(48_500)).client).execute({
      command: "x",
    });
    expect(whole).toMatchObject({ truncated: false, fullOutput: KEPT });
    expect(whole.output).toBe("x".repeat(48_500));
    const unkept = printing("x".repeat(60_000), null);
    const output = await createBashTool(unkept.client).execute({ command: "x" });
    expect(output.truncated).toBe(true);
    expect(output.output).not.toContain("[full output");
  });

  it("run_tests says it after its summary", async () => {
    const { client, asked } = printing(`${"ok 1 - a\n".repeat(10_000)}# pass 10000\n# fail 0\n`);
    const tool = createRunTestsTool(client);
    const output = await tool.execute({ command: "node --test" });
    expect(asked[0]?.fullOutputOverBytes).toBe(40_000);
    expect(output.fullOutput).toEqual(KEPT);
    const seen = tool.toModelOutput(output).output;
    expect(seen.split("\n").slice(0, 2)).toEqual([expect.stringMatching(/^exit code 0/), NOTE]);
    expect(seen.length).toBeLessThanOrEqual(50_000);
    const small = createRunTestsTool(printing("ok 1 - a\n# pass 1\n").client);
    expect(tool.toModelOutput(await small.execute({})).output).not.toContain("[full output");
  });
});
