import type { ExecResult } from "../sandbox/index.js";

/**
 * What the tools that run commands (bash, run_tests, git_clone) tell the model when a failure lies
 * in how the sandbox is set up rather than in the command: the sandbox's own notes on the result
 * (`sandboxNotes`: a protected path, read-only mode, a hidden file, the network off, a refused
 * domain), rendered one way by every tool, and the private `/tmp` that git_clone's argument can
 * trip on.
 */

/** The sandbox's notes on `result`, one `[...]` line each; none when it has none. */
export function sandboxNoteLines(result: Pick<ExecResult, "sandboxNotes">): string[] {
  return (result.sandboxNotes ?? []).map((note) => `[${note}]`);
}

/** `/tmp` itself or a path under it: `/tmp`, `/tmp/x`. */
export function isUnderTmp(path: string): boolean {
  return path === "/tmp" || path.startsWith("/tmp/");
}

/** Why a path under `/tmp` that exists on the host is missing for a sandboxed command. */
export const PRIVATE_TMP_HINT =
  "Sandboxed commands see a private, empty /tmp of their own, not the host's, so a repository under the host's /tmp is not there for them. Put it inside the workspace or in another folder the sandbox can read (such as /var/tmp), then clone from there.";
