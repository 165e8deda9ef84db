import { execFile } from "node:child_process";
import { cp, mkdir, realpath, rm } from "node:fs/promises";
import { isToolError, ToolError } from "@pleach/core";
import { workspaceRoot } from "../beneath.js";
import { workspaceFolder } from "../workspace-files.js";
import type { SandboxTemplate } from "./protocol.js";

/** Options of {@link fillWorkspace}. */
export interface FillWorkspaceOptions {
  /** The new workspace folder; it does not exist yet, or is empty. */
  folder: string;
  /** What the caller asked for, unchecked. */
  template: unknown;
  /** Where `{ folder }` templates are looked up; without it they are refused. */
  templateRoot: string | undefined;
  /** The URL schemes a `{ git }` template may use; empty refuses git templates. */
  gitProtocols: readonly string[];
  /** How long a clone may take. */
  gitTimeoutMs: number;
}

/** Create `folder` and fill it from `template`: nothing, a copy of a template folder, or a clone. */
export async function fillWorkspace({
  folder,
  template = "empty",
  templateRoot,
  gitProtocols,
  gitTimeoutMs,
}: FillWorkspaceOptions): Promise<void> {
  const chosen = checkTemplate(template);
  await mkdir(folder, { recursive: true, mode: 0o755 });
  if (chosen === "empty") return;
  try {
    if ("folder" in chosen) await copyTemplate({ folder, name: chosen.folder, templateRoot });
    else await cloneTemplate({ folder, ...chosen, gitProtocols, gitTimeoutMs });
  } catch (error) {
    await rm(folder, { recursive: true, force: true });
    throw error;
  }
}

function checkTemplate(template: unknown): SandboxTemplate {
  if (template === "empty") return template;
  if (typeof template === "object" && template !== null && !Array.isArray(template)) {
    const { folder, git, ref } = template as Record<string, unknown>;
    if (typeof folder === "string" && git === undefined && ref === undefined) return { folder };
    if (
      typeof git === "string" &&
      folder === undefined &&
      (ref === undefined || typeof ref === "string")
    ) {
      return ref === undefined ? { git } : { git, ref };
    }
  }
  throw new ToolError(
    "INVALID_INPUT",
    `template must be "empty", { folder: NAME } or { git: URL, ref?: REF }, got ${JSON.stringify(template)}`,
  );
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

async function cloneTemplate({
  folder,
  git,
  ref,
  gitProtocols,
  gitTimeoutMs,
}: {
  folder: string;
  git: string;
  ref?: string;
  gitProtocols: readonly string[];
  gitTimeoutMs: number;
}): Promise<void> {
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
  if (ref !== undefined && (ref.startsWith("-") || ref.includes("\0"))) {
    throw new ToolError("INVALID_INPUT", `not a branch or tag name: ${JSON.stringify(ref)}`);
  }
  const allow = gitProtocols.flatMap((protocol) => ["-c", `protocol.${protocol}.allow=always`]);
  const args = [
    "-c",
    "protocol.allow=never",
    ...allow,
    "-c",
    "core.hooksPath=/dev/null",
    "clone",
    "--depth",
    "1",
    "--no-tags",
    ...(ref === undefined ? [] : ["--branch", ref]),
    "--",
    git,
    folder,
  ];
  await new Promise<void>((resolve, reject) => {
    execFile(
      "git",
      args,
      {
        timeout: gitTimeoutMs,
        maxBuffer: 1024 * 1024,
        env: {
          PATH: process.env.PATH ?? "/usr/bin:/bin",
          GIT_TERMINAL_PROMPT: "0",
          GIT_CONFIG_NOSYSTEM: "1",
          HOME: "/nonexistent",
        },
      },
      (error, _stdout, stderr) => {
        if (error === null) resolve();
        else {
          reject(
            new ToolError(
              "COMMAND_FAILED",
              `git clone of ${git} failed: ${String(stderr).trim().slice(-2000) || error.message}`,
              { cause: error },
            ),
          );
        }
      },
    );
  });
}
