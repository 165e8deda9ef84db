import { probeSandboxBackend } from "../probe.js";

/**
 * Why the attack suites cannot run here, or `undefined` when they can. They need a working
 * bubblewrap; elsewhere they are skipped with this reason in the suite's name.
 */
export async function attackSuiteSkipReason(): Promise<string | undefined> {
  if (process.platform !== "linux") return "bubblewrap attacks run on Linux only";
  const probe = await probeSandboxBackend({ backend: "bubblewrap" });
  return probe.available ? undefined : `no working bubblewrap: ${probe.reason}`;
}

/** Whose privileges the suite runs with, for the suite's name. */
export function runningAs(): string {
  return process.getuid?.() === 0 ? "as root" : `as uid ${process.getuid?.()}`;
}
