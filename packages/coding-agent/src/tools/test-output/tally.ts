import type { TestRunnerCounts } from "./test-runner-counts.js";

/** Counts by outcome; a category is absent when the output says nothing about it. */
export type Tally = Pick<TestRunnerCounts, "passed" | "failed" | "skipped">;

/** One outcome of a {@link Tally}. */
export type CountCategory = keyof Tally;

/** Every {@link CountCategory}, in the order results list them. */
export const COUNT_CATEGORIES = ["passed", "failed", "skipped"] as const;

/** Adds `count` tests to one category of `tally`. */
function addTo(tally: Tally, category: CountCategory, count: number): void {
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

/**
 * Sums a summary's `<count> <word>` parts (`3 passed`, `1 failed`) into a tally of all three
 * categories; a word `categoryOf` maps to nothing (`total`, `deselected`) counts nowhere. Undefined
 * when a part is not such a count: then the line was not that runner's summary.
 */
export function sumCounts(
  parts: readonly string[],
  count: RegExp,
  categoryOf: (word: string) => CountCategory | undefined,
): Tally | undefined {
  const tally = zeroTally();
  for (const part of parts) {
    const match = count.exec(part);
    if (!match) return undefined;
    const category = categoryOf(match[2] as string);
    if (category) addTo(tally, category, Number(match[1]));
  }
  return tally;
}
