import { ToolError } from "../errors.js";
import { SANDBOX_SPECIFICATION_VERSION, type SandboxProvider } from "./contract.js";

/**
 * Refuses a provider written against another version of the sandbox contract (or none: a plain
 * object with an `acquire`), where a provider is accepted. `what` names it in the error.
 */
export function checkSandboxProvider(provider: SandboxProvider, what: string): void {
  const version: unknown = (provider as { specificationVersion?: unknown }).specificationVersion;
  if (version !== SANDBOX_SPECIFICATION_VERSION) {
    throw new ToolError(
      "INVALID_INPUT",
      `${what} implements sandbox contract ${version === undefined ? "of no version" : JSON.stringify(version)}, not ${JSON.stringify(SANDBOX_SPECIFICATION_VERSION)}: give it \`specificationVersion: "${SANDBOX_SPECIFICATION_VERSION}"\` once it meets this contract`,
    );
  }
}
