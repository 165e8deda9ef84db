/**
 * How many items `left` and `right` share at their start (`head`) and, after those, at their end
 * (`tail`): what lies between is where two versions of a text differ.
 */
export function commonEnds<T>(
  left: ArrayLike<T>,
  right: ArrayLike<T>,
): { head: number; tail: number } {
  let head = 0;
  while (head < left.length && head < right.length && left[head] === right[head]) head += 1;
  let tail = 0;
  while (
    tail < left.length - head &&
    tail < right.length - head &&
    left[left.length - 1 - tail] === right[right.length - 1 - tail]
  ) {
    tail += 1;
  }
  return { head, tail };
}
