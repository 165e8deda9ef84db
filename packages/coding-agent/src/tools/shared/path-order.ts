/**
 * Compare two paths the way a sorted directory walk (ripgrep's `--sort path`) orders them: folder
 * by folder, each folder's entries by the bytes of their UTF-8 names, so `a/b` comes before `a.b`
 * and `a-b` (a `/` sorts first). Within one folder this is plain byte order, the order of
 * `LC_ALL=C sort`.
 */
export function compareTreePaths(left: string, right: string): number {
  return comparePaths(left, right, true);
}

/**
 * Compare two paths by the bytes of their UTF-8 forms, the order of `LC_ALL=C sort` (`a.b` and
 * `a-b` before `a/b`).
 */
export function comparePathBytes(left: string, right: string): number {
  return comparePaths(left, right, false);
}

function comparePaths(left: string, right: string, slashFirst: boolean): number {
  const length = Math.min(left.length, right.length);
  for (let index = 0; index < length; index++) {
    let leftCode = left.charCodeAt(index);
    let rightCode = right.charCodeAt(index);
    if (leftCode === rightCode) continue;
    if (slashFirst && leftCode === 0x2f) return -1;
    if (slashFirst && rightCode === 0x2f) return 1;
    if (leftCode >= 0xd800 && rightCode >= 0xd800) {
      // UTF-16 puts U+E000..U+FFFF after the surrogates of U+10000 and up; UTF-8 (and so the
      // file system's byte order) puts them before.
      leftCode = leftCode >= 0xe000 ? leftCode - 0x800 : leftCode + 0x2000;
      rightCode = rightCode >= 0xe000 ? rightCode - 0x800 : rightCode + 0x2000;
    }
    return leftCode - rightCode;
  }
  return left.length - right.length;
}
