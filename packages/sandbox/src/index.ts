export type { DockerSandboxProviderOptions } from "./docker/docker-options.js";
export type { DockerSandboxProvider, DockerSandboxSession } from "./docker/docker-provider.js";
export { createDockerSandboxProvider } from "./docker/docker-provider.js";
export type { E2BSandboxClient, E2BSandboxClientOptions } from "./e2b/e2b-client.js";
export { createE2BSandboxClient } from "./e2b/e2b-client.js";
export type {
  E2BSandboxProvider,
  E2BSandboxProviderOptions,
  E2BSandboxSession,
} from "./e2b/e2b-provider.js";
export { createE2BSandboxProvider } from "./e2b/e2b-provider.js";
export type { HttpJobCallOptions, HttpSandboxJobs } from "./http-jobs.js";
export type {
  HttpExecOptions,
  HttpSandboxAuth,
  HttpSandboxClient,
  HttpSandboxSession,
  HttpStreamSandboxProvider,
  HttpStreamSandboxProviderOptions,
} from "./http-provider.js";
export { createHttpStreamSandboxProvider } from "./http-provider.js";
export type {
  LocalSandboxProvider,
  LocalSandboxProviderOptions,
  LocalSandboxSession,
} from "./local-provider.js";
export { createLocalSandboxProvider } from "./local-provider.js";
export type { LocalSandbox, LocalSandboxOptions } from "./local-sandbox.js";
export { createLocalSandbox } from "./local-sandbox.js";
export type { DomainList, NetworkOption } from "./network/domain-rules.js";
export { parseNetworkOption } from "./network/domain-rules.js";
export type { ProxyRequest } from "./network/proxy-log.js";
export type {
  CommandInvocation,
  CommandWrapper,
  CommandWrapperOptions,
  CurrentProtectionOptions,
  FailurePolicy,
  HiddenPath,
  InvocationRequest,
  ProtectedPath,
  ReadPolicy,
  WorkspaceProtection,
} from "./os/index.js";
export {
  CONFINED_ENVIRONMENT,
  CREDENTIAL_STORES,
  createCommandWrapper,
  currentProtection,
  HOME_FOLDER_ENTRIES,
  hiddenReads,
  isSecretLookingName,
  MAX_COMMAND_BYTES,
  NON_INTERACTIVE_ENVIRONMENT,
  PROTECTED_ENTRIES,
  PROTECTED_WORKSPACE_ENTRIES,
  probeSandboxBackend,
} from "./os/index.js";
export type { ProtectedEntry } from "./os/protected-entries.js";
export type { SandboxServer, SandboxServerOptions } from "./server/options.js";
export type {
  CreateSandboxRequest,
  CreateSandboxResponse,
  ExecEvent,
  ExecRequest,
  SandboxTemplate,
  WireError,
} from "./server/protocol.js";
export { parseAllowedHost } from "./server/request-origin.js";
export { createSandboxServer } from "./server/sandbox-server.js";
