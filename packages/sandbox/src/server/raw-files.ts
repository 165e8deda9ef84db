import { ToolError } from "@pleach/core";
import type { SandboxMode } from "@pleach/core/sandbox";
import type { WorkspaceRoot } from "../beneath.js";
import type { HiddenPaths } from "../hidden-files.js";
import type { WorkspaceProtection } from "../policy/protection.js";
import { readWorkspaceFile, writeWorkspaceFile } from "../workspace-files.js";

/**
 * A sandbox's files as bytes, for the server's file route: the local client's `readFile` and
 * `writeFile` (the same race-free walk, modes, protection policy, limits, atomic write and codes,
 * from the same code), without the string in between, so the bytes go from the file to the socket
 * and back with no decode and no encode.
 */
export interface RawFiles {
  /** The file's bytes. `maxBytes` lowers the server's own limit for this read. */
  read(filePath: unknown, maxBytes?: number): Promise<Buffer>;
  write(filePath: unknown, bytes: Buffer): Promise<void>;
}

export function createRawFiles({
  root,
  mode,
  maxFileBytes,
  protection,
  hidden,
}: {
  /** The sandbox's workspace root. */
  root: WorkspaceRoot;
  mode: SandboxMode;
  maxFileBytes: number;
  /** What is protected in the workspace now (the sandbox's command wrapper's policy). */
  protection: () => Promise<WorkspaceProtection>;
  /** What the sandbox's read policy hides (its command wrapper's), none in `danger-full-access`. */
  hidden: HiddenPaths;
}): RawFiles {
  const nonEmpty = (requested: unknown) => {
    if (requested === "") throw new ToolError("INVALID_PATH", "the path is empty");
    return requested;
  };
  return {
    read: (filePath, maxBytes) =>
      readWorkspaceFile({
        root,
        filePath: nonEmpty(filePath),
        maxFileBytes,
        maxBytes,
        hidden,
        protection,
      }),
    write: (filePath, bytes) =>
      writeWorkspaceFile({ root, filePath: nonEmpty(filePath), bytes, mode, protection, hidden }),
  };
}
