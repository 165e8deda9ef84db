/**
 * Where a session sandbox keeps whole outputs: a memory-backed folder inside the sandbox's own
 * `/run` (itself a memory folder of the sandbox), outside the workspace, so that nothing of it is
 * ever in the workspace or on the host. A command reads `/run/pleach-output/NAME` as any file;
 * the host-side readers (the file tools, the server's file route) intercept exactly that form.
 */
export const KEPT_OUTPUT_FOLDER = "/run/pleach-output";

/** A kept output's file name: one plain name, never a path or a dot file (so never `.` or `..`). */
const KEPT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/**
 * The name of the kept output that `requested` names, when it is exactly
 * `/run/pleach-output/NAME` (no other spelling: no `..`, `.`, doubled or trailing slash, nothing
 * relative); `undefined` otherwise, for the usual rules on workspace paths to judge.
 */
export function keptOutputName(requested: unknown): string | undefined {
  if (typeof requested !== "string" || !requested.startsWith(`${KEPT_OUTPUT_FOLDER}/`)) {
    return undefined;
  }
  const name = requested.slice(KEPT_OUTPUT_FOLDER.length + 1);
  return KEPT_NAME.test(name) && name.length <= 255 ? name : undefined;
}
