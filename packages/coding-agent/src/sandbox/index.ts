export type {
  ExecOptions,
  ExecResult,
  FileEncodingOptions,
  ReadFileOptions,
  SandboxClient,
  SandboxMode,
  SandboxProvider,
  SandboxSession,
} from "@pleach/core/sandbox";
export { isSandboxUnavailable, sandboxUnavailableError } from "@pleach/core/sandbox";
export type {
  SandboxComposite,
  SandboxCompositeMember,
  SandboxCompositeMemberHealth,
  SandboxCompositeOptions,
  SandboxCompositeSession,
} from "./composite.js";
export { createSandboxComposite } from "./composite.js";
export type {
  PooledSandboxProvider,
  PooledSandboxProviderOptions,
  PooledSandboxSession,
  PoolStats,
} from "./pool.js";
export { createPooledSandboxProvider } from "./pool.js";
