import path from "node:path";
import { PROTECTED_WORKSPACE_ENTRIES } from "./os/protected-entries.js";

/**
 * Why a workspace-relative path may not be written in a confined mode, or `undefined` when it may.
 * The same policy the OS sandbox enforces on commands: anything inside a `.git` at any depth (a
 * repository's hooks and config), and the entries at the top of the workspace that make the host
 * run code ({@link PROTECTED_WORKSPACE_ENTRIES}: shell start-up files, direnv, editor and agent
 * configuration folders).
 */
export function protectedReason(relative: string): string | undefined {
  const segments = relative.split(path.sep).filter((segment) => segment !== "");
  if (segments.includes(".git")) return "it is part of a git repository's metadata (.git)";
  const [top] = segments;
  if (top !== undefined && PROTECTED_WORKSPACE_ENTRIES.includes(top)) {
    return `${top} at the top of the workspace can make the host run code, so it is protected outside danger-full-access`;
  }
  return undefined;
}
