import { normalizeLine } from "./locate.js";

/**
 * The fewest characters a line must have (whitespace aside) for a small edit to be tolerated: in
 * a shorter one (`}`, `i++;`, `end`) a typo is as likely another line as a slip.
 */
const MIN_LENGTH = 10;

/** One differing character per this many characters of the line, at most {@link MAX_DISTANCE}. */
const CHARACTERS_PER_EDIT = 10;
const MAX_DISTANCE = 3;

/**
 * Whether the diff's `diffLine` may stand for the file's `fileLine` with a slip: they differ
 * (trailing whitespace and Unicode lookalikes aside) by a few inserted, deleted or replaced
 * characters, one per {@link CHARACTERS_PER_EDIT} of the line, and both are long enough
 * ({@link MIN_LENGTH}) for the slip to be told apart from another line.
 */
export function isSmallEdit(diffLine: string, fileLine: string): boolean {
  const left = normalizeLine(diffLine, "unicode-punctuation");
  const right = normalizeLine(fileLine, "unicode-punctuation");
  if (left === right) return false;
  const length = Math.min(left.trim().length, right.trim().length);
  if (length < MIN_LENGTH) return false;
  const limit = Math.min(MAX_DISTANCE, Math.floor(length / CHARACTERS_PER_EDIT));
  return boundedDistance(left, right, limit) <= limit;
}

/**
 * The Levenshtein distance of `left` and `right` when it is at most `limit`, else `limit + 1`:
 * only the band of `limit` cells either side of the diagonal is computed, in two rows reused.
 */
function boundedDistance(left: string, right: string, limit: number): number {
  const beyond = limit + 1;
  if (Math.abs(left.length - right.length) > limit) return beyond;
  let previous = new Array<number>(right.length + 1).fill(beyond);
  let current = new Array<number>(right.length + 1).fill(beyond);
  for (let column = 0; column <= Math.min(limit, right.length); column += 1)
    previous[column] = column;
  for (let row = 1; row <= left.length; row += 1) {
    const from = Math.max(1, row - limit);
    const to = Math.min(right.length, row + limit);
    // Cells just outside the band may hold values from two rows ago.
    current[from - 1] = row <= limit ? row : beyond;
    if (to < right.length) current[to + 1] = beyond;
    let best = current[from - 1] ?? beyond;
    for (let column = from; column <= to; column += 1) {
      const substitution =
        (previous[column - 1] ?? beyond) + (left[row - 1] === right[column - 1] ? 0 : 1);
      const deletion = (previous[column] ?? beyond) + 1;
      const insertion = (current[column - 1] ?? beyond) + 1;
      const value = Math.min(substitution, deletion, insertion, beyond);
      current[column] = value;
      if (value < best) best = value;
    }
    if (best > limit) return beyond;
    [previous, current] = [current, previous];
  }
  return previous[right.length] ?? beyond;
}
