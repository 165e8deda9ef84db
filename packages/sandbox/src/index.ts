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
  InvocationRequest,
} from "./os/index.js";
export {
  createCommandWrapper,
  isSecretLookingName,
  PROTECTED_WORKSPACE_ENTRIES,
  probeSandboxBackend,
} from "./os/index.js";
export { protectedReason } from "./protected-paths.js";
