/** How a line's leading whitespace changed: `from` in the diff became `to` in the file. */
export interface IndentShift {
  from: string;
  to: string;
}

const LEADING = /^[ \t]*/;

/**
 * The shift that turns `diffLine`'s indentation into `fileLine`'s; `undefined` for blank lines.
 * It is reduced to what is added or removed at the left (`""` → `"    "` for lines four spaces
 * deeper, whatever their depth), so lines at different depths agree on one shift.
 */
export function indentShift(diffLine: string, fileLine: string): IndentShift | undefined {
  if (diffLine.trim() === "" || fileLine.trim() === "") return undefined;
  const from = LEADING.exec(diffLine)?.[0] ?? "";
  const to = LEADING.exec(fileLine)?.[0] ?? "";
  if (to.endsWith(from)) return { from: "", to: to.slice(0, to.length - from.length) };
  if (from.endsWith(to)) return { from: from.slice(0, from.length - to.length), to: "" };
  return { from, to };
}

/**
 * Whether `shift` can move `line`: its indentation starts with the shift's `from`, it is blank, or
 * the shift changes nothing.
 */
export function canReindent(line: string, shift: IndentShift): boolean {
  return shift.from === shift.to || line.trim() === "" || line.startsWith(shift.from);
}

/** `line` with `shift.from` at its start replaced by `shift.to` (see {@link canReindent}). */
export function reindentLine(line: string, shift: IndentShift): string {
  if (shift.from === shift.to || line.trim() === "" || !line.startsWith(shift.from)) return line;
  return shift.to + line.slice(shift.from.length);
}
