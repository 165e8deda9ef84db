// Perturbations of the kinds the engine has always tolerated: each takes a case
// { oldText, newText, diff } and a random source, and returns a case, or undefined when it does
// not apply to that file.
import { joinHunks, recount, splitHunks } from "./hunks.mjs";

export const PERTURBATIONS = {
  /** Every hunk's line numbers moved by 3 to 40 lines, up or down. */
  "shifted-lines": (item, next) => {
    const parsed = splitHunks(item.diff);
    for (const hunk of parsed.hunks) {
      const shift = Math.round((3 + next() * 37) * (next() < 0.5 ? -1 : 1));
      hunk.oldStart = Math.max(1, hunk.oldStart + shift);
      hunk.newStart = Math.max(1, hunk.newStart + shift);
    }
    return { ...item, diff: joinHunks(parsed) };
  },
  /** Counts that do not describe the body: off by a few, or left out. */
  "wrong-counts": (item, next) => {
    const parsed = splitHunks(item.diff);
    const header = (hunk) =>
      next() < 0.3
        ? `@@ -${hunk.oldStart} +${hunk.newStart} @@`
        : `@@ -${hunk.oldStart},${hunk.oldCount + 1 + Math.floor(next() * 4)} +${hunk.newStart},${Math.max(0, hunk.newCount - 1 - Math.floor(next() * 3))} @@`;
    return { ...item, diff: joinHunks(parsed, header) };
  },
  /** No file headers at all, or headers naming another file (the path is passed separately). */
  headers: (item, next) => {
    const parsed = splitHunks(item.diff);
    parsed.head = next() < 0.5 ? [] : ["--- original.js", "+++ modified.js"];
    return { ...item, diff: joinHunks(parsed) };
  },
  /** Trailing whitespace added to or removed from half the context lines. */
  "whitespace-drift": (item, next) => {
    const parsed = splitHunks(item.diff);
    let changed = false;
    for (const hunk of parsed.hunks) {
      hunk.body = hunk.body.map((line) => {
        if (!line.startsWith(" ") || line.trim() === "" || next() < 0.5) return line;
        changed = true;
        return line === line.trimEnd() ? `${line}  ` : line.trimEnd();
      });
    }
    return changed ? { ...item, diff: joinHunks(parsed) } : undefined;
  },
  /** The file has CRLF line endings; the diff stays LF. */
  "crlf-file": (item) => {
    if (item.oldText.includes("\r") || item.newText.includes("\r")) return undefined;
    const crlf = (text) => text.replaceAll("\n", "\r\n");
    return { ...item, oldText: crlf(item.oldText), newText: crlf(item.newText) };
  },
  /** Context cut to one line per side, or two more correct context lines per side (counts kept). */
  context: (item, next) => {
    const parsed = splitHunks(item.diff);
    const oldLines = item.oldText.split("\n");
    const trim = next() < 0.5;
    for (const hunk of parsed.hunks) {
      const first = hunk.body.findIndex((line) => !line.startsWith(" ") && line !== "");
      let last = hunk.body.length - 1;
      while (last >= 0 && (hunk.body[last].startsWith(" ") || hunk.body[last] === "")) last -= 1;
      if (trim) {
        const top = Math.max(0, first - 1);
        hunk.body = hunk.body.slice(top, last + 2);
        hunk.oldStart += top;
        hunk.newStart += top;
      } else {
        const before = oldLines.slice(Math.max(0, hunk.oldStart - 3), hunk.oldStart - 1);
        const afterStart = hunk.oldStart - 1 + hunk.oldCount;
        const hasMarker = hunk.body.some((line) => line.startsWith("\\"));
        const after = hasMarker ? [] : oldLines.slice(afterStart, afterStart + 2);
        if (afterStart + after.length >= oldLines.length)
          after.splice(Math.max(0, oldLines.length - 1 - afterStart));
        hunk.body = [
          ...before.map((line) => ` ${line}`),
          ...hunk.body,
          ...after.map((line) => ` ${line}`),
        ];
        hunk.oldStart -= before.length;
        hunk.newStart -= before.length;
      }
      Object.assign(hunk, recount(hunk));
    }
    return { ...item, diff: joinHunks(parsed) };
  },
  /**
   * The file holds the first hunk's old text twice: a copy is appended at the end, below the real
   * block, so the diff's line numbers are still right and single out the real block. Every tool
   * should apply this exactly; a tool that takes the first match in the file would not.
   */
  "duplicate-below": (item) => {
    const block = firstHunkOldBlock(item);
    if (block === undefined) return undefined;
    const separator = item.oldText.endsWith("\n") || item.oldText === "" ? "" : "\n";
    const suffix = `${separator}${block.join("\n")}\n`;
    // The expected file keeps the copy unchanged after the real block's change.
    const newSeparator = item.newText.endsWith("\n") || item.newText === "" ? "" : "\n";
    return {
      ...item,
      oldText: item.oldText + suffix,
      newText: `${item.newText}${newSeparator}${block.join("\n")}\n`,
    };
  },
  /**
   * AMBIGUOUS BY CONSTRUCTION, so not scored as a perturbation a tool should apply: a copy of the
   * first hunk's old text is put at the top of the file and the diff's line numbers are left stale
   * (the model read the file before the copy was made). The stale number is nearer the real block
   * but more than a few lines from both. The specification's rule is "never guess": the correct
   * outcome is a conflict listing both places. Nearest-wins tools happen to be right here and
   * would be wrong had the copy been the nearer one.
   */
  "ambiguous-stale": (item) => {
    const parsed = splitHunks(item.diff);
    const [first] = parsed.hunks;
    const block = firstHunkOldBlock(item);
    if (first === undefined || block === undefined || first.oldStart <= block.length + 4) {
      return undefined;
    }
    const prefix = `${block.join("\n")}\n`;
    return { ...item, oldText: prefix + item.oldText, newText: prefix + item.newText };
  },
};

/** The old side of the first hunk (context and removed lines), or `undefined` when unusable. */
function firstHunkOldBlock(item) {
  const parsed = splitHunks(item.diff);
  const [first] = parsed.hunks;
  if (first === undefined || first.body.some((line) => line.startsWith("\\"))) return undefined;
  const block = first.body.filter((line) => !line.startsWith("+")).map((line) => line.slice(1));
  return block.length === 0 ? undefined : block;
}
