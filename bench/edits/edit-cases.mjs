// edit_file: each hunk of the clean diff as a search/replace edit, and imperfect versions.
import { editText, locateTolerantly } from "./engine.mjs";
import { splitHunks } from "./hunks.mjs";

/** The hunks of a clean diff as { before, after, start } with the true 0-based start line. */
function hunkEdits(item) {
  const { hunks } = splitHunks(item.diff);
  return hunks
    .filter((hunk) => !hunk.body.some((line) => line.startsWith("\\")) && hunk.oldCount > 0)
    .map((hunk) => {
      const before = hunk.body.filter((line) => !line.startsWith("+")).map((line) => line.slice(1));
      const after = hunk.body.filter((line) => !line.startsWith("-")).map((line) => line.slice(1));
      return { before, after, start: hunk.oldStart - 1 };
    });
}

/**
 * edit_file's decision for one edit: exactly once; else, when `tolerant`, a unique tolerant match.
 * "wrong-bytes": success at the right place with other text; "wrong-place": success elsewhere.
 */
export function editOutcome({ fileText, old, replacement, expected, start }, { tolerant }) {
  if (editText !== undefined) {
    const text = editText(fileText, { old, new: replacement }, { tolerant });
    if (text === undefined) return "refused";
    if (text === expected) return "exact";
    let first = 0;
    while (text[first] === expected[first]) first += 1;
    const line = text.slice(0, first).split("\n").length - 1;
    const inside = line >= start && line <= start + old.split("\n").length;
    return inside ? "wrong-bytes" : "wrong-place";
  }
  return earlierEditOutcome({ fileText, old, replacement, expected, start }, { tolerant });
}

/** edit_file's rule before `editText`: exactly once, else a unique match of `locateTolerantly`. */
function earlierEditOutcome({ fileText, old, replacement, expected, start }, { tolerant }) {
  const first = fileText.indexOf(old);
  let text;
  let line;
  if (first !== -1) {
    if (fileText.indexOf(old, first + 1) !== -1) return "refused";
    text = fileText.slice(0, first) + replacement + fileText.slice(first + old.length);
    line = fileText.slice(0, first).split("\n").length - 1;
  } else {
    if (!tolerant) return "refused";
    const match = locateTolerantly(fileText, old, replacement);
    if (match.status !== "unique") return "refused";
    text = fileText.slice(0, match.start) + match.replacement + fileText.slice(match.end);
    line = match.startLine - 1;
  }
  if (text === expected) return "exact";
  return line === start ? "wrong-bytes" : "wrong-place";
}

/**
 * `old` and `new` with their indentation drifted alike, as a model that lost track of the depth
 * writes them: the indentation all of `old`'s lines share taken off both, or when they share
 * none, two spaces put before every line of both. `undefined` when the drift cannot be made.
 */
function drift(before, after) {
  const filled = before.filter((line) => line.trim() !== "");
  if (filled.length === 0) return undefined;
  let common = /^[ \t]*/.exec(filled[0])[0];
  for (const line of filled) while (!line.startsWith(common)) common = common.slice(0, -1);
  const shift = (line) => {
    if (line.trim() === "") return line;
    return common === "" ? `  ${line}` : line.slice(common.length);
  };
  if (after.some((line) => line.trim() !== "" && !line.startsWith(common))) return undefined;
  return { old: before.map(shift), new: after.map(shift) };
}

/** Straight quotes turned typographic, as text that went through a word processor reads. */
function typographic(line) {
  let double = 0;
  return line
    .replace(/'/g, "\u2019")
    .replace(/"/g, () => (double++ % 2 === 0 ? "\u201C" : "\u201D"));
}

export function editCases(item) {
  const cases = [];
  const lines = item.oldText.split("\n");
  for (const edit of hunkEdits(item)) {
    // Only hunks whose old text is where the header says (always, for a clean git diff).
    if (edit.before.some((line, index) => lines[edit.start + index] !== line)) continue;
    const expectedLines = [
      ...lines.slice(0, edit.start),
      ...edit.after,
      ...lines.slice(edit.start + edit.before.length),
    ];
    const expected = expectedLines.join("\n");
    const old = `${edit.before.join("\n")}\n`;
    const replacement = `${edit.after.join("\n")}\n`;
    if (edit.start + edit.before.length >= lines.length) continue;
    cases.push({
      kind: "clean",
      fileText: item.oldText,
      old,
      replacement,
      expected,
      start: edit.start,
    });
    const trailing = edit.before.map((line, index) =>
      index % 2 === 0 && line.trim() !== "" ? `${line.trimEnd()} ` : line,
    );
    cases.push({
      kind: "whitespace-drift",
      fileText: item.oldText,
      old: `${trailing.join("\n")}\n`,
      replacement,
      expected,
      start: edit.start,
    });
    const drifted = drift(edit.before, edit.after);
    if (drifted !== undefined) {
      cases.push({
        kind: "indentation-drift",
        fileText: item.oldText,
        old: `${drifted.old.join("\n")}\n`,
        replacement: `${drifted.new.join("\n")}\n`,
        expected,
        start: edit.start,
      });
    }
    if (/['"]/.test(old)) {
      cases.push({
        kind: "typographic-quotes",
        fileText: item.oldText,
        old: typographic(old),
        replacement,
        expected,
        start: edit.start,
      });
    }
    if (!item.oldText.includes("\r")) {
      cases.push({
        kind: "crlf-file",
        fileText: item.oldText.replaceAll("\n", "\r\n"),
        old,
        replacement,
        expected: expected.replaceAll("\n", "\r\n"),
        start: edit.start,
      });
    }
  }
  return cases;
}
