import { indentStyle } from "./indent-style.js";
import type { HunkLine } from "./parse.js";
import { canReindent, type IndentShift, indentShift, reindentLine } from "./reindent.js";

/** Options of {@link reindentAdded}. */
interface ReindentOptions {
  /**
   * Every old line must show the same shift, not only each added line's neighbours (an edit's
   * `new` follows all of its `old`, so its neighbours alone prove little).
   * @default false
   */
  uniform?: boolean;
}

/**
 * The added lines of `lines` (a hunk's lines whose old side sits at 0-based line `start` of
 * `fileLines`, matched with indentation ignored) re-indented to the file's indentation:
 * converted to the file's indentation style when the diff's is another (see {@link indentStyle}),
 * then moved by the shift their neighbours show. `undefined` when that shift is unclear.
 */
export function reindentAdded(
  fileLines: readonly string[],
  lines: readonly HunkLine[],
  start: number,
  { uniform = false }: ReindentOptions = {},
): string[] | undefined {
  const style = indentStyle(fileLines, lines, start);
  const converted = lines.map((line) => ({ ...line, text: style(line.text) }));
  const shifts = indentShifts(fileLines, converted, start, uniform);
  if (shifts === undefined) return undefined;
  return converted
    .filter((line) => line.kind === "add")
    .map((line, index) => {
      const shift = shifts[index];
      return shift === undefined ? line.text : reindentLine(line.text, shift);
    });
}

/**
 * For each added line of `lines` (a hunk's lines whose old side sits at 0-based line `start` of
 * `fileLines`), the indentation change its neighbours show (every old line, if `uniform`), or
 * `undefined` if unclear.
 */
function indentShifts(
  fileLines: readonly string[],
  lines: readonly HunkLine[],
  start: number,
  uniform: boolean,
): IndentShift[] | undefined {
  const shifts: IndentShift[] = [];
  let fileLine = start;
  const pairs: Array<IndentShift | undefined> = lines.map((line) => {
    if (line.kind === "add") return undefined;
    const shift = indentShift(line.text, fileLines[fileLine] ?? "");
    fileLine += 1;
    return shift;
  });
  const key = (shift: IndentShift) => `${shift.from}\u0000${shift.to}`;
  if (uniform && new Set(pairs.flatMap((shift) => (shift ? [key(shift)] : []))).size > 1) {
    return undefined;
  }
  for (let index = 0; index < lines.length; index += 1) {
    if (lines[index]?.kind !== "add") continue;
    const neighbours = new Map<string, IndentShift>();
    for (const step of [-1, 1]) {
      for (let other = index + step; other >= 0 && other < lines.length; other += step) {
        const shift = pairs[other];
        if (lines[other]?.kind === "add" || shift === undefined) continue;
        neighbours.set(key(shift), shift);
        break;
      }
    }
    if (neighbours.size > 1) return undefined;
    const shift = [...neighbours.values()][0] ?? { from: "", to: "" };
    if (!canReindent(lines[index]?.text ?? "", shift)) return undefined;
    shifts.push(shift);
  }
  return shifts;
}
