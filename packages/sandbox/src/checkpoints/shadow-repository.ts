import { spawn } from "node:child_process";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { isToolError, ToolError } from "@pleach/core";

/** Git, at a fixed trusted place: never a `PATH` entry (one may lie in the workspace). */
const GIT = "/usr/bin/git";
/** The most bytes of a git answer read (a listing of the workspace's paths, a blob). */
const MAX_ANSWER_BYTES = 512 * 1024 * 1024;
/**
 * The longest one git run may take. A command can leave a FIFO where git opens a file of the
 * workspace (a `.gitignore` it reads while listing the paths): git waits for a writer forever.
 */
const GIT_TIMEOUT_MS = 120_000;

/**
 * A bare git repository outside a workspace that keeps its checkpoints, run with nothing of the
 * host's or the workspace's git configuration: no system or global config, no hooks, no
 * fsmonitor, no attributes or excludes of the user's. Content goes in through `git fast-import`
 * (bytes pleach read itself, never a path git opens), so no filter, line-ending conversion or
 * link of the workspace applies; the workspace is named only to list its paths by its
 * `.gitignore` rules.
 */
export class ShadowRepository {
  constructor(
    /** The bare repository's folder. */
    readonly gitDir: string,
    /** The workspace's real path. */
    readonly workTree: string,
    /** The longest one git run may take before it is killed and its answer refused. */
    readonly timeoutMs: number = GIT_TIMEOUT_MS,
  ) {}

  /** Run git with `args`; its stdout, or a `ToolError` with its stderr. */
  run(
    args: readonly string[],
    input?: Buffer | AsyncIterable<Buffer>,
    { workTree = true } = {},
  ): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      const child = spawn(
        GIT,
        [
          "-c",
          "core.hooksPath=/dev/null",
          "-c",
          "core.fsmonitor=false",
          "-c",
          "core.untrackedCache=false",
          "-c",
          "core.excludesFile=/dev/null",
          "-c",
          "core.attributesFile=/dev/null",
          "-c",
          "gc.auto=0",
          "-c",
          "maintenance.auto=false",
          ...args,
        ],
        {
          env: {
            PATH: "/usr/bin:/bin",
            HOME: "/nonexistent",
            XDG_CONFIG_HOME: "/nonexistent",
            GIT_CONFIG_NOSYSTEM: "1",
            GIT_CONFIG_GLOBAL: "/dev/null",
            GIT_ATTR_NOSYSTEM: "1",
            GIT_DIR: this.gitDir,
            ...(workTree ? { GIT_WORK_TREE: this.workTree } : {}),
            GIT_TERMINAL_PROMPT: "0",
            GIT_OPTIONAL_LOCKS: "0",
            LC_ALL: "C",
          },
          stdio: ["pipe", "pipe", "pipe"],
        },
      );
      const out: Buffer[] = [];
      let inputError: unknown;
      let outBytes = 0;
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        child.kill("SIGKILL");
      }, this.timeoutMs);
      let err = "";
      child.stdout.on("data", (chunk: Buffer) => {
        outBytes += chunk.length;
        if (outBytes > MAX_ANSWER_BYTES) child.kill("SIGKILL");
        else out.push(chunk);
      });
      child.stderr.on("data", (chunk: Buffer) => {
        if (err.length < 4096) err += chunk.toString("utf8");
      });
      child.on("error", (error) => {
        clearTimeout(timer);
        reject(new ToolError("INTERNAL", `checkpoints need git at ${GIT}: ${error.message}`));
      });
      child.on("close", (code) => {
        clearTimeout(timer);
        if (inputError !== undefined && isToolError(inputError)) reject(inputError);
        else if (code === 0 && !timedOut) resolve(Buffer.concat(out));
        else {
          reject(
            new ToolError(
              "INTERNAL",
              `git ${args[0]} of the checkpoint store failed (${timedOut ? `it took longer than ${this.timeoutMs / 1000} s; a FIFO or device in the workspace where git reads a file, such as a .gitignore, makes it wait` : outBytes > MAX_ANSWER_BYTES ? "its answer passed the bound" : `exit ${code}`}): ${err.trim()}`,
            ),
          );
        }
      });
      child.stdin.on("error", () => {
        // It exited early; its exit says why.
      });
      if (input === undefined || Buffer.isBuffer(input)) child.stdin.end(input);
      else {
        // Written as it comes, with the pipe's backpressure; what fails making it fails the run.
        pipeline(Readable.from(input, { highWaterMark: 1 }), child.stdin).catch(
          (error: unknown) => {
            inputError ??= error;
            child.kill("SIGKILL");
          },
        );
      }
    });
  }

  /** Make the bare repository if it is not there yet. */
  async init(): Promise<void> {
    await this.run(["init", "--quiet", "--bare", this.gitDir], undefined, { workTree: false });
  }

  /**
   * The workspace's files by its `.gitignore` rules (not its `.git`), and the nested repositories
   * git does not descend into (listed with a trailing `/`).
   */
  async paths(): Promise<{ paths: string[]; notUtf8: string[] }> {
    const listed = await this.run(["ls-files", "--others", "--exclude-standard", "-z"]);
    const paths: string[] = [];
    const notUtf8: string[] = [];
    let start = 0;
    while (start < listed.length) {
      let end = listed.indexOf(0, start);
      if (end === -1) end = listed.length;
      const raw = listed.subarray(start, end);
      start = end + 1;
      if (raw.length === 0) continue;
      const decoded = raw.toString("utf8");
      // A name that is no UTF-8 would come back as another (U+FFFD for its bytes): named, not read.
      if (Buffer.from(decoded, "utf8").equals(raw)) paths.push(decoded);
      else notUtf8.push(decoded);
    }
    return { paths, notUtf8 };
  }

  /** The commit a ref names, or `undefined`. */
  async resolve(ref: string): Promise<string | undefined> {
    const answer = await this.run(["rev-parse", "--verify", "--quiet", `${ref}^{commit}`]).catch(
      () => undefined,
    );
    const sha = answer?.toString("utf8").trim();
    return sha === undefined || sha === "" ? undefined : sha;
  }

  /** Every entry of a commit's tree: path, mode and blob. */
  async tree(commit: string): Promise<Map<string, { mode: string; sha: string }>> {
    const listed = await this.run(["ls-tree", "-r", "-z", "--full-tree", commit]);
    const entries = new Map<string, { mode: string; sha: string }>();
    for (const line of listed.toString("utf8").split("\0")) {
      const match = /^(\d{6}) blob ([0-9a-f]+)\t(.*)$/s.exec(line);
      if (match !== null)
        entries.set(match[3] as string, { mode: match[1] as string, sha: match[2] as string });
    }
    return entries;
  }

  /** A blob's bytes. */
  blob(sha: string): Promise<Buffer> {
    return this.run(["cat-file", "blob", sha]);
  }
}

/** A path as fast-import reads it: C-style quoted, so that any byte of a name passes. */
export function quotedPath(relative: string): string {
  let quoted = '"';
  for (const byte of Buffer.from(relative, "utf8")) {
    if (byte === 0x22) quoted += '\\"';
    else if (byte === 0x5c) quoted += "\\\\";
    else if (byte >= 0x20 && byte < 0x7f) quoted += String.fromCharCode(byte);
    else quoted += `\\${byte.toString(8).padStart(3, "0")}`;
  }
  return `${quoted}"`;
}
