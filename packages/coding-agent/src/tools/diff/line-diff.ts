import { commonEnds } from "../shared/common-ends.js";
import type { HunkLine } from "./parse.js";

/** Past this many cells (old lines × new lines between the common ends), no common lines inside. */
const MAX_CELLS = 4_000_000;

/**
 * The hunk lines that turn `before` into `after`: lines common to both (a longest common
 * subsequence) are context, the others removed or added, a change's removed lines before its
 * added ones, as a diff lists them. Used to read a search/replace edit as a hunk.
 */
export function lineDiff(before: readonly string[], after: readonly string[]): HunkLine[] {
  const line = (kind: HunkLine["kind"], text: string): HunkLine => ({
    kind,
    text,
    noNewlineAtEnd: false,
  });
  const { head, tail } = commonEnds(before, after);
  const left = before.slice(head, before.length - tail);
  const right = after.slice(head, after.length - tail);
  const middle: HunkLine[] = [];
  if (left.length * right.length > MAX_CELLS) {
    middle.push(...left.map((text) => line("remove", text)));
    middle.push(...right.map((text) => line("add", text)));
  } else {
    // lengths[i][j]: the longest common subsequence of left[i..] and right[j..].
    const width = right.length + 1;
    const lengths = new Uint32Array((left.length + 1) * width);
    for (let i = left.length - 1; i >= 0; i -= 1) {
      for (let j = right.length - 1; j >= 0; j -= 1) {
        lengths[i * width + j] =
          left[i] === right[j]
            ? (lengths[(i + 1) * width + j + 1] ?? 0) + 1
            : Math.max(lengths[(i + 1) * width + j] ?? 0, lengths[i * width + j + 1] ?? 0);
      }
    }
    let i = 0;
    let j = 0;
    const removed: HunkLine[] = [];
    const added: HunkLine[] = [];
    const flush = () => {
      middle.push(...removed.splice(0), ...added.splice(0));
    };
    while (i < left.length || j < right.length) {
      if (i < left.length && j < right.length && left[i] === right[j]) {
        flush();
        middle.push(line("context", left[i] ?? ""));
        i += 1;
        j += 1;
      } else if (
        j >= right.length ||
        (i < left.length &&
          (lengths[(i + 1) * width + j] ?? 0) >= (lengths[i * width + j + 1] ?? 0))
      ) {
        removed.push(line("remove", left[i] ?? ""));
        i += 1;
      } else {
        added.push(line("add", right[j] ?? ""));
        j += 1;
      }
    }
    flush();
  }
  return [
    ...before.slice(0, head).map((text) => line("context", text)),
    ...middle,
    ...before.slice(before.length - tail).map((text) => line("context", text)),
  ];
}
