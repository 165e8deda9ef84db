import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import type { SandboxMode } from "@pleach/core/sandbox";
import { cleanUpAfter, useTempDir } from "@pleach/core/testing";
import { describe, expect, it } from "vitest";
import { createLocalSandbox } from "../local-sandbox.js";
import { createCommandWrapper } from "./create-command-wrapper.js";
import { type FailurePolicy, failureNotes } from "./failure-notes.js";
import { attackSuiteSkipReason, runningAs } from "./test-support/suite.js";

const skipReason = await attackSuiteSkipReason();

/** A folder outside `/tmp` (the sandbox's own `/tmp` would hide it anyway), removed after the test. */
async function outsideFolder(): Promise<string> {
  const folder = await realpath(await mkdtemp("/var/tmp/pleach-notes-"));
  return cleanUpAfter(folder, () => rm(folder, { recursive: true, force: true }));
}

/** A workspace with a git repository, a `.bashrc` and a file `secret` hidden by hideReads. */
async function workspace(): Promise<{ root: string; outside: string }> {
  const root = await useTempDir();
  await mkdir(path.join(root, ".git"));
  await writeFile(path.join(root, ".git/config"), "[core]\n\trepositoryformatversion = 0\n");
  await writeFile(path.join(root, ".git/HEAD"), "ref: refs/heads/main\n");
  await mkdir(path.join(root, ".git/objects"));
  await mkdir(path.join(root, ".git/refs"));
  await writeFile(path.join(root, ".bashrc"), "# rc\n");
  await mkdir(path.join(root, "sub"));
  const outside = await outsideFolder();
  await writeFile(path.join(outside, "token"), "SECRET\n");
  return { root, outside };
}

async function sandbox(root: string, outside: string, mode: SandboxMode, network = false) {
  return createLocalSandbox({
    root,
    mode,
    network,
    commandWrapper: createCommandWrapper({
      hideReads: [path.join(outside, "token")],
      warmIdleMs: 0,
    }),
  });
}

const PROTECTED_WAY_OUT =
  "pleach keeps the repository's git machinery and files that make the host run code read-only for commands, and the file tools refuse them too; ask the user to make this change.";
const BASHRC = `.bashrc at the top of the workspace is protected: bash runs it at start-up. ${PROTECTED_WAY_OUT}`;
const GIT =
  ".git at the top of the workspace is protected: git runs its hooks and the commands its config names (core.fsmonitor). " +
  PROTECTED_WAY_OUT;
const GIT_WRITES =
  "git commands cannot write the repository (commit, branch, stash, rebase) in this sandbox: start pleach with --allow-git-writes (allowGitWrites: true) to let them; git's config and hooks stay protected.";
const READ_ONLY =
  'this sandbox runs in read-only mode, where commands write only their private /tmp. Writing the workspace needs workspace-write mode (--mode workspace-write where pleach is started, mode: "workspace-write" in the options); ask the user to switch.';
const NETWORK_OFF =
  "sandbox: the network is off for commands here, so names cannot be looked up and hosts cannot be reached. It is turned on where pleach is started: `--allow-domain HOST` (repeatable) on its command line (call, mcp, run, eval) for just the hosts the task needs, or `--network` for all; `network: { allowDomains: [...] }` or `network: true` in the options of `createLocalSandbox` / `createLocalSandboxProvider`. Ask the user to allow what the task needs, or work from what is already on disk (a local repository clones from its path or file:// URL).";

/** One rule failure: the command, the mode it runs in, and the note it gets (`outside` filled in). */
interface Row {
  rule: string;
  mode: SandboxMode;
  /** The folder the command runs in: the paths it prints are relative to it. */
  cwd?: string;
  command: (outside: string) => string;
  note: (outside: string) => string;
}

const ROWS: Row[] = [
  {
    rule: "protected write (bash)",
    mode: "workspace-write",
    command: () => "echo x > .bashrc",
    note: () => `sandbox: writing .bashrc was refused: ${BASHRC}`,
  },
  {
    rule: "protected write (coreutils, run in a subfolder)",
    mode: "workspace-write",
    cwd: "sub",
    command: () => "touch ../.git/hooks-x",
    // With git writes it could be written; .git/config (below) could not.
    note: () => `sandbox: writing .git/hooks-x was refused: ${GIT} ${GIT_WRITES}`,
  },
  {
    rule: "protected write (git)",
    mode: "workspace-write",
    command: () => "git config user.name someone",
    note: () => `sandbox: writing .git/config was refused: ${GIT}`,
  },
  {
    rule: "protected write (Node)",
    mode: "workspace-write",
    command: () => `node -e "require('fs').writeFileSync('.bashrc', 'x')"`,
    note: () => `sandbox: writing .bashrc was refused: ${BASHRC}`,
  },
  {
    rule: "protected write (Python)",
    mode: "workspace-write",
    command: () => `python3 -c "open('.bashrc', 'w')"`,
    note: () => `sandbox: writing .bashrc was refused: ${BASHRC}`,
  },
  {
    rule: "protected entry made by the command, moved aside",
    mode: "workspace-write",
    command: () => "mkdir .vscode && touch .vscode/tasks.json && false",
    note: () =>
      ".vscode was made by a sandboxed command at a protected path (.vscode at the top of the workspace is protected: VS Code runs its tasks (runOn: folderOpen) and reads its settings): pleach moved it to .vscode.made-by-command when the command ended. Look at it, and move it back yourself if it is wanted.",
  },
  {
    rule: "read-only mode",
    mode: "read-only",
    command: () => "touch notes.txt",
    note: () => `sandbox: writing notes.txt was refused: ${READ_ONLY}`,
  },
  {
    rule: "outside the workspace",
    mode: "workspace-write",
    command: (outside) => `echo x > ${outside}/new`,
    note: (outside) =>
      `sandbox: writing ${outside}/new was refused: in workspace-write mode only the workspace and a private /tmp are writable for commands (/tmp is emptied after each command). Write inside the workspace instead; if the task must write a folder outside it (a build output), ask the user to start pleach with --allow-write DIR (allowWrites).`,
  },
  ...(["read-only", "workspace-write"] as const).map(
    (mode): Row => ({
      rule: "hidden file",
      mode,
      command: (outside) => `cat ${outside}/token`,
      note: (outside) =>
        `sandbox: reading ${outside}/token was refused: ${outside}/token is hidden from commands: it is hidden by hideReads (--hide-read). Commands in read-only and workspace-write cannot read it; if the task needs it, ask the user to give it back with --allow-read ${outside}/token (allowReads).`,
    }),
  ),
  {
    rule: "network off",
    mode: "workspace-write",
    // `.invalid` never resolves, network or not.
    command: () => "git ls-remote https://example.invalid/x.git",
    note: () => NETWORK_OFF,
  },
];

describe("failureNotes on a policy", () => {
  const policy = (backend: FailurePolicy["backend"]): FailurePolicy => ({
    backend,
    mode: "workspace-write",
    network: false,
    root: "/work/ws",
    cwd: "/work/ws/sub",
    protectedPaths: [
      { path: "/work/ws/.git", state: "directory", rule: "the .git rule" },
      { path: "/work/ws/.envrc", state: "missing", rule: "the .envrc rule" },
    ],
    hiddenPaths: [],
  });
  const notesOf = (backend: FailurePolicy["backend"], stderr: string) =>
    failureNotes({ result: { exitCode: 1, stdout: "", stderr }, policy: policy(backend) });

  it("takes each backend's own error for a refused write", () => {
    const seatbelt = "touch: ../.git/x: Operation not permitted\n";
    expect(notesOf("seatbelt", seatbelt)).toEqual([
      expect.stringMatching(/^sandbox: writing \.git\/x was refused: the \.git rule\. /),
    ]);
    expect(notesOf("bubblewrap", seatbelt)).toEqual([]);
    // Seatbelt refuses a missing protected path by its name; under bubblewrap nothing stands
    // there (what a command makes there is moved aside when it ends, with a note of its own).
    expect(notesOf("seatbelt", "touch: ../.envrc: Operation not permitted\n")).toHaveLength(1);
    expect(notesOf("bubblewrap", "bash: ../.envrc: Is a directory\n")).toEqual([]);
  });

  it("names --allow-read for a path not found where the read view is empty, and only there", () => {
    const viewed: FailurePolicy = {
      ...policy("bubblewrap"),
      readView: {
        emptied: [{ path: "/home/u", state: "folder" }],
        shown: [{ path: "/home/u/.cargo", why: "the toolchain of /home/u/.cargo/bin on PATH" }],
      },
    };
    const notes = (stderr: string) =>
      failureNotes({ result: { exitCode: 1, stdout: "", stderr }, policy: viewed });
    expect(notes("cat: /home/u/.m2/settings.xml: No such file or directory\n")).toEqual([
      expect.stringContaining("--allow-read /home/u/.m2/settings.xml"),
    ]);
    // Shown again, or outside the emptied folder: the file is missing on the host too.
    expect(notes("cat: /home/u/.cargo/env: No such file or directory\n")).toEqual([]);
    expect(notes("cat: /usr/x: No such file or directory\n")).toEqual([]);
    expect(notes("cat: missing: No such file or directory\n")).toEqual([]);
    // A cache made in the emptied home (go's build cache) gets the way out for writes.
    expect(
      notes(
        "failed to initialize build cache at /home/u/.cache/go-build: mkdir /home/u/.cache: permission denied\n",
      ),
    ).toEqual([expect.stringContaining("GOCACHE=/tmp/go-build")]);
  });

  it("puts the proxy's lines first, once each, and gives a rule met many times one line", () => {
    const stderr = Array.from(
      { length: 8 },
      (_, index) => `touch: cannot touch '/etc/x${index}': Read-only file system`,
    ).join("\n");
    const notes = failureNotes({
      result: { exitCode: 1, stdout: "", stderr },
      policy: policy("bubblewrap"),
      proxyNotes: ["refused: example.com", "refused: example.com"],
    });
    // Every write outside the workspace meets one rule: one line.
    expect(notes).toEqual([
      "refused: example.com",
      expect.stringMatching(/^sandbox: writing \/etc\/x0 was refused: in workspace-write mode/),
    ]);
  });
});

describe("failureNotes on a command killed at its time limit", () => {
  const policy = (network: boolean): FailurePolicy => ({
    backend: "bubblewrap",
    mode: "workspace-write",
    network,
    root: "/work/ws",
    cwd: "/work/ws",
    protectedPaths: [],
    hiddenPaths: [],
  });
  const killed = (stderr = "") => ({ exitCode: null, stdout: "", stderr, timedOut: true });

  it("names the network off as the likely cause, with its way out", () => {
    const [note, ...more] = failureNotes({ result: killed(), policy: policy(false) });
    expect(more).toEqual([]);
    expect(note).toMatch(
      /^sandbox: the network is off for commands here: a command that needs it \(an install, a download, a clone, a name lookup\) retries until it is killed at its time limit, so if this one waits on the network, a larger timeout will not help\. It is turned on where pleach is started: `--allow-domain HOST`/,
    );
  });

  it("gives the lookup's own note when the output shows one failed", () => {
    const result = killed("npm error getaddrinfo EAI_AGAIN registry.npmjs.org\n");
    expect(failureNotes({ result, policy: policy(false) })).toEqual([NETWORK_OFF]);
  });

  it("says nothing of the network when it was on, or when the command was not killed", () => {
    expect(failureNotes({ result: killed(), policy: policy(true) })).toEqual([]);
    const failed = { exitCode: 1, stdout: "", stderr: "", timedOut: false };
    expect(failureNotes({ result: failed, policy: policy(false) })).toEqual([]);
  });
});

describe.skipIf(skipReason !== undefined)(`failures explained ${runningAs()}`, () => {
  it.each(ROWS)("$rule in $mode gets its line", async ({ mode, cwd, command, note }) => {
    const { root, outside } = await workspace();
    const client = await sandbox(root, outside, mode);
    const result = await client.exec(command(outside), cwd === undefined ? {} : { cwd });
    expect(result.exitCode).not.toBe(0);
    expect(result.sandboxNotes).toEqual([note(outside)]);
  });

  it("a command in a warm sandbox gets its line too", async () => {
    const { root } = await workspace();
    const client = await createLocalSandbox({ root, mode: "workspace-write" });
    await client.exec("true");
    const result = await client.exec("echo x > .bashrc");
    expect(result.sandboxNotes).toEqual([`sandbox: writing .bashrc was refused: ${BASHRC}`]);
  });

  it("a hidden file reads as 'Permission denied', not as empty", async () => {
    const { root, outside } = await workspace();
    const client = await sandbox(root, outside, "read-only");
    const result = await client.exec(`wc -c < ${outside}/token`);
    expect(result.stderr).toContain("Permission denied");
    expect(result.stdout).toBe("");
  });

  it("the same error on a path the policy does not cover gets no line", async () => {
    const { root, outside } = await workspace();
    const client = await sandbox(root, outside, "workspace-write");
    await writeFile(path.join(root, "mine"), "x");
    for (const command of [
      // The sandbox drops every capability, so even root cannot read a file of mode 000.
      "chmod 000 mine && cat mine",
      "echo \"touch: cannot touch 'notes.txt': Read-only file system\" >&2; exit 1",
      "echo \"touch: cannot touch '/tmp/x': Read-only file system\" >&2; exit 1",
      "ls /no-such-folder",
    ]) {
      const result = await client.exec(command);
      expect(result.exitCode, command).not.toBe(0);
      expect(result.sandboxNotes, command).toBeUndefined();
    }
  });

  it("a successful command gets none, even when it prints the same words", async () => {
    const { root, outside } = await workspace();
    const client = await sandbox(root, outside, "workspace-write");
    const result = await client.exec(
      "touch notes.txt && echo 'Could not resolve host: x' && cat .bashrc",
    );
    expect(result.exitCode).toBe(0);
    expect(result.sandboxNotes).toBeUndefined();
  });

  it("the network being on, or danger-full-access, gets none", async () => {
    const { root, outside } = await workspace();
    const online = await sandbox(root, outside, "workspace-write", true);
    const lookup = await online.exec("git ls-remote https://example.invalid/x.git");
    expect(lookup.exitCode).not.toBe(0);
    expect(lookup.sandboxNotes).toBeUndefined();

    const unconfined = await sandbox(root, outside, "danger-full-access");
    for (const command of [
      'echo "bash: .bashrc: Read-only file system" >&2; exit 1',
      "git ls-remote https://example.invalid/x.git",
      `echo "cat: ${outside}/token: Permission denied" >&2; exit 1`,
    ]) {
      const result = await unconfined.exec(command);
      expect(result.exitCode, command).not.toBe(0);
      expect(result.sandboxNotes, command).toBeUndefined();
    }
  });
});
