// The workspace and the script both real-client tests drive: a 200 KB file, a failing and a
// passing test file, a tree whose recursive listing is near the 50,000-character cap, all in a
// git repository of one commit, which a command's commit cannot write without git writes.
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import type { Toolset } from "@pleach/coding-agent/runtime";
import { expect } from "vitest";

/** The `pleach` both tests serve over MCP: the built bin, or another build for a before-run. */
export const launcher =
  process.env.PLEACH_LAUNCHER ?? path.resolve(import.meta.dirname, "../bin/pleach.js");
/** More flags for `pleach mcp` (`PLEACH_MCP_FLAGS`, space-separated). */
export const extraFlags = (process.env.PLEACH_MCP_FLAGS ?? "")
  .split(" ")
  .filter((flag) => flag !== "");

/**
 * An agent CLI from npm, installed once per version into a cache folder (`scripts/real-clients.sh`
 * installs the same before entering its network namespace), run by this Node through its
 * `entry` (or the entry itself, when `native`); or why it cannot be had. `override` is a command
 * to use instead.
 */
export async function installedClient({
  name,
  packageName,
  version,
  entry,
  override,
  native = false,
}: {
  name: string;
  packageName: string;
  version: string;
  entry: string;
  override: string | undefined;
  /** The entry is a native program, run as it is (not by this Node). */
  native?: boolean;
}): Promise<{ command: string[] } | { skip: string }> {
  if (override) return { command: [override] };
  const folder = `${packageName.split("/").at(-1)}-${version}`;
  const prefix = path.join(os.tmpdir(), "pleach-real-clients", folder);
  const script = path.join(prefix, "node_modules", packageName, entry);
  if (!existsSync(script)) {
    try {
      await promisify(execFile)(
        "npm",
        ["install", "--prefix", prefix, "--no-audit", "--no-fund", `${packageName}@${version}`],
        { timeout: 300_000 },
      );
    } catch (error) {
      return { skip: `could not install ${name} from npm: ${(error as Error).message}` };
    }
  }
  return { command: native ? [script] : [process.execPath, script] };
}

/** 2,000 lines of 100 characters: a 200 KB file, four read_file pages. */
const line = (n: number) => `line ${String(n).padStart(5, "0")} ${"x".repeat(88)}`;

/** git with an identity of its own, as in the workspace's first commit. */
const GIT_AS_USER = "git -c user.name=u -c user.email=u@example.invalid";

/** The calls, by pleach tool name, in order. */
export const STEPS: Array<{ name: string; input: Record<string, unknown> }> = [
  { name: "read_file", input: { path: "big.txt" } },
  { name: "run_tests", input: { command: "node --test tests/fail.test.mjs" } },
  { name: "run_tests", input: { command: "node --test tests/pass.test.mjs" } },
  { name: "list_files", input: { dir: ".", recursive: true } },
  { name: "search_files", input: { pattern: "line 0" } },
  // Refused (no --allow-git-writes), and the model must read the note naming the way out. An
  // empty commit changes no file the other steps' second run (the runtime's) would see.
  { name: "bash", input: { command: `${GIT_AS_USER} commit -q --allow-empty -m step` } },
];

/** Fill `root` with the workspace the steps work on. */
export async function makeWorkspace(root: string): Promise<void> {
  await writeFile(
    path.join(root, "big.txt"),
    `${Array.from({ length: 2_000 }, (_, index) => line(index + 1)).join("\n")}\n`,
  );
  await mkdir(path.join(root, "tests"));
  const test = (assertion: string) =>
    `import assert from "node:assert/strict";\nimport { test } from "node:test";\ntest("adds", () => assert.equal(1 + 1, 2));\ntest("checks", () => ${assertion});\n`;
  await writeFile(path.join(root, "tests/fail.test.mjs"), test("assert.equal(3 - 1, 1)"));
  await writeFile(path.join(root, "tests/pass.test.mjs"), test("assert.equal(3 - 1, 2)"));
  for (let dir = 0; dir < 30; dir++) {
    const folder = path.join(root, "tree", `dir-${String(dir).padStart(2, "0")}`);
    await mkdir(folder, { recursive: true });
    for (let file = 0; file < 100; file++) {
      await writeFile(path.join(folder, `file-${String(file).padStart(3, "0")}.txt`), "x\n");
    }
  }
  const git = (...args: string[]) =>
    promisify(execFile)("git", [...GIT_AS_USER.split(" ").slice(1), ...args], { cwd: root });
  await git("init", "-q");
  await git("add", ".");
  await git("commit", "-q", "-m", "workspace");
}

/** Two runs of a test suite differ in their timings only: those are blanked on both sides. */
export function withoutTimings(output: string): string {
  return output
    .replace(/after \d+(\.\d+)? s/g, "after <t> s")
    .replace(/duration_ms:? [\d.]+/g, "duration_ms <t>");
}

/**
 * Check what a client handed its model for step `index` of {@link STEPS} (`recorded`, as the
 * scripted server kept it, with the client's own wrapper taken off by `shown`): one text block,
 * not JSON, within `budget`, and the runtime's own text for the same call, timings aside. Returns
 * that text, for the client's own checks.
 */
export async function expectRuntimeText({
  client,
  recorded,
  index,
  toolset,
  root,
  budget,
  shown = (text) => text,
}: {
  client: string;
  recorded: { text: string; otherBlocks: string[] } | undefined;
  index: number;
  toolset: Toolset;
  root: string;
  budget: number;
  shown?: (text: string) => string;
}): Promise<string> {
  const step = STEPS[index];
  if (step === undefined || recorded === undefined) {
    throw new Error(`${client} sent no result for step ${index + 1}`);
  }
  const expected = await toolset.call(step.name, step.input, {
    cwd: root,
    sandbox: "workspace-write",
  });
  const text = shown(recorded.text);
  expect(recorded.otherBlocks).toEqual([]);
  expect(text.trimStart().startsWith("{")).toBe(false);
  expect(text.length).toBeLessThanOrEqual(budget);
  expect(withoutTimings(text)).toBe(withoutTimings(expected.output));
  return text;
}

/**
 * Check the hints survived in what the model read (the client's own wrapper taken off):
 * read_file's offset to continue at, the failing run's counts and failing names, the passing
 * run's count, and the refused commit's note naming `--allow-git-writes`.
 */
export function expectHints([read, failing, passing, , , commit]: string[]): void {
  expect(read).toMatch(
    /\[lines 1-\d+ of 2000; call read_file again with offset \d+ to continue\]$/,
  );
  expect(failing).toMatch(/^exit code 1 after .*1 passed, 1 failed/);
  expect(failing).toContain("failing tests:\n- checks");
  expect(passing).toMatch(/2 passed/);
  expect(commit).toMatch(/\[exit 128\]\n\[sandbox: .*start pleach with --allow-git-writes/);
}

/**
 * A call longer than the client's tool timeout, as the long-call tests set it: `bash` sleeping
 * 12 s under a 5 s client timeout, served with progress every second (`on`) or none within the
 * call (`off`), to see whether the client's timer restarts on MCP progress notifications.
 */
export const LONG_CALL = {
  call: { name: "bash", input: { command: "sleep 12 && echo slept" } },
  clientTimeoutMs: 5_000,
  progressFlags: {
    on: ["--progress-interval", "1"],
    off: ["--progress-interval", "3600"],
  },
} as const;
