export type {
  ExecOptions,
  ExecResult,
  FileEncodingOptions,
  SandboxClient,
  SandboxMode,
  SandboxProvider,
  SandboxSession,
} from "./contract.js";
