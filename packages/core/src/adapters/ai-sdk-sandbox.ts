import { isToolError } from "../errors.js";
import type { ExecResult, SandboxClient } from "../sandbox/contract.js";

/**
 * The `Experimental_SandboxSession` of `ai@7`, written out here so that this module builds
 * against `ai@6` too (which has none); `ai@7` checks a session structurally, and the tests pass
 * one to `ai@7` as its own type.
 */
export interface AISDKSandboxSession {
  readonly description: string;
  readonly readFile: (options: PathOptions) => Promise<ReadableStream<Uint8Array> | null>;
  readonly readBinaryFile: (options: PathOptions) => Promise<Uint8Array | null>;
  readonly readTextFile: (
    options: PathOptions & { encoding?: string; startLine?: number; endLine?: number },
  ) => Promise<string | null>;
  readonly writeFile: (options: WriteOptions<ReadableStream<Uint8Array>>) => Promise<void>;
  readonly writeBinaryFile: (options: WriteOptions<Uint8Array>) => Promise<void>;
  readonly writeTextFile: (options: WriteOptions<string> & { encoding?: string }) => Promise<void>;
  readonly stat: (
    options: PathOptions,
  ) => Promise<{ type: "file" | "directory" | "other"; size: number } | null>;
  readonly listDirectory: (options: PathOptions) => Promise<Array<{
    name: string;
    type: "file" | "directory" | "symlink" | "other";
  }> | null>;
  readonly deleteFile: (options: PathOptions) => Promise<boolean>;
  /** Refuses `stdin: true` (the first overload, there for the AI SDK's type). */
  readonly spawn: {
    (
      options: ProcessOptions & { stdin: true },
    ): Promise<AISDKSandboxProcess & { readonly stdin: WritableStream<Uint8Array> }>;
    (options: SpawnOptions): Promise<AISDKSandboxProcess>;
  };
  readonly run: (
    options: ProcessOptions,
  ) => Promise<{ exitCode: number; stdout: string; stderr: string }>;
}

interface PathOptions {
  path: string;
  abortSignal?: AbortSignal;
}
interface WriteOptions<Content> {
  path: string;
  content: Content;
  abortSignal?: AbortSignal;
}
interface ProcessOptions {
  command: string;
  workingDirectory?: string;
  env?: Record<string, string>;
  abortSignal?: AbortSignal;
}
interface SpawnOptions extends ProcessOptions {
  stdin?: boolean;
}

/** A process of {@link AISDKSandboxSession.spawn}. */
export interface AISDKSandboxProcess {
  readonly stdout: ReadableStream<Uint8Array>;
  readonly stderr: ReadableStream<Uint8Array>;
  wait(): Promise<{ exitCode: number }>;
  kill(): Promise<void>;
}

/** Options of {@link toAISDKSandboxSession}. */
export interface ToAISDKSandboxSessionOptions {
  /**
   * What the agent's instructions are told of the sandbox.
   * @default "A pleach sandbox: commands and files confined to the workspace; relative paths start at its root."
   */
  description?: string;
}

/**
 * Any pleach {@link SandboxClient} as the `Experimental_SandboxSession` of `ai@7`
 * (`generateText({ experimental_sandbox })`, the session a tool reads from its execution
 * options). Reads and writes go through the client's `readFile` and `writeFile` (so its path
 * confinement and protected paths hold); `stat`, `listDirectory` and `deleteFile` run as
 * commands in the sandbox, with the path passed in the environment rather than spliced into the
 * command. A file that does not exist reads as `null`, as the AI SDK asks; every other refusal
 * rejects with the client's `ToolError`. `spawn` delivers a command's output when it ends (a
 * `SandboxClient` does not stream), and refuses `stdin: true`, which it cannot offer.
 */
export function toAISDKSandboxSession(
  client: SandboxClient,
  {
    description = "A pleach sandbox: commands and files confined to the workspace; relative paths start at its root.",
  }: ToAISDKSandboxSessionOptions = {},
): AISDKSandboxSession {
  const readBinaryFile = async ({ path }: PathOptions): Promise<Uint8Array | null> =>
    orNullIfMissing(async () => {
      const bytes = Buffer.from(await client.readFile(path, { encoding: "base64" }), "base64");
      return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    });
  const writeBinaryFile = async ({ path, content }: WriteOptions<Uint8Array>): Promise<void> =>
    client.writeFile(path, Buffer.from(content).toString("base64"), { encoding: "base64" });
  const run = async ({ command, workingDirectory, env, abortSignal }: ProcessOptions) => {
    const result = await client.exec(command, {
      ...(workingDirectory === undefined ? {} : { cwd: workingDirectory }),
      ...(env === undefined ? {} : { env }),
      ...(abortSignal === undefined ? {} : { abortSignal }),
    });
    return { exitCode: exitCodeOf(result), stdout: result.stdout, stderr: result.stderr };
  };
  /** A probe of one path: the script reads the path from `$P` and prints one answer. */
  const probe = async (script: string, path: string, abortSignal?: AbortSignal) => {
    const result = await client.exec(script, {
      env: { P: path },
      ...(abortSignal === undefined ? {} : { abortSignal }),
    });
    if (result.exitCode !== 0) {
      throw new Error(`${path}: ${(result.stderr || result.stdout).trim() || "the probe failed"}`);
    }
    return result.stdout;
  };
  const spawn = async ({
    stdin,
    abortSignal,
    ...options
  }: SpawnOptions): Promise<AISDKSandboxProcess> => {
    if (stdin === true) {
      throw new Error(
        "spawn: a pleach sandbox has no writable stdin; pass the input in the command",
      );
    }
    const kill = new AbortController();
    const signal =
      abortSignal === undefined ? kill.signal : AbortSignal.any([abortSignal, kill.signal]);
    const done = run({ ...options, abortSignal: signal });
    const finished = done.then(
      (result) => ({ result }),
      (error: unknown) => ({ error }),
    );
    const streamed = (pick: (result: { stdout: string; stderr: string }) => string) =>
      new ReadableStream<Uint8Array>({
        async start(controller) {
          const outcome = await finished;
          if ("result" in outcome)
            controller.enqueue(new TextEncoder().encode(pick(outcome.result)));
          controller.close();
        },
      });
    return {
      stdout: streamed((result) => result.stdout),
      stderr: streamed((result) => result.stderr),
      wait: async () => ({ exitCode: (await done).exitCode }),
      kill: async () => {
        kill.abort();
        await finished;
      },
    };
  };
  return {
    description,
    readBinaryFile,
    readFile: async (options) => {
      const bytes = await readBinaryFile(options);
      return bytes === null ? null : streamOf(bytes);
    },
    readTextFile: async ({ path, encoding = "utf-8", startLine, endLine }) => {
      const bytes = await readBinaryFile({ path });
      if (bytes === null) return null;
      const text = new TextDecoder(encoding).decode(bytes);
      if (startLine === undefined && endLine === undefined) return text;
      const lines = text.split(/(?<=\n)/);
      return lines.slice(Math.max((startLine ?? 1) - 1, 0), endLine ?? lines.length).join("");
    },
    writeBinaryFile,
    writeFile: async ({ path, content }) =>
      writeBinaryFile({ path, content: new Uint8Array(await new Response(content).arrayBuffer()) }),
    writeTextFile: async ({ path, content, encoding = "utf-8" }) => {
      if (!/^utf-?8$/i.test(encoding)) {
        throw new Error(`writeTextFile: only utf-8 is supported, not ${encoding}`);
      }
      await client.writeFile(path, content);
    },
    stat: async ({ path, abortSignal }) => {
      const out = await probe(
        'if [ ! -e "$P" ]; then echo none; elif [ -d "$P" ]; then echo directory 0; ' +
          'elif [ -f "$P" ]; then echo file "$(wc -c < "$P")"; else echo other 0; fi',
        path,
        abortSignal,
      );
      const [type, size] = out.trim().split(/\s+/);
      if (type === "none") return null;
      return { type: type as "file" | "directory" | "other", size: Number(size) };
    },
    listDirectory: async ({ path, abortSignal }) => {
      const out = await probe(
        'if [ ! -e "$P" ]; then echo none; exit 0; fi; cd "$P" || exit 1; echo ok; ' +
          'for f in * .*; do case "$f" in .|..) continue;; esac; [ -e "$f" ] || [ -L "$f" ] || continue; ' +
          'if [ -L "$f" ]; then t=symlink; elif [ -d "$f" ]; then t=directory; elif [ -f "$f" ]; then t=file; else t=other; fi; ' +
          'printf "%s/%s\\0" "$t" "$f"; done',
        path,
        abortSignal,
      );
      if (out.trim() === "none") return null;
      return out
        .slice(out.indexOf("\n") + 1)
        .split("\0")
        .filter((entry) => entry !== "")
        .map((entry) => {
          const slash = entry.indexOf("/");
          return {
            type: entry.slice(0, slash) as "file" | "directory" | "symlink" | "other",
            name: entry.slice(slash + 1),
          };
        });
    },
    deleteFile: async ({ path, abortSignal }) => {
      const out = await probe(
        'if [ -d "$P" ] && [ ! -L "$P" ]; then echo "is a directory" >&2; exit 1; fi; ' +
          'if [ -e "$P" ] || [ -L "$P" ]; then rm -f -- "$P" && echo deleted; else echo none; fi',
        path,
        abortSignal,
      );
      return out.trim() === "deleted";
    },
    run,
    // The overload for `stdin: true` only ever rejects, so its result type is never produced.
    spawn: spawn as AISDKSandboxSession["spawn"],
  };
}

async function orNullIfMissing<T>(read: () => Promise<T>): Promise<T | null> {
  try {
    return await read();
  } catch (error) {
    if (isToolError(error) && error.code === "NOT_FOUND") return null;
    throw error;
  }
}

function streamOf(bytes: Uint8Array): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      controller.enqueue(bytes);
      controller.close();
    },
  });
}

/** The AI SDK wants a number: a command ended by a signal reads as the shell's 128 + signal. */
function exitCodeOf(result: ExecResult): number {
  if (result.exitCode !== null) return result.exitCode;
  return result.timedOut ? 124 : 137;
}
