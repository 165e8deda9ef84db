import { afterEach, beforeEach, describe, it } from "vitest";
import { probeSandboxBackend } from "../probe.js";
import { type AttackFixture, createAttackFixture } from "./fixture.js";

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

/**
 * Declares one attack case: vitest's `it`, or a backend's own registration (which may skip it).
 * A case that cannot run on this host gives why as `skipReason`, and is skipped saying so.
 */
export type AttackTest = (name: string, body: () => Promise<void>, skipReason?: string) => void;

/**
 * An attack suite's cases over a fixture that the caller fills in before each case: they declare
 * themselves through `it`, so that each backend running them decides how (and which to skip).
 */
export type AttackCases = (fixture: AttackFixture, it: AttackTest) => void;

/**
 * Declare an attack suite twice: once with a sandbox of its own per command, once with every
 * command in a warm sandbox (after another command ran in it), unless `warmToo` is false; with
 * `jobsToo`, a third time with every command a background job of a session. With `gitWritesToo`,
 * each of those again with the fixture's sandbox made with `allowGitWrites` (its name says ", with
 * git writes", and `fixture.gitWrites` tells the cases). Each case gets a fresh fixture; where the
 * suites cannot run, all are skipped with `skipReason` in their names.
 */
export function describeAttacks(
  title: string,
  skipReason: string | undefined,
  cases: AttackCases,
  {
    warmToo = true,
    jobsToo = false,
    gitWritesToo = false,
  }: {
    /** Declare the warm suite too; not for cases that never run warm (a domain list's). @default true */
    warmToo?: boolean;
    /** Declare a suite running each command as a background job of a session too. @default false */
    jobsToo?: boolean;
    /**
     * Declare every suite again with git writes (`allowGitWrites`): for cases about repositories,
     * whose protection git writes change. @default false
     */
    gitWritesToo?: boolean;
  } = {},
): void {
  const runs = [
    { warm: false, jobs: false },
    ...(warmToo ? [{ warm: true, jobs: false }] : []),
    ...(jobsToo ? [{ warm: false, jobs: true }] : []),
  ];
  const variants = [
    ...runs.map((run) => ({ ...run, gitWrites: false })),
    ...(gitWritesToo ? runs.map((run) => ({ ...run, gitWrites: true })) : []),
  ];
  for (const { warm, jobs, gitWrites } of variants) {
    const where = warm ? ", in a warm sandbox" : jobs ? ", as background jobs of a session" : "";
    const writes = gitWrites ? ", with git writes" : "";
    const skipped = skipReason === undefined ? "" : ` (skipped: ${skipReason})`;
    describe.skipIf(skipReason !== undefined)(
      `${title} ${runningAs()}${where}${writes}${skipped}`,
      () => {
        // The cases hold this object; each case's fixture is copied into it. Whether it has git
        // writes is known as the cases are declared.
        const fixture = { gitWrites } as AttackFixture;
        beforeEach(async () => {
          Object.assign(fixture, await createAttackFixture({ warm, jobs, gitWrites }));
        });
        afterEach(async () => {
          await fixture.cleanup();
        });
        cases(fixture, (name, body, reason) =>
          reason === undefined ? it(name, body) : it.skip(`${name} (skipped: ${reason})`, body),
        );
      },
    );
  }
}
