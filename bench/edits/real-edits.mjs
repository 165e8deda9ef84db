// Real edit calls models made in real aider sessions (`shared/real-edits/cases.jsonl`, read where it
// lies, never copied): each as the edit_file call it was and as the unified diff of its `old` and
// `new`, for apply_diff, GNU patch and `git apply --recount`.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { createTwoFilesPatch } from "diff";

/**
 * The folder of the real edit calls: `PLEACH_REAL_EDITS`, else `shared/real-edits` beside the
 * checkout or one of its parents (a worktree lies deeper than the main checkout).
 */
export function realEditsFolder(repoRoot) {
  if (process.env.PLEACH_REAL_EDITS) return process.env.PLEACH_REAL_EDITS;
  for (let folder = path.dirname(repoRoot); ; folder = path.dirname(folder)) {
    const candidate = path.join(folder, "shared/real-edits");
    if (existsSync(path.join(candidate, "cases.jsonl"))) return candidate;
    if (path.dirname(folder) === folder) return undefined;
  }
}

/**
 * The cases, each { id, kind, path, before, old, new, intended, slip, diff }: `intended` is
 * undefined for `ambiguous` ones (refusing is right). `diff` is `old` → `new` as a model writes
 * it without knowing where in the file it goes: its line numbers count from the snippet's start.
 */
export function realEditCases(folder) {
  const lines = readFileSync(path.join(folder, "cases.jsonl"), "utf8").split("\n");
  return lines
    .filter((line) => line.trim() !== "")
    .map((line) => {
      const entry = JSON.parse(line);
      const { old, new: replacement } = entry.call;
      return {
        id: entry.id,
        kind: entry.kind,
        slip: entry.notes?.slip,
        path: entry.path,
        before: entry.before,
        old,
        new: replacement,
        intended: entry.kind === "ambiguous" ? undefined : entry.intended,
        diff: snippetDiff(entry.path, old, replacement),
      };
    });
}

function snippetDiff(file, old, replacement) {
  // Both sides end with a line break, so no `\ No newline` marker pins the snippet to the file's end.
  const line = (text) => (text === "" || text.endsWith("\n") ? text : `${text}\n`);
  const patch = createTwoFilesPatch(
    `a/${file}`,
    `b/${file}`,
    line(old),
    line(replacement),
    "",
    "",
    {
      context: 1_000_000,
    },
  );
  // jsdiff writes an `Index:` line and a `===` rule first; a model's diff starts at `---`.
  return patch.slice(patch.indexOf("--- "));
}
