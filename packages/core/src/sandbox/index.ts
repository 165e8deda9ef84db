export type {
  ExecOptions,
  ExecResult,
  FileEncodingOptions,
  ReadFileOptions,
  SandboxClient,
  SandboxMode,
  SandboxProvider,
  SandboxSession,
} from "./contract.js";
export type { FileEncoding } from "./options.js";
export {
  checkEnvironment,
  checkExecOptions,
  checkFileContent,
  checkMaxOutputBytes,
  checkTimeoutMs,
  fileEncodingOf,
} from "./options.js";
export { isSandboxUnavailable, sandboxUnavailableError } from "./unavailable.js";
