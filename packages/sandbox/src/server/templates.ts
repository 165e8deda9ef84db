import { randomBytes } from "node:crypto";
import { cp, lstat, mkdir, readdir, realpath, rename, rm, rmdir } from "node:fs/promises";
import path from "node:path";
import { isToolError, ToolError } from "@pleach/core";
import type { ExecOptions, ExecResult } from "@pleach/core/sandbox";
import { workspaceRoot } from "../beneath.js";
import { workspaceFolder } from "../workspace-files.js";
import type { SandboxTemplate } from "./protocol.js";

/** Options of {@link fillWorkspace}. */
export interface FillWorkspaceOptions {
  /** The new workspace folder; it does not exist yet, or is empty. */
  folder: string;
  /** What the caller asked for (checked at the edge, see `sandboxTemplateSchema`). */
  template: SandboxTemplate | undefined;
  /** Where `{ folder }` templates are looked up; without it they are refused. */
  templateRoot: string | undefined;
  /** The URL schemes a `{ git }` template may use; empty refuses git templates. */
  gitProtocols: readonly string[];
  /** How long a clone may take. */
  gitTimeoutMs: number;
  /**
   * Runs a command in the new workspace (its root the cwd), confined as the sandbox's own commands
   * are, with the sandbox's network rule, and able to write the workspace (for a read-only
   * sandbox, a workspace-write client of the same wrapper). `{ git }` templates are cloned by it:
   * the server itself never runs git, nor connects anywhere, for a template.
   */
  exec: (command: string, options: ExecOptions) => Promise<ExecResult>;
  /**
   * Whether those commands are cut off from the network (`network: false` and a confined mode),
   * so that a failed clone can say so.
   */
  networkOff: boolean;
  /** Stops a clone (the server is shutting down). */
  abortSignal?: AbortSignal;
}

/**
 * Create `folder` and fill it from `template`: nothing, a copy of a template folder, or a clone
 * made inside the sandbox (see {@link FillWorkspaceOptions.exec}). On failure `folder` is removed.
 */
export async function fillWorkspace({
  folder,
  template = "empty",
  templateRoot,
  gitProtocols,
  gitTimeoutMs,
  exec,
  networkOff,
  abortSignal,
}: FillWorkspaceOptions): Promise<void> {
  await mkdir(folder, { recursive: true, mode: 0o755 });
  if (template === "empty") return;
  try {
    if ("folder" in template) await copyTemplate({ folder, name: template.folder, templateRoot });
    else {
      await cloneTemplate({
        folder,
        ...template,
        gitProtocols,
        gitTimeoutMs,
        exec,
        networkOff,
        abortSignal,
      });
    }
  } catch (error) {
    await rm(folder, { recursive: true, force: true });
    throw error;
  }
}

async function copyTemplate({
  folder,
  name,
  templateRoot,
}: {
  folder: string;
  name: string;
  templateRoot: string | undefined;
}): Promise<void> {
  if (templateRoot === undefined) {
    throw new ToolError(
      "UNSUPPORTED",
      "this server has no template folders (start it with a template root); create the sandbox empty or from git",
    );
  }
  let source: string;
  try {
    const root = await realpath(templateRoot);
    source = workspaceFolder(workspaceRoot(templateRoot, root), name);
  } catch (error) {
    if (isToolError(error) && (error.code === "NOT_FOUND" || error.code === "NOT_A_DIRECTORY")) {
      throw new ToolError("NOT_FOUND", `no template folder ${JSON.stringify(name)} on this server`);
    }
    throw error;
  }
  // Links are copied as links: the sandbox's own confinement refuses those that lead out.
  await cp(source, folder, { recursive: true, verbatimSymlinks: true, errorOnExist: false });
}

/** The longest git URL taken. */
const MAX_URL_LENGTH = 4_096;
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds.
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

/**
 * Clone `git` (at `ref`) into `folder` by a command run through `exec`, that is inside the
 * sandbox: bubblewrap in its mode (workspace-write for the clone of a read-only sandbox), with its
 * network rule, so that a URL can reach only what the sandbox's commands could. git clones into a
 * fresh folder inside the workspace (the workspace's own `.git` is protected from commands, a new
 * nested one is not), and the host then moves what it made up into the workspace root, by
 * renames: no git runs on the host, and no host process reads what the remote sent. A failure is
 * told by a fixed message naming the URL and git's exit status, never git's own output, which
 * could carry what a remote answered.
 */
async function cloneTemplate({
  folder,
  git,
  ref,
  gitProtocols,
  gitTimeoutMs,
  exec,
  networkOff,
  abortSignal,
}: {
  folder: string;
  git: string;
  ref?: string;
  gitProtocols: readonly string[];
  gitTimeoutMs: number;
  exec: FillWorkspaceOptions["exec"];
  networkOff: boolean;
  abortSignal: AbortSignal | undefined;
}): Promise<void> {
  if (git.length > MAX_URL_LENGTH || CONTROL_CHARACTER.test(git)) {
    throw new ToolError(
      "INVALID_INPUT",
      `the git template must be a URL of at most ${MAX_URL_LENGTH} characters without control characters`,
    );
  }
  let scheme: string;
  try {
    scheme = new URL(git).protocol.replace(/:$/, "");
  } catch {
    throw new ToolError("INVALID_INPUT", `the git template is not a URL: ${JSON.stringify(git)}`);
  }
  if (!gitProtocols.includes(scheme)) {
    throw new ToolError(
      "UNSUPPORTED",
      `git templates over ${scheme}: are refused by this server; it accepts ${gitProtocols.join(", ") || "none"}`,
    );
  }
  if (ref !== undefined && (ref === "" || ref.startsWith("-") || CONTROL_CHARACTER.test(ref))) {
    throw new ToolError("INVALID_INPUT", `not a branch or tag name: ${JSON.stringify(ref)}`);
  }
  const staging = `.pleach-clone-${randomBytes(8).toString("hex")}`;
  // Schemes are plain words (RFC 3986), so the command below needs no quoting.
  const schemeWord = /^[A-Za-z][A-Za-z0-9+.-]*$/;
  const unfit = gitProtocols.find((protocol) => !schemeWord.test(protocol));
  if (unfit !== undefined) {
    throw new ToolError(
      "INVALID_INPUT",
      `gitProtocols holds ${JSON.stringify(unfit)}, not a URL scheme`,
    );
  }
  const allow = gitProtocols.flatMap((protocol) => ["-c", `protocol.${protocol}.allow=always`]);
  const argv = [
    "git",
    "-c",
    "protocol.allow=never",
    ...allow,
    "-c",
    "core.hooksPath=/dev/null",
    "clone",
    "--quiet",
    "--depth",
    "1",
    "--no-tags",
    ...(ref === undefined ? [] : ["--branch", '"$PLEACH_TEMPLATE_REF"']),
    "--",
    '"$PLEACH_TEMPLATE_URL"',
    staging,
  ];
  // The URL and the ref travel as variables, never inside the command text.
  const command = `exec ${argv.join(" ")}`;
  const wanted = `git clone of ${JSON.stringify(git)}${ref === undefined ? "" : ` at ${JSON.stringify(ref)}`}`;
  const result = await exec(command, {
    timeoutMs: gitTimeoutMs,
    maxOutputBytes: 4_096,
    ...(abortSignal === undefined ? {} : { abortSignal }),
    env: {
      PLEACH_TEMPLATE_URL: git,
      ...(ref === undefined ? {} : { PLEACH_TEMPLATE_REF: ref }),
      GIT_TERMINAL_PROMPT: "0",
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_CONFIG_GLOBAL: "/dev/null",
      HOME: "/nonexistent",
    },
  });
  if (result.timedOut) {
    throw new ToolError(
      "COMMAND_FAILED",
      `${wanted} failed: it took longer than ${gitTimeoutMs / 1_000} s`,
      { details: { url: git, timedOut: true } },
    );
  }
  if (result.exitCode !== 0) {
    const status =
      result.exitCode === null
        ? `signal ${result.signal ?? "unknown"}`
        : `exit status ${result.exitCode}`;
    const network = networkOff
      ? "; this server's sandboxes have no network and the clone runs inside the new sandbox, so only a file:// repository its commands can read clones: start the server with --network (network: true) to clone over the network"
      : "";
    throw new ToolError(
      "COMMAND_FAILED",
      `${wanted} failed (${status}); git's output is not returned${network}`,
      {
        details: {
          url: git,
          ...(result.exitCode === null ? {} : { exitCode: result.exitCode }),
          ...(networkOff ? { network: false } : {}),
        },
      },
    );
  }
  await moveUp(folder, staging);
}

/**
 * Move every entry of `folder/staging` up into `folder`, then remove `staging`. Nothing runs in the
 * workspace meanwhile (the clone's process group is gone and the sandbox is not handed out yet);
 * renames never follow a link.
 */
async function moveUp(folder: string, staging: string): Promise<void> {
  const source = path.join(folder, staging);
  const info = await lstat(source).catch(() => undefined);
  if (info === undefined || !info.isDirectory()) {
    throw new ToolError("INTERNAL", "the git clone left no folder behind; nothing was cloned");
  }
  for (const name of await readdir(source)) {
    await rename(path.join(source, name), path.join(folder, name));
  }
  await rmdir(source);
}
