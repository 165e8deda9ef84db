import path from "node:path";

/**
 * Files in a workspace whose change makes the host run code: shell start-up files, direnv,
 * editor task runners, and the configuration of coding agents (which can name commands to run).
 * Relative to any folder of the workspace, compared by their trailing path segments.
 */
export const PROTECTED_FILES: readonly string[] = [
  ".bashrc",
  ".bash_profile",
  ".bash_login",
  ".bash_logout",
  ".profile",
  ".zshrc",
  ".zprofile",
  ".zshenv",
  ".zlogin",
  ".envrc",
  ".gitconfig",
  ".vscode/tasks.json",
  ".vscode/settings.json",
  ".vscode/launch.json",
  ".idea/workspace.xml",
  ".mcp.json",
  ".claude/settings.json",
  ".claude/settings.local.json",
  ".cursor/mcp.json",
  ".codex/config.toml",
];

/**
 * Why a workspace-relative path may not be written in a confined mode, or `undefined` when it may.
 * Anything inside a `.git` folder or file is the repository's own machinery (hooks, config).
 */
export function protectedReason(relative: string): string | undefined {
  const segments = relative.split(path.sep).filter((segment) => segment !== "");
  if (segments.includes(".git")) return "it is part of a git repository's metadata (.git)";
  const tail = segments.join("/");
  for (const file of PROTECTED_FILES) {
    if (tail === file || tail.endsWith(`/${file}`)) {
      return `changing ${file} can make the host run code`;
    }
  }
  return undefined;
}
