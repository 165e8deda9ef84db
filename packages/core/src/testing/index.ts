/**
 * What a sandbox vendor needs to prove its client the way pleach proves its own: the contract
 * suite (run it from a vitest test file), an in-memory provider for pools and composites, a
 * snapshot of host paths (to show a sandbox left them as they were), the host's process table,
 * idle connections (to prove a server bounds them), a free loopback port, and temporary folders and cleanups tied to the current test. Needs
 * `vitest` (an optional peer).
 */
export { freeLoopbackPort } from "./free-port.js";
export { hostCommandLines } from "./host-processes.js";
export { hostState } from "./host-state.js";
export type { IdleOutcome } from "./idle-connections.js";
export { holdIdleConnections } from "./idle-connections.js";
export type { JobsContractSetup } from "./jobs-contract.js";
export { describeSandboxJobsContract } from "./jobs-contract.js";
export type { MemoryProvider } from "./memory-provider.js";
export { createMemoryProvider } from "./memory-provider.js";
export type { ContractCapabilities, ContractClientFactory } from "./sandbox-contract.js";
export { describeSandboxClientContract } from "./sandbox-contract.js";
export type { TempDirOptions } from "./temp-dir.js";
export { cleanUpAfter, forceRemove, makeTempDir, useTempDir } from "./temp-dir.js";
