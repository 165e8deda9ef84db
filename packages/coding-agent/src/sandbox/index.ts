export type {
  SandboxComposite,
  SandboxCompositeMember,
  SandboxCompositeMemberHealth,
  SandboxCompositeOptions,
  SandboxCompositeSession,
} from "./composite.js";
export { createSandboxComposite } from "./composite.js";
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
export type {
  PooledSandboxProvider,
  PooledSandboxProviderOptions,
  PooledSandboxSession,
  PoolStats,
} from "./pool.js";
export { createPooledSandboxProvider } from "./pool.js";
export { isSandboxUnavailable, sandboxUnavailableError } from "./unavailable.js";
