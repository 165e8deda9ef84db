import type { ProtectedPath } from "./protection.js";

/** The variable that tells a confined command which folders it sees are placeholders. */
const PLACEHOLDERS_VARIABLE = "PLEACH_PLACEHOLDERS";

/**
 * `env` with {@link PLACEHOLDERS_VARIABLE} set to the absolute paths of the placeholders among
 * `protectedPaths` (those a lease gives as `missing`), one a line, so that a tool listing folders
 * from inside the sandbox (`list_files`) can leave them out. A path holding a newline cannot be
 * told apart in that list and is left out of it (only a workspace or nested repository whose own
 * path holds a newline gives one). Any value the caller gave is replaced.
 */
export function withPlaceholdersVariable(
  env: Readonly<Record<string, string>>,
  protectedPaths: readonly ProtectedPath[],
): Record<string, string> {
  const paths = protectedPaths
    .filter(({ path: target, state }) => state === "missing" && !target.includes("\n"))
    .map(({ path: target }) => target);
  return { ...env, [PLACEHOLDERS_VARIABLE]: paths.join("\n") };
}
