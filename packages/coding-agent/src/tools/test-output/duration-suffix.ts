const DURATION_SUFFIX = /\s\(?\d+(?:\.\d+)? ?m?s\)?$/;

/** The name in a line like `✕ divides (2 ms)` or `× divides 14ms`, without the duration. */
export function nameBeforeDuration(text: string): string {
  return text.replace(DURATION_SUFFIX, "");
}
