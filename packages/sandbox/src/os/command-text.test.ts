import { spawnSync } from "node:child_process";
import { closeSync, openSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { useTempDir } from "@pleach/core/testing";
import { describe, expect, it } from "vitest";
import {
  checkCommandLength,
  fitsInArgument,
  MAX_COMMAND_BYTES,
  SHELL,
  shellCommand,
} from "./command-text.js";

describe("shellCommand", () => {
  it("gives a short command to the shell as its argument, with nothing to feed", () => {
    expect(shellCommand("npm test", 4)).toEqual({ args: ["-c", "npm test"] });
  });

  it("has the shell read a long command from the descriptor it names", () => {
    const command = `: ${"x".repeat(200 * 1024)}; echo ok`;
    const { args, input } = shellCommand(command, 5);
    expect(args).toHaveLength(2);
    expect(args[1]?.length).toBeLessThan(300);
    expect(args[1]).toContain("-u 5");
    expect(Buffer.from(input ?? []).toString()).toBe(command);
  });

  it("runs the long command as bash -c would: $0, no positional parameters, its own stdin, every byte", async () => {
    const command = `: ${"é".repeat(100 * 1024)}\nprintf '%s|%s|%s|' "$0" "$#" "$(cat)"; printf %s $'<\\x01\\x7f\\\\>' | od -An -tx1`;
    expect(fitsInArgument(command)).toBe(false);
    const { args, input } = shellCommand(command, 3);
    const file = path.join(await useTempDir(), "command");
    await writeFile(file, input ?? "");
    const fd = openSync(file, "r");
    const viaFile = spawnSync(SHELL, args, {
      input: "from stdin",
      stdio: ["pipe", "pipe", "pipe", fd],
      encoding: "utf8",
      timeout: 10_000,
    });
    closeSync(fd);
    expect(viaFile.stderr).toBe("");
    expect(viaFile.stdout).toBe(`${SHELL}|0|from stdin| 3c 01 7f 5c 3e\n`);
  });

  it("refuses to run when the text does not arrive, rather than running nothing", () => {
    const { args } = shellCommand(`: ${"x".repeat(100 * 1024)}`, 7);
    const run = spawnSync(SHELL, args, { encoding: "utf8", timeout: 10_000 });
    expect(run.status).toBe(126);
    expect(run.stderr).toContain("the command did not arrive on fd 7");
  });
});

describe("checkCommandLength", () => {
  it("takes a command of MAX_COMMAND_BYTES and refuses a longer one with what to do", () => {
    expect(MAX_COMMAND_BYTES).toBe(1024 * 1024);
    expect(() => checkCommandLength("x".repeat(MAX_COMMAND_BYTES))).not.toThrow();
    expect(() => checkCommandLength("x".repeat(MAX_COMMAND_BYTES + 1))).toThrow(
      expect.objectContaining({
        code: "INVALID_INPUT",
        message: expect.stringContaining("write_file"),
      }),
    );
    // Bytes of UTF-8, not characters.
    expect(() => checkCommandLength("é".repeat(MAX_COMMAND_BYTES / 2 + 1))).toThrow(
      expect.objectContaining({ code: "INVALID_INPUT" }),
    );
  });
});
