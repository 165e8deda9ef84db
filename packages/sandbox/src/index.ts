export type { LocalSandbox, LocalSandboxOptions } from "./local-sandbox.js";
export { createLocalSandbox } from "./local-sandbox.js";
export type {
  CommandInvocation,
  CommandWrapper,
  CommandWrapperOptions,
  InvocationRequest,
} from "./os/index.js";
export { createCommandWrapper } from "./os/index.js";
export { PROTECTED_FILES, protectedReason } from "./protected-paths.js";
