import type { SourceLine } from "./assemble.js";
import type { Placement } from "./hunk-report.js";
import type { HunkLine } from "./parse.js";

const LEADING = /^[ \t]*/;

const bare = (text: string) => (text.endsWith("\r") ? text.slice(0, -1) : text);
const indentOf = (text: string) => LEADING.exec(text)?.[0] ?? "";
/** How deep leading whitespace reaches, a tab counting four columns. */
const depth = (text: string) =>
  [...indentOf(text)].reduce((sum, character) => sum + (character === "\t" ? 4 : 1), 0);

/**
 * Why the hunk `placement` put into `output` (its changed lines starting at `outputStart`) does
 * not do what the diff says, or `undefined` when it does. Checked against the `original` lines:
 * every added line stands as the diff gives it (its indentation aside only where the hunk was
 * re-indented); the changed lines read otherwise than before, unless the diff's own removed and
 * added lines are the same; and a line the diff moves deeper or shallower is moved the same way.
 */
export function intentViolation(
  original: readonly SourceLine[],
  output: readonly SourceLine[],
  placement: Placement,
  outputStart: number,
): string | undefined {
  const lines = placement.lines;
  const first = lines.findIndex((line) => line.kind !== "context");
  let last = lines.length - 1;
  while (last >= 0 && lines[last]?.kind === "context") last -= 1;
  const core = lines.slice(first, last + 1);
  const before: string[] = [];
  const after: string[] = [];
  const removed: Array<{ diff: string; file: string }> = [];
  const added: Array<{ diff: string; file: string }> = [];
  let cursor = placement.coreStart;
  let written = outputStart;
  for (const line of core) {
    if (line.kind !== "add") {
      const file = bare(original[cursor]?.text ?? "");
      before.push(file);
      if (line.kind === "remove") removed.push({ diff: bare(line.text), file });
      cursor += 1;
    }
    if (line.kind !== "remove") {
      const file = bare(output[written]?.text ?? "");
      after.push(file);
      if (line.kind === "add") added.push({ diff: bare(line.text), file });
      written += 1;
    }
  }

  for (const [index, line] of added.entries()) {
    const same =
      line.file === line.diff ||
      (placement.reindented !== undefined && line.file.trimStart() === line.diff.trimStart());
    if (!same) {
      return `its added line ${index + 1} would read ${JSON.stringify(line.file)}, not ${JSON.stringify(line.diff)}`;
    }
  }
  const changes = !sameLines(
    removed.map((line) => line.diff),
    added.map((line) => line.diff),
  );
  if (changes && sameLines(before, after)) {
    return "the lines it changes would read as they did before, so its change would be lost";
  }
  return indentationUndone(core, removed, added);
}

function sameLines(left: readonly string[], right: readonly string[]): boolean {
  return left.length === right.length && left.every((line, index) => line === right[index]);
}

/**
 * Why an added line that the diff indents deeper or shallower than the removed line it replaces
 * (the same text otherwise) does not move that way in the file, or `undefined`.
 */
function indentationUndone(
  core: readonly HunkLine[],
  removed: ReadonlyArray<{ diff: string; file: string }>,
  added: ReadonlyArray<{ diff: string; file: string }>,
): string | undefined {
  if (!core.some((line) => line.kind === "add")) return undefined;
  const used = new Set<number>();
  for (const line of added) {
    const content = line.diff.trim();
    if (content === "") continue;
    const index = removed.findIndex(
      (candidate, position) => !used.has(position) && candidate.diff.trim() === content,
    );
    const partner = removed[index];
    if (partner === undefined) continue;
    used.add(index);
    const meant = Math.sign(depth(line.diff) - depth(partner.diff));
    const done = Math.sign(depth(line.file) - depth(partner.file));
    if (meant !== done) {
      const how = meant > 0 ? "deeper" : meant < 0 ? "shallower" : "at the same depth";
      return `the diff indents ${JSON.stringify(content.slice(0, 80))} ${how}, and in the file it would not be`;
    }
  }
  return undefined;
}
