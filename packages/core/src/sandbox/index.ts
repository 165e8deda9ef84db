export type {
  Checkpoint,
  CheckpointSandboxClient,
  RestoreResult,
  SandboxCheckpoints,
} from "./checkpoints.js";
export { sandboxCheckpointsOf } from "./checkpoints.js";
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
  KeptOutput,
  ReadFileOptions,
  SandboxClient,
  SandboxMode,
  SandboxProvider,
  SandboxSession,
} from "./contract.js";
export { NETWORK_OFF_NOTE_START, SANDBOX_SPECIFICATION_VERSION } from "./contract.js";
export type {
  JobInfo,
  JobOutput,
  JobOutputOptions,
  JobSandboxClient,
  JobStartOptions,
  JobState,
  SandboxJobs,
} from "./jobs.js";
export {
  checkJobInput,
  jobsUnsupportedError,
  MAX_JOB_INPUT_BYTES,
  MAX_JOB_QUEUED_INPUT_BYTES,
  sandboxJobsOf,
  wrapJobs,
} from "./jobs.js";
export type { FileEncoding } from "./options.js";
export {
  checkEnvironment,
  checkExecOptions,
  checkFileContent,
  checkMaxOutputBytes,
  checkTimeoutMs,
  fileEncodingOf,
} from "./options.js";
export type {
  PooledSandboxProvider,
  PooledSandboxProviderOptions,
  PooledSandboxSession,
  PoolStats,
} from "./pool.js";
export { createPooledSandboxProvider } from "./pool.js";
export { checkSandboxProvider } from "./provider-version.js";
export { isSandboxUnavailable, sandboxUnavailableError } from "./unavailable.js";
