import { realpath } from "node:fs/promises";
import path from "node:path";
import { ToolError } from "@pleach/core";
import type {
  ExecOptions,
  ExecResult,
  FileEncodingOptions,
  ReadFileOptions,
  SandboxCheckpoints,
  SandboxClient,
  SandboxJobs,
  SandboxMode,
} from "@pleach/core/sandbox";
import { checkExecOptions, checkFileContent, fileEncodingOf } from "@pleach/core/sandbox";
import { createCheckpoints } from "./checkpoints/checkpoints.js";
import type { LocalSandboxOptions } from "./local-sandbox-options.js";
import { JobLooks } from "./made-by-commands/job-looks.js";
import { parseNetworkOption } from "./network/domain-rules.js";
import { refusalNotes } from "./network/proxy-log.js";
import { checkCommandLength } from "./os/command-text.js";
import {
  type CommandWrapper,
  hiddenWith,
  protectionWith,
  type WorkspaceLook,
} from "./os/command-wrapper.js";
import { createCommandWrapper } from "./os/create-command-wrapper.js";
import { failureNotes } from "./os/failure-notes.js";
import { runWarm } from "./os/session-run.js";
import { sessionServerSupported } from "./os/session-server.js";
import { fromErrno } from "./paths.js";
import type { HiddenScope } from "./policy/hidden-reads.js";
import type { WorkspaceProtection } from "./policy/protection.js";
import { writableFolders } from "./policy/writable-folders.js";
import { readLimitOf } from "./read-limit.js";
import { runProcess } from "./run-process.js";
import { LocalSession } from "./session/local-session.js";
import { readWorkspaceFile, workspaceFolder, writeWorkspaceFile } from "./workspace-files.js";
import { workspaceRoot } from "./workspace-root.js";

export type { LocalSandboxOptions } from "./local-sandbox-options.js";

/** Options of {@link LocalSandbox.exec}: the contract's, and a hook to stream output. */
export interface LocalExecOptions extends ExecOptions {
  /**
   * Called with each piece of output as it is read, decoded as UTF-8, up to `maxOutputBytes` per
   * stream; the result still holds the bounded output as usual.
   */
  onOutput?: (stream: "stdout" | "stderr", text: string) => void;
}

/** The local sandbox: a {@link SandboxClient} over a folder of this machine. */
export interface LocalSandbox extends SandboxClient {
  exec(command: string, options?: LocalExecOptions): Promise<ExecResult>;
  /** The workspace root's real path. */
  readonly root: string;
  readonly mode: SandboxMode;
  /** The OS sandbox that confines commands (`"none"` without one). */
  readonly backend: CommandWrapper["backend"];
  /**
   * What host-side writers of this workspace refuse (`PROTECTED_PATH`), judged on the path as
   * walked: the policy commands run under, and, while a session keeps outputs, their folder.
   * The server's file route writes by it.
   */
  protection(): Promise<WorkspaceProtection>;
  /** Background jobs, with `session` (absent without). */
  readonly jobs?: SandboxJobs;
  /** Checkpoints of the workspace, kept outside it (see `createCheckpoints`). */
  readonly checkpoints: SandboxCheckpoints;
  /**
   * End the session (with `session`): kill every job and command of it and drop its kept outputs.
   * The client must not be used afterwards. Without `session` there is nothing to end.
   */
  close(): Promise<void>;
}

const MAX_TIMER_MS = 2_147_483_647;

/**
 * Create a {@link SandboxClient} over the folder `root`. File paths are confined to the folder in
 * every mode, walked from the root without letting the kernel follow a symlink (see `locate`); writes are atomic and refused in `read-only`; commands run confined by
 * the OS sandbox, or, without one, only in `danger-full-access`.
 */
export async function createLocalSandbox({
  root,
  mode = "workspace-write",
  network = false,
  defaultTimeoutMs = 600_000,
  defaultMaxOutputBytes = 10 * 1024 * 1024,
  maxFileBytes = 100 * 1024 * 1024,
  hideReads,
  allowReads,
  allowGitWrites,
  caches,
  allowWrites,
  commandWrapper: givenWrapper,
  session: sessionOption = false,
}: LocalSandboxOptions): Promise<LocalSandbox> {
  if (
    givenWrapper !== undefined &&
    (hideReads !== undefined ||
      allowReads !== undefined ||
      allowGitWrites !== undefined ||
      caches !== undefined ||
      allowWrites !== undefined)
  ) {
    throw new ToolError(
      "INVALID_INPUT",
      "hideReads, allowReads, allowGitWrites, caches and allowWrites belong to the commandWrapper when one is given: pass them to createCommandWrapper",
    );
  }
  const networkAccess = parseNetworkOption(network);
  const commandWrapper =
    givenWrapper ??
    createCommandWrapper({
      ...(hideReads === undefined ? {} : { hideReads }),
      ...(allowReads === undefined ? {} : { allowReads }),
      ...(allowGitWrites === undefined ? {} : { allowGitWrites }),
      ...(caches === undefined ? {} : { caches }),
      ...(allowWrites === undefined ? {} : { allowWrites }),
    });
  if (!["read-only", "workspace-write", "danger-full-access"].includes(mode)) {
    throw new ToolError("INVALID_INPUT", `unknown sandbox mode ${JSON.stringify(mode)}`);
  }
  const rootGiven = path.resolve(root);
  let rootReal: string;
  try {
    rootReal = await realpath(rootGiven);
  } catch (error) {
    throw fromErrno(error, root);
  }
  const workspace = workspaceRoot(rootGiven, rootReal);
  // Folders that cannot be written are refused now, as they would be at every command.
  if (allowWrites !== undefined && allowWrites.length > 0 && mode !== "danger-full-access") {
    writableFolders({
      given: allowWrites,
      root: rootReal,
      hiddenPaths: hiddenWith(commandWrapper, rootReal, mode, "host"),
      hostEnvironment: process.env,
    });
  }
  // What host-side writers refuse: the one policy (the session's kept outputs are outside the
  // workspace, where no writer of the file tools reaches).
  const protection = async () => {
    await repositoriesOfJobs();
    return protectionWith(commandWrapper, rootReal);
  };
  // A session's jobs run between calls: what they made since the last look (at protected paths,
  // repositories) is moved aside or made inert before a host-side tool call and before and when the
  // next command ends, with its notes in that command's result.
  const jobLooks: JobLooks = new JobLooks(
    commandWrapper,
    rootReal,
    async (): Promise<boolean> => session !== undefined && (await session.jobs.list()).length > 0,
  );
  const repositoriesOfJobs = (): Promise<void> =>
    mode === "workspace-write" ? jobLooks.look() : Promise.resolve();
  // The file tools run unconfined on the host: they refuse what commands cannot read.
  const hidden = (scope: HiddenScope) => hiddenWith(commandWrapper, rootReal, mode, scope);
  const prepare = async (
    command: string,
    { cwd = "", env = {} }: { cwd?: string; env?: Record<string, string> },
    session: boolean,
    since?: WorkspaceLook,
  ) => {
    // The first command of a session (a job, maybe) takes the look its jobs are compared with.
    if (session && mode === "workspace-write") await jobLooks.start();
    return commandWrapper.invocation({
      command,
      root: rootReal,
      cwd: workspaceFolder(workspace, cwd),
      mode,
      env,
      network: networkAccess,
      session,
      ...(since === undefined ? {} : { since }),
    });
  };
  const sessionCanRun =
    mode !== "danger-full-access" &&
    commandWrapper.backend === "bubblewrap" &&
    sessionServerSupported();
  const session =
    sessionOption === false
      ? undefined
      : new LocalSession(
          rootReal,
          (command, options) => prepare(command, options, true),
          sessionOption === true ? {} : sessionOption,
          () => repositoriesOfJobs(),
        );

  return {
    root: rootReal,
    mode,
    backend: commandWrapper.backend,
    // Jobs only where a session sandbox can run: elsewhere the tools refuse, saying why.
    ...(session === undefined || !sessionCanRun ? {} : { jobs: session.jobs }),
    checkpoints: createCheckpoints({ root: workspace, mode, protection, hidden }),
    close: async () => {
      // What the session's jobs made since the last look is made inert once they are ended, so
      // nothing of theirs outlives the session live (no command comes after to carry a note).
      const since = mode === "workspace-write" ? await jobLooks.since() : undefined;
      await session?.close();
      if (since !== undefined) await commandWrapper.madeSince?.(rootReal, since);
      if (givenWrapper === undefined) await commandWrapper.close?.();
    },
    protection,

    async readFile(filePath: string, options: ReadFileOptions = {}) {
      const encoding = fileEncodingOf(options);
      // A kept output (exactly `/run/pleach-output/NAME`) is read through the session sandbox,
      // before the rule that refuses absolute paths outside the workspace; nothing else passes.
      const keptName = session?.keptName(filePath);
      if (keptName !== undefined) {
        const limit = Math.min(maxFileBytes, readLimitOf(options.maxBytes) ?? maxFileBytes);
        return (await session?.readKept(keptName, limit))?.toString(encoding) ?? "";
      }
      const bytes = await readWorkspaceFile({
        root: workspace,
        filePath: nonEmpty(filePath),
        maxFileBytes,
        maxBytes: readLimitOf(options.maxBytes),
        hidden,
        protection,
      });
      return bytes.toString(encoding);
    },

    async writeFile(filePath: string, content: string, options: FileEncodingOptions = {}) {
      const encoding = fileEncodingOf(options);
      checkFileContent(content, encoding);
      await writeWorkspaceFile({
        root: workspace,
        filePath: nonEmpty(filePath),
        bytes: Buffer.from(content, encoding),
        mode,
        protection,
        hidden,
      });
    },

    async exec(command: string, options: LocalExecOptions = {}): Promise<ExecResult> {
      if (typeof command !== "string" || command.trim() === "") {
        throw new ToolError("INVALID_INPUT", "exec needs a non-empty command string");
      }
      if (command.includes("\0"))
        throw new ToolError("INVALID_INPUT", "the command contains a NUL byte");
      checkCommandLength(command);
      const {
        cwd = "",
        timeoutMs = defaultTimeoutMs,
        env = {},
        stdin,
        abortSignal,
        maxOutputBytes = defaultMaxOutputBytes,
        onOutput,
      } = options;
      const { fullOutputOverBytes } = options;
      checkExecOptions({ timeoutMs, maxOutputBytes, env, stdin, fullOutputOverBytes });
      const directory = workspaceFolder(workspace, cwd);
      // What the jobs made so far is moved aside before this command's policy is found (it would
      // be protected as it stands); what they make while it runs, when it ends.
      await repositoriesOfJobs();
      const since = await jobLooks.since();
      const invocation = await prepare(command, { cwd, env }, session !== undefined, since);
      // Bubblewrap enters the folder itself (--chdir, inside the sandbox), so it starts from the
      // root, which a command cannot rename or remove: a folder swapped meanwhile cannot make the
      // launch fail. Other launchers start in the folder.
      const confinedByBubblewrap =
        mode !== "danger-full-access" && commandWrapper.backend === "bubblewrap";
      try {
        const stopped = [abortSignal, invocation.stop].filter(
          (signal): signal is AbortSignal => signal !== undefined,
        );
        const runOptions = {
          stdin,
          timeoutMs: Math.min(timeoutMs, MAX_TIMER_MS),
          abortSignal: stopped.length > 1 ? AbortSignal.any(stopped) : stopped[0],
          maxOutputBytes,
          onOutput,
        };
        // A session's command runs in its sandbox, a burst's in the wrapper's warm one; either
        // runs apart, one-off, when that sandbox cannot take it.
        const inSandbox = invocation.kind === "session" ? invocation : undefined;
        const chosen =
          inSandbox?.warm === undefined ? await session?.sandboxFor(inSandbox) : undefined;
        const refusalMark = chosen?.sandbox?.refusalCount ?? 0;
        let inSession: ExecResult | undefined;
        if (inSandbox?.warm !== undefined) {
          if (stdin === undefined) {
            inSession = await runWarm(inSandbox.warm, inSandbox.command, runOptions);
          }
        } else if (inSandbox !== undefined && chosen?.sandbox !== undefined) {
          inSession = await session?.run(chosen.sandbox, inSandbox, {
            ...runOptions,
            fullOutputOverBytes,
          });
        }
        const result =
          inSession ??
          (await runProcess(invocation, {
            ...runOptions,
            cwd: confinedByBubblewrap ? rootReal : directory,
          }));
        // Released before the result is read: it makes inert what the command made (its notes).
        await invocation.release();
        // The notes that tie a failure to a rule: the policy's own (a protected path, a hidden
        // file, ...), and, for a failed command, what the domain proxy refused it.
        const { confinement } = invocation;
        const refused =
          result.exitCode !== 0
            ? chosen?.sandbox === undefined || inSession === undefined
              ? refusalNotes(confinement?.proxyLog ?? [])
              : chosen.sandbox.refusalsSince(refusalMark)
            : [];
        const notes =
          confinement === undefined
            ? refused
            : failureNotes({ result, policy: confinement.policy, command, proxyNotes: refused });
        if (chosen?.note !== undefined) notes.push(chosen.note);
        const afterwards = confinement?.afterwards;
        if (afterwards !== undefined && session !== undefined) jobLooks.seen(afterwards.look);
        notes.push(
          ...jobLooks.takeNotes(),
          ...(afterwards?.notes ?? []),
          ...(confinement?.notes ?? []),
        );
        return notes.length === 0 ? result : { ...result, sandboxNotes: notes };
      } catch (error) {
        // Stopped by the wrapper, not the caller: it says why, and what it moved aside.
        if (invocation.stop?.aborted === true && abortSignal?.aborted !== true) {
          await invocation.release();
          const said = invocation.confinement?.afterwards?.notes ?? [];
          throw new ToolError(
            "PROTECTED_PATH",
            said.join(" ") || "the command was stopped: it made a protected path",
            { details: { notes: said } },
          );
        }
        throw error;
      } finally {
        // The process group is gone by now; undo what the wrapper set up for it.
        await invocation.release();
      }
    },
  };
}

function nonEmpty(filePath: unknown): unknown {
  if (filePath === "") throw new ToolError("INVALID_PATH", "the path is empty");
  return filePath;
}
