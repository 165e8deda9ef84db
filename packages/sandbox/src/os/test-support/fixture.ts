import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, readdir, realpath, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { SandboxMode } from "@pleach/core";
import type { ExecResult } from "@pleach/core/sandbox";
import { forceRemove, hostState } from "@pleach/core/testing";
import { createLocalSandbox, type LocalSandbox } from "../../local-sandbox.js";
import { MADE_BY_COMMAND } from "../../made-by-commands/moved-aside.js";
import { type NetworkOption, parseNetworkOption } from "../../network/domain-rules.js";
import { GIT_RUN_ENTRIES } from "../../policy/protected-entries.js";
import type { WarmRunOptions } from "../../run-options.js";
import type { CommandInvocation, CommandWrapper, InvocationRequest } from "../command-wrapper.js";
import { createCommandWrapper } from "../create-command-wrapper.js";
import { runWarm as runInWarm } from "../session-run.js";
import { type RunResult, runInvocation } from "./run-invocation.js";

/** A workspace to attack, and the host paths around it that must not change. */
export interface AttackFixture {
  /** Real path of the workspace: a git repository with a nested repository at `vendor/lib`. */
  root: string;
  /** A folder outside the workspace and outside `/tmp` (under `/var/tmp`), readable in the sandbox. */
  outside: string;
  /** A folder in the host's `/tmp` beside the workspace, hidden by the private `/tmp`. */
  hostTemporary: string;
  /**
   * Whether the sandbox lets commands write git's objects, refs, index, `HEAD` and logs
   * (`allowGitWrites`): a case whose truth changes with it asks, and a wrapper or client a case
   * makes itself takes the same option. Set already when the cases are declared (for their names).
   */
  gitWrites: boolean;
  /** The host's state at the workspace, the outside folders and `extraPaths`. */
  state(extraPaths?: readonly string[]): Promise<Record<string, string>>;
  /**
   * Run `command` through the real wrapper and launcher: the fixture's own wrapper (so runs share
   * its cached host facts) unless `hostEnvironment` asks for another one.
   */
  run(command: string, options?: SandboxRunOptions): Promise<RunResult>;
  /** A client of the workspace's sandbox, as a user has one: commands and the file route. */
  client(): Promise<AttackClient>;
  cleanup(): Promise<void>;
}

/** What the cases ask of a sandbox client: a command, and a write through the file route. */
export interface AttackClient {
  exec(command: string): Promise<ExecResult>;
  writeFile(file: string, content: string): Promise<unknown>;
}

/** Options of {@link AttackFixture.run}. */
export interface SandboxRunOptions {
  /** @default "workspace-write" */
  mode?: SandboxMode;
  /** As `createLocalSandbox`'s; a domain list never runs in a warm sandbox. @default false */
  network?: NetworkOption;
  env?: Record<string, string>;
  /** @default process.env */
  hostEnvironment?: Readonly<Record<string, string | undefined>>;
  /** Folder inside the workspace. @default the root */
  cwd?: string;
  stdin?: string;
  /** The wrapper to run through. @default the fixture's own */
  wrapper?: CommandWrapper;
}

const GIT_IDENTITY = ["-c", "user.name=pleach", "-c", "user.email=pleach@example.invalid"];

function git(cwd: string, ...args: string[]): void {
  execFileSync("git", [...GIT_IDENTITY, ...args], { cwd, stdio: "ignore" });
}

/** Options of {@link createAttackFixture}. */
export interface AttackFixtureOptions {
  /**
   * Run each command in a warm sandbox (see the wrapper's `warmSandbox`), right after another
   * command ran in that same sandbox; commands with stdin still get a sandbox of their own.
   * @default false
   */
  warm?: boolean;
  /**
   * Run each command as a background job of a session of its own (`createLocalSandbox` with
   * `session`), waiting for it to end: its output is stdout and stderr together, and it takes no
   * stdin.
   * @default false
   */
  jobs?: boolean;
  /** Make every wrapper and client with `allowGitWrites`. @default false */
  gitWrites?: boolean;
}

/** Warm sandboxes stay up across a whole test; each run's `close` stops them. */
const WARM_IDLE_MS = 60_000;

/**
 * Run `request` in a warm sandbox of `runner`: `true` runs until one is up (and once more in it),
 * then the command itself. Fails if the command would not run warm.
 */
async function runWarm(
  runner: CommandWrapper,
  request: InvocationRequest,
  timeoutMs = 20_000,
): Promise<RunResult> {
  for (let attempt = 0; ; attempt += 1) {
    const warmUp = await runner.invocation({ ...request, command: "true", env: {} });
    const ran = inWarmSandbox(warmUp, { timeoutMs, maxOutputBytes: 1024 });
    try {
      if (ran !== undefined) {
        await ran;
        break;
      }
      if (attempt >= 200) throw new Error("no warm sandbox started after 200 commands");
      await runInvocation(warmUp);
    } finally {
      await warmUp.release?.();
    }
  }
  const invocation = await runner.invocation(request);
  try {
    const ran = inWarmSandbox(invocation, { timeoutMs, maxOutputBytes: 1024 * 1024 });
    if (ran === undefined) throw new Error("the command did not run in the warm sandbox");
    const { exitCode, stdout, stderr } = await ran;
    return { exitCode, stdout, stderr };
  } finally {
    await invocation.release?.();
  }
}

/** Run `invocation` in the wrapper's warm sandbox it was given, if it was given one. */
function inWarmSandbox(invocation: CommandInvocation, options: WarmRunOptions) {
  return invocation.kind === "session" && invocation.warm !== undefined
    ? runInWarm(invocation.warm, invocation.command, options)
    : undefined;
}

/** Run `request` as the one job of a session of its own, to its end. */
async function runAsJob(
  runner: CommandWrapper,
  {
    command,
    root,
    cwd,
    mode,
    env,
    network,
  }: Omit<InvocationRequest, "network"> & { network: NetworkOption },
): Promise<RunResult> {
  const client = await createLocalSandbox({
    root,
    mode,
    network,
    commandWrapper: runner,
    session: true,
  });
  try {
    if (client.jobs === undefined) throw new Error("this host runs no session sandbox");
    const job = await client.jobs.start(command, { cwd, env });
    let stdout = "";
    let since = 0;
    for (;;) {
      const read = await client.jobs.output(job.jobId, { since, waitMs: 20_000 });
      stdout += read.output;
      since = read.next;
      if (read.job.state !== "running" && read.output === "") {
        return { exitCode: read.job.exitCode ?? -1, stdout, stderr: "" };
      }
    }
  } finally {
    await client.close();
  }
}

/**
 * Fill the fixture's folders (each existing and empty): a secret outside, a note in the host's
 * `/tmp`, and in the workspace a repository, a nested repository, an editor folder and a link to
 * the outside folder.
 */
export async function populateAttackFolders({
  root,
  outside,
  hostTemporary,
}: Pick<AttackFixture, "root" | "outside" | "hostTemporary">): Promise<void> {
  await writeFile(path.join(outside, "secret.txt"), "outside\n");
  await writeFile(path.join(hostTemporary, "note.txt"), "host tmp\n");

  git(root, "init", "-q");
  await mkdir(path.join(root, "src"));
  await writeFile(path.join(root, "src", "app.txt"), "hello\n");
  await mkdir(path.join(root, ".vscode"));
  await writeFile(path.join(root, ".vscode", "settings.json"), "{}\n");
  git(root, "add", ".");
  git(root, "commit", "-q", "-m", "initial");
  await mkdir(path.join(root, "vendor", "lib"), { recursive: true });
  git(path.join(root, "vendor", "lib"), "init", "-q");
  await writeFile(path.join(root, "vendor", "lib", "lib.txt"), "lib\n");
  await symlink(outside, path.join(root, "escape"));
}

/** A fresh workspace with a repository, a nested repository, an editor folder and an escaping link. */
export async function createAttackFixture({
  warm = false,
  jobs = false,
  gitWrites = false,
}: AttackFixtureOptions = {}): Promise<AttackFixture> {
  const root = await realpath(await mkdtemp(path.join(os.tmpdir(), "pleach-attack-")));
  const hostTemporary = await realpath(await mkdtemp(path.join(os.tmpdir(), "pleach-host-")));
  const outside = await realpath(await mkdtemp("/var/tmp/pleach-outside-"));
  await populateAttackFolders({ root, outside, hostTemporary });

  // One wrapper for the fixture's runs, as a client has: later runs revalidate cached host facts.
  const wrapperOptions = {
    ...(warm ? { warmIdleMs: WARM_IDLE_MS } : {}),
    ...(gitWrites ? { allowGitWrites: true } : {}),
  };
  const wrapper = createCommandWrapper(wrapperOptions);
  const clients: LocalSandbox[] = [];
  return {
    root,
    outside,
    hostTemporary,
    gitWrites,
    state: (extraPaths = []) => hostState([root, outside, hostTemporary, ...extraPaths]),
    async run(
      command,
      {
        mode = "workspace-write",
        network = false,
        env = {},
        hostEnvironment,
        cwd,
        stdin,
        wrapper: chosen,
      } = {},
    ) {
      const runner =
        chosen ??
        (hostEnvironment === undefined
          ? wrapper
          : createCommandWrapper({ ...wrapperOptions, hostEnvironment }));
      try {
        const access = parseNetworkOption(network);
        const request = { command, root, cwd: cwd ?? root, mode, env, network: access };
        if (jobs) {
          if (stdin !== undefined) throw new Error("a job of the attack fixture takes no stdin");
          return await runAsJob(runner, { ...request, network });
        }
        // The whole network goes through a proxy of the command's own, as a domain list does.
        if (warm && chosen === undefined && stdin === undefined && access === false)
          return await runWarm(runner, request);
        const invocation = await runner.invocation(request);
        return await runInvocation(invocation, stdin === undefined ? {} : { stdin });
      } finally {
        await runner.close?.();
      }
    },
    async client() {
      // A wrapper of its own: it looks at the host afresh, whatever the fixture's runs cached.
      const client = await createLocalSandbox({
        root,
        commandWrapper: createCommandWrapper(gitWrites ? { allowGitWrites: true } : {}),
      });
      clients.push(client);
      return client;
    },
    async cleanup() {
      for (const client of clients.splice(0)) await client.close();
      for (const folder of [root, outside, hostTemporary]) await forceRemove(folder);
    },
  };
}

/**
 * The workspace-relative paths of what pleach moved aside in `root` (`NAME.made-by-command`, see
 * `moveAsideAppeared`), sorted, each removed once listed: a case then compares the host with how
 * it was before.
 */
export async function takeMovedAside(root: string): Promise<string[]> {
  const found: string[] = [];
  const visit = async (folder: string) => {
    for (const entry of await readdir(folder, { withFileTypes: true })) {
      const full = path.join(folder, entry.name);
      if (entry.name.includes(MADE_BY_COMMAND)) found.push(path.relative(root, full));
      else if (entry.isDirectory()) await visit(full);
    }
  };
  await visit(root);
  for (const each of found) await forceRemove(path.join(root, each));
  return found.sort();
}

/**
 * `state` (as {@link AttackFixture.state} gives it) without what commands may change when the
 * fixture has git writes: inside a `.git` folder every entry but {@link GIT_RUN_ENTRIES}, which
 * stay protected, as does the `.git` folder itself. Without git writes, the whole `state`.
 */
export function unwrittenByGit(
  { gitWrites }: Pick<AttackFixture, "gitWrites">,
  state: Readonly<Record<string, string>>,
): Record<string, string> {
  if (!gitWrites) return { ...state };
  const kept: Record<string, string> = {};
  for (const [entry, value] of Object.entries(state)) {
    const segments = entry.split(path.sep);
    const at = segments.indexOf(".git");
    const inside = at < 0 ? "" : segments.slice(at + 1).join("/");
    const written =
      inside !== "" &&
      !GIT_RUN_ENTRIES.some((name) => inside === name || inside.startsWith(`${name}/`));
    if (!written) kept[entry] = value;
  }
  return kept;
}

/**
 * A shell step that prints `BLOCKED` when it fails and `ESCAPED` when it succeeds, so one command
 * can try several things and the test can read the verdicts.
 */
export function attempt(step: string): string {
  return `if ( ${step} ) >/dev/null 2>&1; then echo ESCAPED; else echo BLOCKED; fi`;
}

/** The verdict lines `attempt` printed. */
export function verdicts(stdout: string): string[] {
  return stdout.split("\n").filter((line) => line === "BLOCKED" || line === "ESCAPED");
}
