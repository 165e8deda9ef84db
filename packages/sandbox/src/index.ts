export type {
  DockerSandboxProvider,
  DockerSandboxProviderOptions,
} from "./docker/docker-provider.js";
export { createDockerSandboxProvider } from "./docker/docker-provider.js";
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
export type {
  CommandInvocation,
  CommandWrapper,
  CommandWrapperOptions,
  CurrentProtectionOptions,
  InvocationRequest,
  ProtectedPath,
  WorkspaceProtection,
} from "./os/index.js";
export {
  createCommandWrapper,
  currentProtection,
  HOME_FOLDER_ENTRIES,
  isSecretLookingName,
  PROTECTED_ENTRIES,
  PROTECTED_WORKSPACE_ENTRIES,
  probeSandboxBackend,
} from "./os/index.js";
export type { ProtectedEntry } from "./os/protected-entries.js";
export type { BearerTokenCheck } from "./server/bearer-token.js";
export { createBearerTokenCheck } from "./server/bearer-token.js";
export type {
  ConnectionLimits,
  ConnectionLimitsOptions,
  ConnectionRefusal,
} from "./server/connection-limits.js";
export { createConnectionLimits } from "./server/connection-limits.js";
export type {
  CreateSandboxRequest,
  CreateSandboxResponse,
  ExecEvent,
  ExecRequest,
  SandboxTemplate,
  WireError,
} from "./server/protocol.js";
export type {
  RequestOriginCheck,
  RequestOriginCheckOptions,
  RequestOriginRefusal,
} from "./server/request-origin.js";
export { createRequestOriginCheck, parseAllowedHost } from "./server/request-origin.js";
export type { SandboxServer, SandboxServerOptions } from "./server/sandbox-server.js";
export { createSandboxServer } from "./server/sandbox-server.js";
