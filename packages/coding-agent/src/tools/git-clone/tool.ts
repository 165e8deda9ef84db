import { defineTool, isToolError, type PluginToolDefinition, ToolError } from "@pleach/core";
import { z } from "zod";
import type { ExecResult, SandboxClient } from "../../sandbox/index.js";
import { hasControlCharacter } from "../shared/control-characters.js";
import { isInsideGitDir, workspaceRelativePath } from "../shared/relative-path.js";
import {
  isUnderTmp,
  networkOffNoted,
  PRIVATE_TMP_HINT,
  sandboxNoteLines,
} from "../shared/sandbox-hints.js";
import { shellJoin } from "../shared/shell-quote.js";

/** The input of `git_clone`. */
export const gitCloneInputSchema = z
  .object({
    url: z
      .string()
      .min(1)
      .refine((url) => !hasControlCharacter(url), {
        message: "the url cannot contain control characters (newlines, NUL)",
      })
      .describe(
        "The repository: an https://, ssh:// or git@host:owner/repo URL, a file:// URL, or a local path (resolved from the workspace root).",
      ),
    dest: z
      .string()
      .min(1)
      .optional()
      .describe(
        "The folder to clone into, relative to the workspace root; it must not exist or be empty. Default: the repository's name (the URL's last segment without `.git`).",
      ),
    depth: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe("Clone only the last `depth` commits (a shallow clone). Default: full history."),
    branch: z
      .string()
      .min(1)
      .refine((branch) => !hasControlCharacter(branch), {
        message: "the branch cannot contain control characters",
      })
      .optional()
      .describe("The branch or tag to check out instead of the remote's default branch."),
    timeout: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe("Time limit of the clone in milliseconds (default 600,000: ten minutes)."),
  })
  .strict();

/** The output of `git_clone`. */
export const gitCloneOutputSchema = z.object({
  commitSha: z.string().describe("The full SHA of the commit checked out (`git rev-parse HEAD`)."),
  branch: z
    .string()
    .describe("The branch checked out (`git rev-parse --abbrev-ref HEAD`); `HEAD` when detached."),
  path: z.string().describe("Where the clone is, relative to the workspace root."),
});

/** What `git_clone` accepts. */
export type GitCloneInput = z.input<typeof gitCloneInputSchema>;
/** What `git_clone` returns. */
export type GitCloneOutput = z.output<typeof gitCloneOutputSchema>;

/** Options of {@link createGitCloneTool}. */
export interface GitCloneToolOptions {
  /**
   * Time limit of a clone whose input gives no `timeout`, in milliseconds.
   * @default 600_000
   */
  defaultTimeoutMs?: number;
}

/** git's `<transport>::<address>` syntax, which hands the address to a remote helper. */
const REMOTE_HELPER = /^[A-Za-z][A-Za-z0-9+.-]*::/;

/**
 * Flags and environment for every git call: never ask for credentials or host keys (a prompt would
 * hang the call until its timeout), and never run the `ext::` / `fd::` transports, which run
 * arbitrary commands, even if a URL slipped past the check.
 */
const GIT_CONFIG = [
  "-c",
  "protocol.ext.allow=never",
  "-c",
  "protocol.fd.allow=never",
  "-c",
  "core.sshCommand=ssh -o BatchMode=yes",
];
const GIT_ENVIRONMENT = { GIT_TERMINAL_PROMPT: "0", GCM_INTERACTIVE: "never" };

/**
 * `git_clone`: `git clone [--depth N] [--branch B] -- <url> <dest>`, then
 * `git rev-parse HEAD` and `git rev-parse --abbrev-ref HEAD` in the clone. Any non-zero exit throws
 * `COMMAND_FAILED` with git's message: a clone is a setup step, not an outcome to weigh.
 */
export function createGitCloneTool(
  client: SandboxClient,
  { defaultTimeoutMs = 600_000 }: GitCloneToolOptions = {},
): PluginToolDefinition<typeof gitCloneInputSchema, typeof gitCloneOutputSchema> {
  return defineTool({
    name: "git_clone",
    description: [
      "Clone a git repository into a workspace folder and report the commit and branch checked out.",
      "Full history unless `depth` is given; the remote's default branch unless `branch` is given.",
      "`dest` defaults to the repository's name and must not exist yet (or be an empty folder).",
      "git never prompts: a repository that needs credentials the sandbox does not have fails with git's message. The `ext::` and `fd::` transports are refused.",
      "A remote URL needs the sandbox's network, which is off unless pleach was started with it; a local repository must be somewhere the sandbox can read, not under /tmp (its /tmp is private).",
    ].join(" "),
    inputSchema: gitCloneInputSchema,
    outputSchema: gitCloneOutputSchema,
    annotations: { title: "Clone a git repository", openWorldHint: true },
    async execute({ url, dest, depth, branch, timeout }, { abortSignal }) {
      if (url.startsWith("-")) {
        throw new ToolError(
          "INVALID_INPUT",
          `url ${JSON.stringify(url)} starts with "-", so git would read it as an option. Give a repository URL or path.`,
        );
      }
      if (REMOTE_HELPER.test(url)) {
        throw new ToolError(
          "UNSUPPORTED",
          `url ${JSON.stringify(url)} uses git's "<transport>::" remote-helper syntax, which git_clone refuses (ext:: and fd:: run commands). Give a plain https://, ssh://, file:// URL or a path.`,
        );
      }
      const target = workspaceRelativePath(dest ?? repositoryName(url), { field: "dest" });
      if (isInsideGitDir(target)) {
        throw new ToolError(
          "INVALID_INPUT",
          `dest ${JSON.stringify(dest)} lies inside a .git folder. Clone into a working-tree folder.`,
        );
      }
      await refuseEscapingDestination(client, target, abortSignal);

      const timeoutMs = timeout ?? defaultTimeoutMs;
      const clone = await client.exec(
        shellJoin([
          "git",
          ...GIT_CONFIG,
          "clone",
          ...(depth === undefined ? [] : [`--depth=${depth}`]),
          ...(branch === undefined ? [] : [`--branch=${branch}`]),
          "--",
          url,
          target === "" ? "." : target,
        ]),
        { timeoutMs, abortSignal, env: GIT_ENVIRONMENT },
      );
      if (clone.timedOut) {
        throw new ToolError(
          "TIMEOUT",
          networkOffNoted(clone)
            ? [
                `git clone ran past ${timeoutMs} ms and was stopped, with the network off for commands here: a larger timeout will not help a clone that needs it.`,
                ...sandboxNoteLines(clone),
              ].join("\n")
            : `git clone ran past ${timeoutMs} ms and was stopped. Retry with a larger timeout, or a shallow clone (depth: 1).`,
        );
      }
      if (clone.exitCode !== 0) {
        throw commandFailed("git clone", clone, { hint: cloneFailureHint(url, clone) });
      }

      const head = await client.exec(
        `${shellJoin(["git", "rev-parse", "HEAD"])} && ${shellJoin(["git", "rev-parse", "--abbrev-ref", "HEAD"])}`,
        { cwd: target, timeoutMs: 60_000, abortSignal, env: GIT_ENVIRONMENT },
      );
      if (head.exitCode !== 0) {
        throw commandFailed("git rev-parse HEAD", head, {
          hint: `The clone is at ${target || "."} but its HEAD does not resolve (an empty repository has no commits).`,
        });
      }
      const [commitSha = "", checkedOut = ""] = head.stdout.trim().split("\n");
      return { commitSha, branch: checkedOut, path: target === "" ? "." : target };
    },
    toModelOutput(output) {
      return {
        output: `Cloned into ${output.path} at ${output.commitSha} (branch ${output.branch}).`,
        error: false,
      };
    },
  });
}

/**
 * git's default folder name for a URL: its last path segment, without a trailing slash, `/.git`
 * or `.git` (`https://host/owner/repo.git/` → `repo`, `git@host:repo.git` → `repo`).
 */
export function repositoryName(url: string): string {
  const trimmed = url
    .replace(/\/+$/, "")
    .replace(/\/\.git$/, "")
    .replace(/\/+$/, "");
  const segment = trimmed.slice(Math.max(trimmed.lastIndexOf("/"), trimmed.lastIndexOf(":")) + 1);
  const name = segment.replace(/\.git$/, "");
  if (name === "" || name === "." || name === "..") {
    throw new ToolError(
      "INVALID_INPUT",
      `cannot tell a folder name from url ${JSON.stringify(url)}. Pass dest, the folder to clone into.`,
    );
  }
  return name;
}

/**
 * Confine the destination by realpath through the client before git writes there: the client
 * refuses a `dest` that leads out of the workspace through a symlink anywhere along it (also when
 * the last segments do not exist yet), which a lexical check cannot see.
 */
async function refuseEscapingDestination(
  client: SandboxClient,
  target: string,
  abortSignal: AbortSignal | undefined,
): Promise<void> {
  try {
    await client.exec(":", { cwd: target, abortSignal });
  } catch (error) {
    if (!isToolError(error)) throw error;
    if (error.code === "NOT_FOUND") return;
    if (error.code === "NOT_A_DIRECTORY") {
      throw new ToolError(
        "INVALID_INPUT",
        `dest ${JSON.stringify(target)} is a file, or goes through a file. Choose a folder that does not exist yet.`,
      );
    }
    throw error;
  }
}

/** git's words for a repository path that is not there. */
const MISSING_REPOSITORY =
  /does not exist|does not appear to be a git repository|not a git repository/;

/**
 * What to do about a failed clone whose cause lies in the sandbox rather than the URL: a local
 * repository under `/tmp` (the sandbox's `/tmp` is its own), or the sandbox's own notes (the
 * network off, say). `undefined` when neither says anything.
 */
function cloneFailureHint(url: string, result: ExecResult): string | undefined {
  const said = `${result.stderr}\n${result.stdout}`;
  const localPath = url.startsWith("file://") ? url.slice("file://".length) : url;
  const lines = sandboxNoteLines(result);
  if (isUnderTmp(localPath) && MISSING_REPOSITORY.test(said)) lines.unshift(PRIVATE_TMP_HINT);
  return lines.length === 0 ? undefined : lines.join("\n");
}

function commandFailed(
  what: string,
  result: ExecResult,
  { hint }: { hint?: string | undefined } = {},
): ToolError {
  const message = (result.stderr.trim() || result.stdout.trim() || "no message").slice(-4_000);
  return new ToolError(
    "COMMAND_FAILED",
    `${what} failed (exit ${result.exitCode}):\n${message}${hint === undefined ? "" : `\n${hint}`}`,
    {
      details: {
        exitCode: result.exitCode,
        stderr: result.stderr,
        ...(result.sandboxNotes === undefined ? {} : { sandboxNotes: result.sandboxNotes }),
      },
    },
  );
}
