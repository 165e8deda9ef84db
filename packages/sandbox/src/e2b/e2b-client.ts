import path from "node:path";
import { ToolError } from "@pleach/core";
import {
  checkExecOptions,
  checkFileContent,
  type ExecOptions,
  type ExecResult,
  type FileEncodingOptions,
  fileEncodingOf,
  type ReadFileOptions,
  type SandboxClient,
  type SandboxJobs,
} from "@pleach/core/sandbox";
import type { CommandHandle, Sandbox } from "e2b";
import { CommandOutput } from "../bounded-output.js";
import { isInside } from "../paths.js";
import { toolErrorOfE2B } from "./e2b-errors.js";
import { createE2BJobs } from "./e2b-jobs.js";

/** Options of {@link createE2BSandboxClient}. */
export interface E2BSandboxClientOptions {
  /**
   * The workspace root inside the sandbox; paths are confined to it.
   * @default the folder a command starts in (`pwd`): `/home/user` on E2B, the workspace on
   * `pleach sandbox serve --protocol e2b`
   */
  root?: string;
  /**
   * Time limit of a command when the call gives none, in milliseconds.
   * @default 600_000
   */
  defaultTimeoutMs?: number;
  /**
   * Bytes kept of each of stdout and stderr when the call gives no bound.
   * @default 10_485_760
   */
  defaultMaxOutputBytes?: number;
  /**
   * Limits of background jobs (`client.jobs`): jobs at once, bytes of output kept per job.
   * @default { maxJobs: 8, maxOutputBytes: 1_048_576 }
   */
  jobs?: { maxJobs?: number; maxOutputBytes?: number };
}

/** A {@link SandboxClient} over an E2B sandbox, with its jobs. */
export interface E2BSandboxClient extends SandboxClient {
  readonly root: string;
  readonly jobs: SandboxJobs;
  /** End its jobs' bookkeeping (the sandbox itself is the caller's to kill). */
  close(): void;
}

/** The most bytes of stdin passed to a command (it travels in an environment variable). */
const MAX_STDIN_BYTES = 96 * 1024;

/**
 * A {@link SandboxClient} over an e2b SDK `Sandbox` the caller has: `exec` is `commands.run`
 * (a non-zero exit is data, never `CommandExitError`; the time limit, abort and output bounds are
 * this client's, with pleach's shapes), `readFile`/`writeFile` are `files.read`/`files.write`,
 * paths confined to `root`, and `jobs` are background commands. The sandbox's own isolation (an
 * E2B microVM, or pleach's OS sandbox behind `pleach sandbox serve --protocol e2b`) confines what
 * commands do.
 */
export async function createE2BSandboxClient(
  sandbox: Sandbox,
  {
    root: givenRoot,
    defaultTimeoutMs = 600_000,
    defaultMaxOutputBytes = 10 * 1024 * 1024,
    jobs: jobLimits = {},
  }: E2BSandboxClientOptions = {},
): Promise<E2BSandboxClient> {
  const root =
    givenRoot ??
    (
      await sandbox.commands.run("pwd").catch((error: unknown) => {
        throw toolErrorOfE2B(error, "finding the sandbox's workspace (pwd)");
      })
    ).stdout.trim();
  const resolve = (requested: unknown): string => {
    if (typeof requested !== "string" || requested === "" || requested.includes("\0")) {
      throw new ToolError(
        "INVALID_PATH",
        `a path must be a non-empty string without NUL bytes, got ${JSON.stringify(requested)}`,
      );
    }
    const absolute = path.resolve(root, requested);
    if (!isInside(root, absolute)) {
      throw new ToolError(
        "PATH_ESCAPE",
        `${requested} is outside the workspace ${root}; give a path inside it`,
      );
    }
    return absolute;
  };
  /** Why a file call failed: the entry that stands there says it better than the SDK's class. */
  const fileError = async (error: unknown, file: string, what: string): Promise<ToolError> => {
    const info = await sandbox.files.getInfo(file).catch(() => undefined);
    if (info === undefined && error instanceof Error && /NotFound/.test(error.name)) {
      return new ToolError("NOT_FOUND", `${file} does not exist`);
    }
    if (info?.type === "dir") return new ToolError("NOT_A_FILE", `${file} is a folder, not a file`);
    return toolErrorOfE2B(error, `${what} ${file}`);
  };
  /**
   * The bytes of a file, streamed: past `maxBytes` the read stops and the file is refused, so a
   * huge file the sandbox made is never held whole.
   */
  const readAtMost = async (absolute: string, maxBytes: number | undefined): Promise<Buffer> => {
    const stream = await sandbox.files.read(absolute, { format: "stream" });
    const chunks: Uint8Array[] = [];
    let bytes = 0;
    for await (const chunk of stream) {
      bytes += chunk.length;
      if (maxBytes !== undefined && bytes > maxBytes) {
        throw new ToolError(
          "TOO_LARGE",
          `${absolute} is over the ${maxBytes} bytes asked for (${bytes} read before stopping); read a smaller file or a part of it`,
          { details: { bytes, maxBytes } },
        );
      }
      chunks.push(chunk);
    }
    return Buffer.concat(chunks);
  };
  const cwdOf = async (cwd: string | undefined): Promise<string> => {
    // The tools name the workspace root as "" too.
    if (cwd === undefined || cwd === "") return root;
    const absolute = resolve(cwd);
    const info = await sandbox.files.getInfo(absolute).catch((error: unknown) => {
      if (error instanceof Error && /NotFound/.test(error.name)) {
        throw new ToolError("NOT_FOUND", `the folder ${cwd} does not exist`);
      }
      throw toolErrorOfE2B(error, `cwd ${cwd}`);
    });
    if (info.type !== "dir") throw new ToolError("NOT_A_DIRECTORY", `${cwd} is not a folder`);
    return absolute;
  };
  const jobs = createE2BJobs(sandbox, {
    cwdOf,
    limits: {
      maxJobs: jobLimits.maxJobs ?? 8,
      maxOutputBytes: jobLimits.maxOutputBytes ?? 1024 * 1024,
    },
  });

  const exec = async (command: string, options: ExecOptions = {}): Promise<ExecResult> => {
    checkExecOptions(options);
    if (typeof command !== "string" || command.trim() === "") {
      throw new ToolError("INVALID_INPUT", "exec needs a non-empty command string");
    }
    const { stdin, env = {}, abortSignal } = options;
    if (stdin !== undefined && Buffer.byteLength(stdin) > MAX_STDIN_BYTES) {
      throw new ToolError(
        "TOO_LARGE",
        `stdin over E2B is at most ${MAX_STDIN_BYTES} bytes; write the input to a file and have the command read it`,
      );
    }
    abortSignal?.throwIfAborted?.();
    const cwd = await cwdOf(options.cwd);
    const timeoutMs = options.timeoutMs ?? defaultTimeoutMs;
    const output = new CommandOutput(options.maxOutputBytes ?? defaultMaxOutputBytes, undefined);
    // Stdin travels in a variable the command does not see, piped in; without it, none.
    const script =
      stdin === undefined
        ? command
        : `printf %s "$PLEACH_STDIN" | { unset PLEACH_STDIN; ${command}\n}`;
    const started = performance.now();
    const handle: CommandHandle = await sandbox.commands
      .run(script, {
        background: true,
        cwd,
        envs: stdin === undefined ? env : { ...env, PLEACH_STDIN: stdin },
        timeoutMs: timeoutMs + 30_000,
        onStdout: (data) => output.onStdout(Buffer.from(data)),
        onStderr: (data) => output.onStderr(Buffer.from(data)),
      })
      .catch((error: unknown) => {
        throw toolErrorOfE2B(error, "exec");
      });
    let timedOut = false;
    let aborted = false;
    const timer = setTimeout(() => {
      timedOut = true;
      void handle.kill().catch(() => false);
    }, timeoutMs);
    const onAbort = () => {
      aborted = true;
      void handle.kill().catch(() => false);
    };
    abortSignal?.addEventListener("abort", onAbort, { once: true });
    try {
      const exitCode = await handle.wait().then(
        (result) => result.exitCode,
        (error: { name?: string; exitCode?: number }) => {
          if (error.name === "CommandExitError" && typeof error.exitCode === "number")
            return error.exitCode;
          throw toolErrorOfE2B(error, "exec");
        },
      );
      if (aborted) throw new ToolError("ABORTED", "the command was aborted");
      const killed = exitCode < 0 || timedOut;
      return output.result({
        exitCode: killed ? null : exitCode,
        signal: killed ? "SIGKILL" : null,
        started,
        timedOut,
      });
    } finally {
      clearTimeout(timer);
      abortSignal?.removeEventListener("abort", onAbort);
    }
  };

  return {
    root,
    jobs,
    exec,
    async readFile(file: string, options?: ReadFileOptions) {
      const encoding = fileEncodingOf(options);
      const absolute = resolve(file);
      const bytes = await readAtMost(absolute, options?.maxBytes).catch(async (error: unknown) => {
        throw await fileError(error, absolute, "readFile");
      });
      return bytes.toString(encoding);
    },
    async writeFile(file: string, content: string, options?: FileEncodingOptions) {
      const encoding = fileEncodingOf(options);
      checkFileContent(content, encoding);
      const absolute = resolve(file);
      const bytes = Buffer.from(content, encoding);
      await sandbox.files
        .write(
          absolute,
          bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length) as ArrayBuffer,
        )
        .catch(async (error: unknown) => {
          throw await fileError(error, absolute, "writeFile");
        });
    },
    close: () => jobs.close(),
  };
}
