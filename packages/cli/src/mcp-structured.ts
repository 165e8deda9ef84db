import { capText } from "@pleach/core";

/** What {@link boundStructuredContent} returns. */
export interface BoundedStructuredContent {
  value: Record<string, unknown>;
  /** Whether strings or lists of `value` were cut to fit the budget. */
  cut: boolean;
}

/** Strings are not cut shorter than this, so that paths, names and messages stay readable. */
const SHORTEST_STRING = 200;

/**
 * Bound a tool's output, as `structuredContent`, to `maxChars` characters of JSON. The long
 * strings are cut first, each to the same length with its head and tail kept (a file's content, a
 * command's stdout); only when they are all down to a few hundred characters are the long lists
 * shortened, to the same number of entries each. Numbers, booleans and short strings (read_file's
 * `nextOffset`, run_tests' counts and failing names, a list's `truncatedAfter`) are never cut, so
 * the hints a program continues from stay true. A value that fits is returned as it is.
 */
export function boundStructuredContent(
  value: Record<string, unknown>,
  maxChars: number,
): BoundedStructuredContent {
  const fits = (candidate: unknown) => JSON.stringify(candidate).length <= maxChars;
  if (fits(value)) return { value, cut: false };
  const longestString = measure(value, "string");
  const stringLimit = largestFitting(SHORTEST_STRING, longestString, (limit) =>
    fits(shrink(value, { stringLimit: limit, listLimit: Number.POSITIVE_INFINITY })),
  );
  if (stringLimit !== undefined) {
    return {
      value: shrink(value, { stringLimit, listLimit: Number.POSITIVE_INFINITY }),
      cut: true,
    };
  }
  const listLimit =
    largestFitting(1, measure(value, "list"), (limit) =>
      fits(shrink(value, { stringLimit: SHORTEST_STRING, listLimit: limit })),
    ) ?? 1;
  return { value: shrink(value, { stringLimit: SHORTEST_STRING, listLimit }), cut: true };
}

/** The largest limit in `[low, high]` for which `fits` holds (it holds for all smaller ones). */
function largestFitting(
  low: number,
  high: number,
  fits: (limit: number) => boolean,
): number | undefined {
  if (high < low || !fits(low)) return undefined;
  let [good, bad] = [low, high + 1];
  while (bad - good > 1) {
    const middle = Math.floor((good + bad) / 2);
    if (fits(middle)) good = middle;
    else bad = middle;
  }
  return good;
}

/** The length of the longest string, or of the longest list, anywhere in `value`. */
function measure(value: unknown, what: "string" | "list"): number {
  if (typeof value === "string") return what === "string" ? value.length : 0;
  if (Array.isArray(value)) {
    const own = what === "list" ? value.length : 0;
    return value.reduce((most: number, item) => Math.max(most, measure(item, what)), own);
  }
  if (typeof value === "object" && value !== null) {
    return Object.values(value).reduce(
      (most: number, item) => Math.max(most, measure(item, what)),
      0,
    );
  }
  return 0;
}

function shrink<T>(value: T, limits: { stringLimit: number; listLimit: number }): T {
  if (typeof value === "string") return capText(value, { maxChars: limits.stringLimit }).text as T;
  if (Array.isArray(value)) {
    return value.slice(0, limits.listLimit).map((item) => shrink(item, limits)) as T;
  }
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, shrink(item, limits)]),
    ) as T;
  }
  return value;
}
