// The slips a model makes inside hunks, harder than the perturbations: each takes a case
// { oldText, newText, diff } and a random source, and returns a case whose expected new text is
// still what the diff meant, or undefined when the slip does not apply to that file.
import { joinHunks, recount, splitHunks } from "./hunks.mjs";

/** `text` with one letter of one of its words (4+ letters) replaced by another letter. */
function typo(text, next) {
  const words = [...text.matchAll(/[A-Za-z]{4,}/g)];
  if (words.length === 0) return undefined;
  const word = words[Math.floor(next() * words.length)];
  const at = word.index + Math.floor(next() * word[0].length);
  const letter = text[at];
  const lower = letter.toLowerCase();
  const alphabet = "abcdefghijklmnopqrstuvwxyz".replace(lower, "");
  let replacement = alphabet[Math.floor(next() * alphabet.length)];
  if (letter !== lower) replacement = replacement.toUpperCase();
  return text.slice(0, at) + replacement + text.slice(at + 1);
}

/** One line of each hunk whose marker is `marker` gets a one-letter typo. */
function typoIn(marker) {
  return (item, next) => {
    const parsed = splitHunks(item.diff);
    let changed = false;
    for (const hunk of parsed.hunks) {
      const candidates = hunk.body
        .map((line, index) => ({ line, index }))
        .filter(({ line }) => line.startsWith(marker) && /[A-Za-z]{4,}/.test(line));
      if (candidates.length === 0) continue;
      const { line, index } = candidates[Math.floor(next() * candidates.length)];
      hunk.body[index] = marker + typo(line.slice(1), next);
      changed = true;
    }
    return changed ? { ...item, diff: joinHunks(parsed) } : undefined;
  };
}

/** The width of one indentation level of a file indented with spaces, or undefined. */
function spaceIndentWidth(text) {
  const counts = [];
  for (const line of text.split("\n")) {
    if (line.startsWith("\t")) return undefined;
    const spaces = /^ +(?=\S)/.exec(line)?.[0].length ?? 0;
    if (spaces >= 2) counts.push(spaces);
  }
  if (counts.length === 0) return undefined;
  const twos = counts.filter((count) => count % 4 === 2).length;
  return twos * 10 > counts.length ? 2 : 4;
}

export const SLIPS = {
  /** A context line (one per hunk) with a one-letter typo in a word. */
  "context-typo": typoIn(" "),
  /** A removed line (one per hunk) with a one-letter typo in a word. */
  "removed-typo": typoIn("-"),
  /**
   * A context line with old lines (context or removed) before and after it in the hunk left out
   * (one per hunk; counts recounted). A line at either end of the old lines is left out of no
   * gap: without it the hunk says another thing (its added lines go elsewhere), not the same
   * thing with a slip.
   */
  "context-missing": (item, next) => {
    const parsed = splitHunks(item.diff);
    let changed = false;
    for (const hunk of parsed.hunks) {
      const old = (line) => line.startsWith(" ") || line.startsWith("-") || line === "";
      const firstOld = hunk.body.findIndex(old);
      const lastOld = hunk.body.findLastIndex(old);
      const inner = hunk.body
        .map((line, index) => ({ line, index }))
        .filter(
          ({ line, index }) =>
            index > firstOld &&
            index < lastOld &&
            (line.startsWith(" ") || line === "") &&
            !hunk.body[index + 1].startsWith("\\"),
        );
      if (inner.length === 0) continue;
      const { index } = inner[Math.floor(next() * inner.length)];
      hunk.body.splice(index, 1);
      Object.assign(hunk, recount(hunk));
      changed = true;
    }
    return changed ? { ...item, diff: joinHunks(parsed) } : undefined;
  },
  /** One to three lines inserted in the file outside every hunk, after the diff was made. */
  "changed-elsewhere": (item, next) => {
    const { hunks } = splitHunks(item.diff);
    const oldLines = item.oldText.split("\n");
    // Gaps (insertion before 0-based line `gap`) outside every hunk's old range, last line excluded.
    const inside = (gap) =>
      hunks.some((hunk) =>
        hunk.oldCount === 0
          ? gap === hunk.oldStart
          : gap > hunk.oldStart - 1 && gap < hunk.oldStart - 1 + hunk.oldCount,
      );
    const gaps = [];
    for (let gap = 0; gap < oldLines.length - 1; gap += 1) if (!inside(gap)) gaps.push(gap);
    if (gaps.length === 0) return undefined;
    const gap = gaps[Math.floor(next() * gaps.length)];
    const count = 1 + Math.floor(next() * 3);
    const added = Array.from({ length: count }, (_, index) => `// edited since (${index + 1})`);
    let newGap = gap;
    for (const hunk of hunks) {
      const end = hunk.oldCount === 0 ? hunk.oldStart : hunk.oldStart - 1 + hunk.oldCount;
      if (end <= gap) newGap += hunk.newCount - hunk.oldCount;
    }
    const newLines = item.newText.split("\n");
    if (newGap < 0 || newGap >= newLines.length) return undefined;
    const crlf = item.oldText.includes("\r\n") ? "\r" : "";
    oldLines.splice(gap, 0, ...added.map((line) => line + crlf));
    newLines.splice(newGap, 0, ...added.map((line) => line + crlf));
    return { ...item, oldText: oldLines.join("\n"), newText: newLines.join("\n") };
  },
  /**
   * The file is indented with spaces; the diff (every line of it) with a tab per level, and so at
   * least one of its context or removed lines (else only its added lines would differ, and they
   * may mean tabs).
   */
  "tabs-for-spaces": (item) => {
    const width = spaceIndentWidth(item.oldText);
    if (width === undefined || item.newText.split("\n").some((line) => line.startsWith("\t"))) {
      return undefined;
    }
    const parsed = splitHunks(item.diff);
    let changed = false;
    for (const hunk of parsed.hunks) {
      hunk.body = hunk.body.map((line) => {
        const spaces = /^( +)\S/.exec(line.slice(1))?.[1].length ?? 0;
        if (!/^[-+ ]/.test(line) || spaces < width) return line;
        if (!line.startsWith("+")) changed = true;
        const indent = "\t".repeat(Math.floor(spaces / width)) + " ".repeat(spaces % width);
        return line[0] + indent + line.slice(1 + spaces);
      });
    }
    return changed ? { ...item, diff: joinHunks(parsed) } : undefined;
  },
};
