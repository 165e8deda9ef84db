import type { TestRunnerCounts } from "./test-runner-counts.js";

/** Counts by outcome; a category is absent when the output says nothing about it. */
export type Tally = Pick<
  TestRunnerCounts,
  "passed" | "failed" | "skipped" | "todo" | "xfailed" | "xpassed" | "errors" | "deselected"
>;

/** One outcome of a {@link Tally}. */
export type CountCategory = keyof Tally;

/**
 * Every {@link CountCategory}, in the order results list them: the three every summary states,
 * then those a runner reports apart from them (jest's, vitest's and node:test's `todo`, pytest's,
 * unittest's, cargo's `filtered out`).
 */
export const COUNT_CATEGORIES = [
  "passed",
  "failed",
  "skipped",
  "todo",
  "xfailed",
  "xpassed",
  "errors",
  "deselected",
] as const;

/** The categories only some runners report: absent unless the runner counted one or more. */
const EXTRA_CATEGORIES: ReadonlySet<CountCategory> = new Set([
  "todo",
  "xfailed",
  "xpassed",
  "errors",
  "deselected",
]);

/** Adds `count` tests to one category of `tally` (none to a category only some runners report). */
export function addTo(tally: Tally, category: CountCategory, count: number): void {
  if (count === 0 && EXTRA_CATEGORIES.has(category)) return;
  tally[category] = (tally[category] ?? 0) + count;
}

/** A tally of the three categories every summary states at 0, to be filled from a summary. */
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
 * Sums a summary's `<count> <word>` parts (`3 passed`, `1 failed`) into a tally of the three
 * categories and any others the summary names; a word `categoryOf` maps to nothing (`total`,
 * `warnings`) counts nowhere. Undefined
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
