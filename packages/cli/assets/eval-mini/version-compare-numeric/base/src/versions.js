/** -1, 0 or 1 as version `a` is lower than, equal to or higher than `b` ("1.2.3"). */
export function compareVersions(a, b) {
  const left = a.split(".");
  const right = b.split(".");
  for (let index = 0; index < Math.max(left.length, right.length); index += 1) {
    const x = left[index] ?? "0";
    const y = right[index] ?? "0";
    if (x < y) return -1;
    if (x > y) return 1;
  }
  return 0;
}

/** The highest of some versions. */
export function latest(versions) {
  return [...versions].sort(compareVersions).at(-1);
}
