export type { WarmRunOptions } from "../run-options.js";
export type { BubblewrapArgumentsOptions } from "./bubblewrap.js";
export {
  BUBBLEWRAP_PATH,
  bubblewrapArguments,
  bubblewrapSandboxArguments,
} from "./bubblewrap.js";
export { MAX_COMMAND_BYTES } from "./command-text.js";
export type {
  CommandInvocation,
  CommandWrapper,
  CommandWrapperOptions,
  InvocationRequest,
} from "./command-wrapper.js";
export { hiddenWith, protectionWith } from "./command-wrapper.js";
export { createCommandWrapper } from "./create-command-wrapper.js";
export type { FailurePolicy } from "./failure-notes.js";
export type { WorkspaceScan, WorkspaceWalker, WorkspaceWalkerOptions } from "./folder-walk.js";
export { createWorkspaceWalker } from "./folder-walk.js";
export { hiddenReads } from "./hidden-reads.js";
export type {
  BubblewrapFacts,
  CurrentProtectionOptions,
  GatherHostFactsOptions,
  HiddenPath,
  HostFacts,
  HostFactsCache,
  HostFactsCacheOptions,
  ProtectedPath,
  ProtectedPathState,
  ReadPolicy,
  WorkspaceProtection,
} from "./host-facts.js";
export { createHostFactsCache, currentProtection, gatherHostFacts } from "./host-facts.js";
export type { BackendProbe, ProbeSandboxBackendOptions } from "./probe.js";
export { installHint, probeSandboxBackend } from "./probe.js";
export type { InheritedEnvironmentOptions } from "./protected-entries.js";
export {
  CONFINED_ENVIRONMENT,
  CREDENTIAL_STORES,
  HOME_FOLDER_ENTRIES,
  inheritedEnvironment,
  isSecretLookingName,
  NON_INTERACTIVE_ENVIRONMENT,
  PROTECTED_ENTRIES,
  PROTECTED_WORKSPACE_ENTRIES,
  requestedEnvironment,
} from "./protected-entries.js";
export type { SeatbeltProfileOptions } from "./seatbelt.js";
export { SANDBOX_EXEC_PATH, seatbeltProfile } from "./seatbelt.js";
export { sessionServerSupported } from "./session-server.js";
export type { SandboxPolicy, WrapCommandOptions, WrappedCommand } from "./wrap-command.js";
export { wrapCommand } from "./wrap-command.js";
