export type {
  ExecOptions,
  ExecResult,
  FileEncodingOptions,
  JobInfo,
  JobOutput,
  JobOutputOptions,
  JobSandboxClient,
  JobStartOptions,
  JobState,
  KeptOutput,
  ReadFileOptions,
  SandboxClient,
  SandboxJobs,
  SandboxMode,
  SandboxProvider,
  SandboxSession,
} from "@pleach/core/sandbox";
export {
  isSandboxUnavailable,
  jobsUnsupportedError,
  sandboxJobsOf,
  sandboxUnavailableError,
  wrapJobs,
} from "@pleach/core/sandbox";
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
