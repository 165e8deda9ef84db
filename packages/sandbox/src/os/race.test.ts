import { execFileSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, lstatSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import {
  createApplyDiffTool,
  createEditFileTool,
  createListFilesTool,
  createReadFileTool,
  createWriteFileTool,
} from "@pleach/coding-agent/tools";
import { isToolError } from "@pleach/core";
import type { SandboxClient } from "@pleach/core/sandbox";
import { useTempDir } from "@pleach/core/testing";
import { describe, expect, it } from "vitest";
import { createHttpStreamSandboxProvider } from "../http-provider.js";
import { createLocalSandbox } from "../local-sandbox.js";
import { createSandboxServer } from "../server/sandbox-server.js";
import { attackSuiteSkipReason, runningAs } from "./test-support/suite.js";

/**
 * The host side of the file tools against a workspace that changes under it. A sandboxed command
 * (confined by bubblewrap in workspace-write) swaps a folder of the workspace, `flip`, with
 * symlinks to `/proc/self`, to a folder outside the workspace that holds a secret, and to the
 * workspace's own `.git`, and a file, `leaf`, with symlinks to `/proc/self/environ`, the secret
 * and `.git/config`, as fast as it can; meanwhile thousands of `read_file`, `write_file`,
 * `edit_file`, `apply_diff` and `list_files` calls go through those names. No byte of the secret,
 * of `/proc` or of anything outside may come back, nothing outside and nothing in `.git` may
 * change, every refusal must be a clean `ToolError`, and no temporary file may be left behind.
 * Run locally, and through the sandbox server with the secret in a second sandbox's workspace.
 *
 * Two outcomes are allowed on purpose. A read through the link to `.git` returns that file of the
 * repository (a link inside the workspace is followed, and `read_file` does not refuse `.git`):
 * only the exact bytes of the repository's own files are accepted. And `list_files` runs in the
 * sandbox from a folder found by name, so a swap between the walk and the command's start can make
 * it list another folder: counted, and a failure only where the OS sandbox hides that folder (the
 * other sandbox's workspace); the local sandbox shows the host read-only to every command anyway.
 */

const skipReason =
  (await attackSuiteSkipReason()) ??
  (existsSync("/usr/bin/python3") ? undefined : "no /usr/bin/python3 to flip paths with");

/** Tool calls per run, at most this many in flight. */
const CALLS = 5_000;
const IN_FLIGHT = 64;
/** Per test: setup, the calls, the checks. Here both runs take well under a minute each. */
const TEST_TIMEOUT_MS = 150_000;
/** The flipper's own limit; it is stopped long before, by a stop folder or an abort. */
const FLIPPER_TIMEOUT_MS = 170_000;

/** Names in `flip` that the calls go through: in `/proc/self`, in the secret folder, in `.git`. */
const FLIP_NAMES = ["data.txt", "secret.txt", "config", "environ", "status", "comm"];
const LINK_KINDS = ["proc", "out", "git"] as const;

/** Every text the workspace ever holds is lines of `<run> <word>`: planted, written or edited. */
function workspaceGrammar(run: string): (text: string) => boolean {
  const line = new RegExp(`^${run} (?:anchor|base|[wed]\\d+)$`);
  return (text) =>
    text.endsWith("\n") &&
    text
      .slice(0, -1)
      .split("\n")
      .every((each) => line.test(each));
}

/** The state of a folder: each entry's kind, mode, size, modification time and content hash. */
function snapshot(folder: string): Record<string, string> {
  const state: Record<string, string> = {};
  const walk = (relative: string) => {
    const full = path.join(folder, relative);
    const info = lstatSync(full);
    const mode = (info.mode & 0o7777).toString(8);
    if (info.isSymbolicLink()) {
      state[relative] = `link ${readlinkSync(full)}`;
    } else if (info.isDirectory()) {
      state[relative] = `dir ${mode} ${info.mtimeMs}`;
      for (const name of readdirSync(full).sort()) walk(path.join(relative, name));
    } else if (info.isFile()) {
      const hash = createHash("sha256").update(readFileSync(full)).digest("hex");
      state[relative] = `file ${mode} ${info.size} ${info.mtimeMs} ${hash}`;
    } else {
      state[relative] = `other ${info.mode.toString(8)}`;
    }
  };
  walk("");
  return state;
}

/** Every entry below `folder` (symlinks not followed), relative, with `skip` left out. */
function entriesBelow(folder: string, skip: (relative: string) => boolean = () => false): string[] {
  const found: string[] = [];
  const walk = (relative: string) => {
    for (const name of readdirSync(path.join(folder, relative))) {
      const child = path.join(relative, name);
      if (skip(child)) continue;
      found.push(child);
      if (lstatSync(path.join(folder, child)).isDirectory()) walk(child);
    }
  };
  walk("");
  return found;
}

function git(cwd: string, ...args: string[]): void {
  execFileSync(
    "git",
    ["-c", "user.name=pleach", "-c", "user.email=pleach@example.invalid", ...args],
    {
      cwd,
      stdio: "ignore",
    },
  );
}

/**
 * The attacker: python in the sandbox. It makes the links itself, then until the folder
 * `race-stop` appears swaps `flip` (a folder) and `leaf` (a file) with them, in turns: with
 * `renameat2(RENAME_EXCHANGE)`, so the name always exists and is a folder or a link, and with
 * rename/symlink/rename, so it is also missing for a moment (a write may make a folder there then:
 * it is moved to `race-strays`). It prints how many times each name changed.
 */
function flipperCommand(outside: string): string {
  const script = `
import ctypes, os, sys, time
OUT = ${JSON.stringify(outside)}
FLIP = {"proc": "/proc/self", "out": OUT, "git": ".git"}
LEAF = {"proc": "/proc/self/environ", "out": OUT + "/secret.txt", "git": ".git/config"}
KINDS = ["proc", "out", "git"]
libc = ctypes.CDLL(None, use_errno=True)
renameat2 = getattr(libc, "renameat2", None)
if renameat2 is not None:
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]

def exchange(a, b):
    if renameat2(-100, a.encode(), -100, b.encode(), 2) != 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code), a)

strays = 0
def aside(name):
    global strays
    strays += 1
    os.rename(name, "race-strays/%d" % strays)

def place(target, name):
    """Make name a link to target, atomically over a link or file; a folder there is moved aside."""
    if os.path.lexists(name + ".new"):
        os.unlink(name + ".new")
    os.symlink(target, name + ".new")
    for _ in range(100):
        try:
            os.rename(name + ".new", name)
            return
        except IsADirectoryError:
            aside(name)
    raise RuntimeError("could not place " + name)

def put_back(held, name):
    """Move the real folder or file held aside back to name, whatever is there now."""
    for _ in range(100):
        try:
            os.rename(held, name)
            return
        except OSError:
            if os.path.islink(name):
                os.unlink(name)
            elif os.path.lexists(name):
                aside(name)
    raise RuntimeError("could not put back " + name)

def repair():
    for name in ("flip", "leaf"):
        if os.path.lexists(name + ".held"):
            put_back(name + ".held", name)
        if os.path.islink(name):
            for kind in KINDS:
                other = name + "." + kind
                if os.path.lexists(other) and not os.path.islink(other):
                    exchange(name, other)
                    break

for kind in KINDS:
    os.symlink(FLIP[kind], "flip." + kind)
    os.symlink(LEAF[kind], "leaf." + kind)
can_exchange = renameat2 is not None
if can_exchange:
    try:
        exchange("flip", "flip.proc")
        exchange("flip", "flip.proc")
    except OSError as error:
        print("no RENAME_EXCHANGE:", error, file=sys.stderr)
        can_exchange = False

os.mkdir("race-running")
flips = leaf_flips = errors = 0
started = time.time()
i = 0
while True:
    if i % 16 == 0 and os.path.exists("race-stop"):
        break
    kind = KINDS[i % 3]
    following = KINDS[(i + 1) % 3]
    try:
        if can_exchange and (i // 3) % 2 == 0:
            exchange("flip", "flip." + kind); flips += 1
            exchange("leaf", "leaf." + kind); leaf_flips += 1
            exchange("flip", "flip." + kind); flips += 1
            exchange("leaf", "leaf." + kind); leaf_flips += 1
        else:
            os.rename("flip", "flip.held")
            place(FLIP[kind], "flip"); flips += 1
            os.rename("leaf", "leaf.held")
            place(LEAF[kind], "leaf"); leaf_flips += 1
            place(FLIP[following], "flip"); flips += 1
            place(LEAF[following], "leaf"); leaf_flips += 1
            put_back("flip.held", "flip"); flips += 1
            put_back("leaf.held", "leaf"); leaf_flips += 1
    except OSError as error:
        errors += 1
        if errors <= 5:
            print("flipper:", error, file=sys.stderr)
        if errors > 10000:
            sys.exit(3)
        repair()
    i += 1
repair()
print("flips=%d leaf_flips=%d errors=%d strays=%d exchange=%d seconds=%.1f" % (
    flips, leaf_flips, errors, strays, int(can_exchange), time.time() - started))
`;
  return `exec /usr/bin/python3 - <<'PLEACH_FLIPPER'\n${script}\nPLEACH_FLIPPER\n`;
}

interface RaceSetup {
  label: string;
  /** The client under attack and its workspace's real path on this host. */
  client: SandboxClient;
  root: string;
  /** Where the secret lives (outside the workspace), as the attacker's links name it. */
  secretFolder: string;
  /** A string in every secret file. */
  marker: string;
  /** The run's prefix of every workspace text. */
  run: string;
  /**
   * Whether the attacker's own commands can read the secret folder. The local sandbox shows the
   * host read-only, so a folder in `/var/tmp` is readable by any command; the server hides every
   * other sandbox's workspace from a command.
   */
  secretVisibleToCommands: boolean;
}

interface RaceReport {
  flipper: string;
  flips: number;
  leafFlips: number;
  outcomes: Record<string, Record<string, number>>;
  /** Refusals of a path that leads out, by where it led, and writes refused in `.git`. */
  observed: { proc: number; outside: number; git: number };
  /** `list_files` calls that listed another folder than the workspace's `flip`, by which. */
  listedElsewhere: { secret: number; other: number };
  violations: string[];
  seconds: number;
}

/** Plant the workspace under attack: a git repository, the folder `flip` and the file `leaf`. */
async function plantWorkspace(root: string, run: string): Promise<void> {
  const text = `${run} anchor\n${run} base\n`;
  git(root, "init", "-q");
  await writeFile(path.join(root, "README.txt"), text);
  git(root, "add", "README.txt");
  git(root, "commit", "-q", "-m", "initial");
  await mkdir(path.join(root, "flip"));
  for (const name of FLIP_NAMES) await writeFile(path.join(root, "flip", name), text);
  await writeFile(path.join(root, "leaf"), text);
  await mkdir(path.join(root, "race-strays"));
}

/** The secret's files: the names the calls use, and one whose name shows in a listing. */
function secretFiles(marker: string): Record<string, string> {
  const files: Record<string, string> = { [`listed-${marker}.txt`]: `${marker}\n` };
  for (const name of FLIP_NAMES) files[name] = `${marker} ${name}\n`;
  return files;
}

async function race(setup: RaceSetup): Promise<RaceReport> {
  const { client, root, secretFolder, marker, run } = setup;
  const isWorkspaceText = workspaceGrammar(run);
  const tools = {
    read_file: createReadFileTool(client),
    write_file: createWriteFileTool(client),
    edit_file: createEditFileTool(client),
    apply_diff: createApplyDiffTool(client),
    list_files: createListFilesTool(client),
  };
  const gitFolder = path.join(root, ".git");
  const gitBefore = snapshot(gitFolder);
  const secretBefore = snapshot(secretFolder);
  const commBefore = readFileSync("/proc/self/comm", "utf8");
  // What a link to `.git` inside the workspace legitimately reads: the repository's own files.
  const gitTexts = new Set(
    entriesBelow(gitFolder)
      .filter((relative) => lstatSync(path.join(gitFolder, relative)).isFile())
      .map((relative) => readFileSync(path.join(gitFolder, relative), "utf8")),
  );
  // Never in anything a call returns or says.
  const forbidden = [marker, "PATH=", "\0", `Name:\t`];

  const violations: string[] = [];
  const outcomes: Record<string, Record<string, number>> = {};
  const observed = { proc: 0, outside: 0, git: 0 };
  const listedElsewhere = { secret: 0, other: 0 };
  /** The first message of each tool's each error code, for the log. */
  const samples: Record<string, string> = {};
  const listable = /^flip\/(?:data\.txt|secret\.txt|config|environ|status|comm|new-d?\d+\.txt)$/;
  const count = (tool: string, outcome: string) => {
    const tally = outcomes[tool] ?? {};
    tally[outcome] = (tally[outcome] ?? 0) + 1;
    outcomes[tool] = tally;
  };
  /** How many violations of each kind, for the log. */
  const kinds: Record<string, number> = {};
  const violate = (kind: string, detail: string) => {
    kinds[kind] = (kinds[kind] ?? 0) + 1;
    violations.push(detail);
  };
  const leaks = (what: string, text: string) => {
    for (const bad of forbidden) {
      if (text.includes(bad)) {
        violate(
          bad === marker ? "the secret came back" : "/proc came back",
          `${what} holds ${JSON.stringify(bad)}: ${JSON.stringify(text.slice(0, 200))}`,
        );
      }
    }
  };

  const abort = new AbortController();
  const flipper = client.exec(flipperCommand(secretFolder), {
    timeoutMs: FLIPPER_TIMEOUT_MS,
    abortSignal: abort.signal,
    maxOutputBytes: 64 * 1024,
  });
  let flipperDone = false;
  void flipper.finally(() => {
    flipperDone = true;
  });
  const started = performance.now();
  while (!existsSync(path.join(root, "race-running"))) {
    if (flipperDone)
      throw new Error(`the flipper ended before it started: ${JSON.stringify(await flipper)}`);
    if (performance.now() - started > 30_000) throw new Error("the flipper did not start in 30 s");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }

  const call = async (index: number) => {
    const slot = index % 20;
    const name = FLIP_NAMES[Math.floor(index / 20) % FLIP_NAMES.length] as string;
    const target = index % 7 === 0 ? "leaf" : `flip/${name}`;
    let tool: keyof typeof tools;
    let input: Record<string, unknown>;
    if (slot < 7) {
      tool = "read_file";
      input = { path: target };
    } else if (slot < 9) {
      tool = "read_file";
      input = { path: target, encoding: "base64" };
    } else if (slot === 9) {
      tool = "read_file";
      input = { path: `flip.${LINK_KINDS[index % 3]}/${name}` };
    } else if (slot < 13) {
      tool = "write_file";
      const written = slot === 12 ? `flip/new-${index % 40}.txt` : target;
      input = { path: written, content: `${run} anchor\n${run} w${index}\n` };
    } else if (slot < 16) {
      tool = "edit_file";
      input = { path: target, old: `${run} anchor\n`, new: `${run} anchor\n${run} e${index}\n` };
    } else if (slot < 19) {
      tool = "apply_diff";
      const created = slot === 18 && index % 3 === 0;
      const patched = created ? `flip/new-d${index % 40}.txt` : target;
      input = {
        path: patched,
        diff: created
          ? `--- /dev/null\n+++ b/${patched}\n@@ -0,0 +1,2 @@\n+${run} anchor\n+${run} d${index}\n`
          : `--- a/${patched}\n+++ b/${patched}\n@@ -1,1 +1,2 @@\n ${run} anchor\n+${run} d${index}\n`,
      };
    } else {
      tool = "list_files";
      input = { dir: "flip", recursive: index % 40 === 19 };
    }
    try {
      const output: unknown = await tools[tool].execute(input);
      if (tool === "list_files") {
        // The listing runs in the sandbox from a folder found by name, which the attacker may
        // swap before the command starts there: it is confined by the OS sandbox, not by the
        // walk. It must never show what the sandbox hides (another sandbox's workspace).
        const paths = (output as { path: string }[]).map((entry) => entry.path);
        if (paths.some((each) => each.includes(marker))) {
          listedElsewhere.secret += 1;
          count(tool, "ok (listed the secret folder)");
          if (!setup.secretVisibleToCommands) {
            violate(
              "list_files showed the hidden secret folder",
              `list_files showed the hidden secret folder: ${paths.join(", ")}`,
            );
          }
        } else if (paths.some((each) => !listable.test(each))) {
          listedElsewhere.other += 1;
          count(tool, "ok (listed another folder)");
        } else {
          count(tool, "ok");
        }
        return;
      }
      leaks(`${tool} ${JSON.stringify(input.path ?? input.dir)}`, JSON.stringify(output));
      if (tool === "read_file") {
        const { content, encoding } = output as { content: string; encoding: string };
        const text =
          encoding === "base64" ? Buffer.from(content, "base64").toString("utf8") : content;
        leaks(`read_file ${input.path} (decoded)`, text);
        if (isWorkspaceText(text)) {
          count(tool, "ok");
        } else if (gitTexts.has(text)) {
          // Through a link to `.git` inside the workspace: the repository's own file, as a link
          // inside the workspace is meant to work.
          count(tool, "ok (.git through the link)");
        } else {
          count(tool, "WRONG CONTENT");
          violate(
            "read_file returned what the workspace never held",
            `read_file ${input.path} returned ${JSON.stringify(text.slice(0, 200))}`,
          );
        }
      } else {
        count(tool, "ok");
      }
    } catch (error) {
      if (!isToolError(error)) {
        count(tool, "not a ToolError");
        violate("not a ToolError", `${tool} ${JSON.stringify(input)} threw ${String(error)}`);
        return;
      }
      count(tool, error.code);
      samples[`${tool} ${error.code}`] ??= error.message.slice(0, 200);
      leaks(`${tool} error`, `${error.message} ${JSON.stringify(error.details ?? {})}`);
      // A crash, or a file no workspace file is (binary: /proc/self/environ), is a failure.
      if (
        error.code === "INTERNAL" ||
        error.code === "INVALID_OUTPUT" ||
        error.code === "BINARY_FILE"
      ) {
        violate(
          `${tool} ${error.code}`,
          `${tool} ${JSON.stringify(input.path ?? input.dir)}: ${error.code} ${error.message}`,
        );
      }
      const resolved = String(error.details?.resolved ?? "");
      if (error.code === "PATH_ESCAPE" && resolved.startsWith("/proc/")) observed.proc += 1;
      if (error.code === "PATH_ESCAPE" && resolved.startsWith(secretFolder)) observed.outside += 1;
      if (error.code === "PROTECTED_PATH") observed.git += 1;
    }
  };

  let next = 0;
  const worker = async () => {
    while (next < CALLS) await call(next++);
  };
  try {
    await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  } finally {
    await mkdir(path.join(root, "race-stop")).catch(() => {});
    const stopping = setTimeout(() => abort.abort("the flipper did not stop"), 20_000);
    await flipper.catch(() => {});
    clearTimeout(stopping);
  }
  const seconds = (performance.now() - started) / 1000;
  const flipperResult = await flipper;
  const flipperLine = flipperResult.stdout.trim();
  const flips = Number(/flips=(\d+)/.exec(flipperLine)?.[1] ?? 0);
  const leafFlips = Number(/leaf_flips=(\d+)/.exec(flipperLine)?.[1] ?? 0);
  // What the run left: checked once the calls and the flipper are done.
  const afterwards: string[] = [];
  if (flipperResult.exitCode !== 0 || flipperResult.timedOut) {
    afterwards.push(
      `the flipper did not run to the stop: exit ${flipperResult.exitCode}, ${flipperResult.stderr.slice(-500)}`,
    );
  }

  // Nothing outside changed, nothing in `.git` changed, nothing under /proc was written.
  const secretAfter = snapshot(secretFolder);
  if (JSON.stringify(secretAfter) !== JSON.stringify(secretBefore)) {
    const changed = Object.keys({ ...secretBefore, ...secretAfter }).filter(
      (key) => secretBefore[key] !== secretAfter[key],
    );
    afterwards.push(`the secret folder changed: ${changed.join(", ")}`);
  }
  const gitAfter = snapshot(gitFolder);
  if (JSON.stringify(gitAfter) !== JSON.stringify(gitBefore)) {
    const changed = Object.keys({ ...gitBefore, ...gitAfter }).filter(
      (key) => gitBefore[key] !== gitAfter[key],
    );
    afterwards.push(`.git changed: ${changed.join(", ")}`);
  }
  if (readFileSync("/proc/self/comm", "utf8") !== commBefore)
    afterwards.push("/proc/self/comm changed");
  // No temporary file left anywhere; every file of the workspace still holds workspace text.
  for (const [folder, skip] of [
    [root, (relative: string) => relative === ".git"],
    [gitFolder, () => false],
    [secretFolder, () => false],
  ] as const) {
    for (const relative of entriesBelow(folder, skip)) {
      if (/\.pleach-.*\.tmp$/.test(relative))
        afterwards.push(`left behind: ${path.join(folder, relative)}`);
    }
  }
  for (const relative of entriesBelow(root, (relative) => relative === ".git")) {
    const full = path.join(root, relative);
    if (!lstatSync(full).isFile()) continue;
    const text = readFileSync(full, "utf8");
    if (!isWorkspaceText(text)) {
      afterwards.push(`the workspace file ${relative} holds ${JSON.stringify(text.slice(0, 200))}`);
    }
  }

  const report: RaceReport = {
    flipper: flipperLine,
    flips,
    leafFlips,
    outcomes,
    observed,
    listedElsewhere,
    violations: [...afterwards, ...violations],
    seconds,
  };
  console.log(
    [
      `race (${setup.label}, ${runningAs()}): ${CALLS} calls, ${IN_FLIGHT} in flight, ${seconds.toFixed(1)} s`,
      `  flipper: ${flipperLine}`,
      ...flipperResult.stderr
        .split("\n")
        .filter((line) => line !== "")
        .slice(0, 5)
        .map((line) => `  flipper said: ${line}`),
      ...Object.entries(outcomes).map(
        ([tool, tally]) =>
          `  ${tool}: ${Object.entries(tally)
            .sort(([, left], [, right]) => right - left)
            .map(([outcome, times]) => `${outcome} ${times}`)
            .join(", ")}`,
      ),
      `  refused because the path led to: /proc ${observed.proc}, the secret ${observed.outside}, .git (protected) ${observed.git}`,
      `  list_files started elsewhere: in the secret folder ${listedElsewhere.secret}${setup.secretVisibleToCommands ? " (readable by commands anyway)" : ""}, another folder ${listedElsewhere.other}`,
      "  first message of each refusal:",
      ...Object.entries(samples)
        .sort(([left], [right]) => (left < right ? -1 : 1))
        .map(([key, message]) => `    ${key}: ${message.replaceAll("\n", " ")}`),
      `  violations afterwards: ${afterwards.length}`,
      ...afterwards.slice(0, 20).map((violation) => `    ${violation.slice(0, 1000)}`),
      `  violations by calls: ${violations.length}${
        Object.keys(kinds).length === 0
          ? ""
          : ` (${Object.entries(kinds)
              .map(([kind, times]) => `${kind} ${times}`)
              .join(", ")})`
      }`,
      ...violations.slice(0, 20).map((violation) => `    ${violation}`),
    ].join("\n"),
  );
  return report;
}

/** What every run must show: the attacker raced, the host saw each link, and nothing leaked. */
function expectRaceHeld(report: RaceReport): void {
  expect(report.violations.slice(0, 20)).toEqual([]);
  // A race whose attacker never raced proves nothing: it flipped throughout, and calls met each link.
  expect(report.flips).toBeGreaterThan(1_000);
  expect(report.leafFlips).toBeGreaterThan(1_000);
  expect(report.observed.proc).toBeGreaterThan(0);
  expect(report.observed.outside).toBeGreaterThan(0);
  expect(report.observed.git).toBeGreaterThan(0);
  const total = Object.values(report.outcomes)
    .flatMap((tally) => Object.values(tally))
    .reduce((sum, times) => sum + times, 0);
  expect(total).toBe(CALLS);
}

const skipped = skipReason === undefined ? "" : ` (skipped: ${skipReason})`;

describe.skipIf(skipReason !== undefined)(
  `path races against the file tools ${runningAs()}${skipped}`,
  () => {
    // With git writes too: commands may then write in .git, the file tools still may not.
    for (const allowGitWrites of [false, true]) {
      it(
        `local client: no byte from outside, /proc or the secret, no write outside or in .git${allowGitWrites ? ", with git writes" : ""}`,
        async () => {
          const root = await useTempDir({ prefix: "pleach-race-" });
          const outside = await useTempDir({ prefix: "pleach-race-outside-", parent: "/var/tmp" });
          const marker = `OUTSIDE-SECRET-${randomBytes(12).toString("hex")}`;
          for (const [name, text] of Object.entries(secretFiles(marker))) {
            await writeFile(path.join(outside, name), text);
          }
          const run = `ws${randomBytes(4).toString("hex")}`;
          await plantWorkspace(root, run);
          const client = await createLocalSandbox({
            root,
            mode: "workspace-write",
            ...(allowGitWrites ? { allowGitWrites } : {}),
          });
          const report = await race({
            label: "local client",
            client,
            root,
            secretFolder: outside,
            marker,
            run,
            secretVisibleToCommands: true,
          });
          expectRaceHeld(report);
        },
        TEST_TIMEOUT_MS,
      );
    }

    it(
      "sandbox server: sandbox A cannot reach sandbox B's workspace, /proc or its own .git",
      async () => {
        const serverRoot = await useTempDir({ prefix: "pleach-race-server-" });
        const token = randomBytes(24).toString("hex");
        const server = await createSandboxServer({ root: serverRoot, token });
        const provider = createHttpStreamSandboxProvider({
          baseURL: server.url,
          auth: () => ({ headers: { Authorization: `Bearer ${token}` } }),
        });
        try {
          const a = await provider.acquire();
          const b = await provider.acquire();
          const marker = `SANDBOX-B-SECRET-${randomBytes(12).toString("hex")}`;
          for (const [name, text] of Object.entries(secretFiles(marker))) {
            await b.client.writeFile(name, text);
          }
          const run = `ws${randomBytes(4).toString("hex")}`;
          await plantWorkspace(a.root, run);
          const report = await race({
            label: "sandbox server, A attacks B",
            client: a.client,
            root: a.root,
            secretFolder: b.root,
            marker,
            run,
            secretVisibleToCommands: false,
          });
          expectRaceHeld(report);
          await a.release();
          await b.release();
        } finally {
          provider.close();
          await server.close();
        }
      },
      TEST_TIMEOUT_MS,
    );
  },
);
