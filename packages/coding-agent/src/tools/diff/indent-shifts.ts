import type { HunkLine } from "./parse.js";
import { canReindent, type IndentShift, indentShift } from "./reindent.js";

/**
 * For each added line of `lines` (a hunk's lines whose old side sits at 0-based line `start` of
 * `fileLines`), the indentation change its neighbours show, or `undefined` if unclear.
 */
export function indentShifts(
  fileLines: readonly string[],
  lines: readonly HunkLine[],
  start: number,
): IndentShift[] | undefined {
  const shifts: IndentShift[] = [];
  let fileLine = start;
  const pairs: Array<IndentShift | undefined> = lines.map((line) => {
    if (line.kind === "add") return undefined;
    const shift = indentShift(line.text, fileLines[fileLine] ?? "");
    fileLine += 1;
    return shift;
  });
  for (let index = 0; index < lines.length; index += 1) {
    if (lines[index]?.kind !== "add") continue;
    const neighbours = new Map<string, IndentShift>();
    for (const step of [-1, 1]) {
      for (let other = index + step; other >= 0 && other < lines.length; other += step) {
        const shift = pairs[other];
        if (lines[other]?.kind === "add" || shift === undefined) continue;
        neighbours.set(`${shift.from}\u0000${shift.to}`, shift);
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
