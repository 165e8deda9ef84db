import path from "node:path";
import type { ProtectedPath } from "./protection.js";

/** The variable that tells a confined command which folders it sees are placeholders. */
const PLACEHOLDERS_VARIABLE = "PLEACH_PLACEHOLDERS";

/**
 * `env` with {@link PLACEHOLDERS_VARIABLE} set to the absolute paths of the placeholders among
 * `protectedPaths` (those a lease gives as `missing`), one a line, so that a tool listing folders
 * from inside the sandbox (`list_files`) can leave them out. A path holding a newline cannot be
 * told apart in that list and is left out of it (only a workspace or nested repository whose own
 * path holds a newline gives one). Any value the caller gave is replaced. With a placeholder `.git`,
 * `GOFLAGS=-buildvcs=false` too, unless the caller gave `GOFLAGS`.
 */
export function withPlaceholdersVariable(
  env: Readonly<Record<string, string>>,
  protectedPaths: readonly ProtectedPath[],
): Record<string, string> {
  const missing = protectedPaths.filter(({ state }) => state === "missing");
  const paths = missing
    .filter(({ path: target }) => !target.includes("\n"))
    .map(({ path: target }) => target);
  // Go stamps builds with the repository it finds above the module, and fails on a placeholder
  // `.git` (`error obtaining VCS status`): where one stands, it is told there is none to stamp.
  const placeholderGit = missing.some(({ path: target }) => path.basename(target) === ".git");
  return {
    ...(placeholderGit && env.GOFLAGS === undefined ? { GOFLAGS: "-buildvcs=false" } : {}),
    ...env,
    [PLACEHOLDERS_VARIABLE]: paths.join("\n"),
  };
}
