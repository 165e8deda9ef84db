import { isToolError } from "../errors.js";

/** The per-file error codes the sandbox backends of agent frameworks report (deepagents' own). */
export type SandboxFileError =
  | "file_not_found"
  | "permission_denied"
  | "is_directory"
  | "invalid_path";

/**
 * The framework's code for a pleach client's refusal of one file, so that a batch answers each
 * file on its own; `undefined` for a failure that is not about the file (the sandbox is down),
 * which the caller throws.
 */
export function sandboxFileErrorOf(error: unknown): SandboxFileError | undefined {
  if (!isToolError(error)) return undefined;
  switch (error.code) {
    case "NOT_FOUND":
      return "file_not_found";
    case "NOT_A_FILE":
      return "is_directory";
    case "INVALID_PATH":
    case "PATH_ESCAPE":
      return "invalid_path";
    case "READ_ONLY":
    case "PROTECTED_PATH":
    case "HIDDEN_PATH":
    case "PERMISSION_DENIED":
      return "permission_denied";
    default:
      return undefined;
  }
}
