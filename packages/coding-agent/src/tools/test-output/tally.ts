import type { TestRunnerCounts } from "./test-runner-counts.js";

/** Counts by outcome; a category is absent when the output says nothing about it. */
export type Tally = Pick<TestRunnerCounts, "passed" | "failed" | "skipped">;

/** One outcome of a {@link Tally}. */
export type CountCategory = keyof Tally;

/** Every {@link CountCategory}, in the order results list them. */
export const COUNT_CATEGORIES = ["passed", "failed", "skipped"] as const;

/** Adds `count` tests to one category of `tally`. */
export function addTo(tally: Tally, category: CountCategory, count: number): void {
  tally[category] = (tally[category] ?? 0) + count;
}

/** A tally of all three categories at 0, to be filled from a summary. */
export function zeroTally(): Tally {
  return { passed: 0, failed: 0, skipped: 0 };
}

/** A tally that says something about one category only. */
export function single(category: CountCategory, count: number): Tally {
  const tally: Tally = {};
  tally[category] = count;
  return tally;
}

/** Adds every category `tally` states to `total`. */
export function addTally(total: Tally, tally: Tally): void {
  for (const category of COUNT_CATEGORIES) {
    const count = tally[category];
    if (count !== undefined) addTo(total, category, count);
  }
}
