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
export type { CommandWrapper, CommandWrapperOptions } from "./os/command-wrapper.js";
export { createCommandWrapper } from "./os/create-command-wrapper.js";
export type { CurrentProtectionOptions } from "./os/host-facts.js";
export { currentProtection } from "./os/host-facts.js";
export type { BackendProbe } from "./os/probe.js";
export { probeSandboxBackend } from "./os/probe.js";
export type { HiddenPath } from "./policy/hidden-reads.js";
export { hiddenReads } from "./policy/hidden-reads.js";
export { PROTECTED_WORKSPACE_ENTRIES } from "./policy/protected-entries.js";
export type { ProtectedPath, WorkspaceProtection } from "./policy/protection.js";
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
