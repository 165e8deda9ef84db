import type { HunkLine } from "./parse.js";

/** Turns a line's leading whitespace from the diff's indentation style into the file's. */
export type IndentStyle = (line: string) => string;

const LEADING = /^[ \t]*/;
const WIDTHS = [2, 4, 8];

const identity: IndentStyle = (line) => line;

/** Leading whitespace `columns` wide written as tabs of `width` columns, the rest in spaces. */
const asTabs = (columns: number, width: number) =>
  "\t".repeat(Math.floor(columns / width)) + " ".repeat(columns % width);

/** The width of leading whitespace in columns, a tab counting `tab` columns. */
const columnsOf = (indent: string, tab: number) =>
  [...indent].reduce((sum, character) => sum + (character === "\t" ? tab : 1), 0);

function restyle(convert: (indent: string) => string): IndentStyle {
  return (line) => {
    const indent = LEADING.exec(line)?.[0] ?? "";
    return convert(indent) + line.slice(indent.length);
  };
}

/** The other styles a diff's indentation may be in: tabs for spaces, spaces for tabs, widths. */
const CONVERSIONS: IndentStyle[] = [
  ...WIDTHS.map((width) => restyle((indent) => indent.replaceAll("\t", " ".repeat(width)))),
  ...WIDTHS.map((width) => restyle((indent) => asTabs(columnsOf(indent, width), width))),
  ...WIDTHS.flatMap((from) =>
    WIDTHS.filter((to) => to !== from).map((to) =>
      restyle((indent) => {
        if (indent.includes("\t")) return indent;
        return " ".repeat(Math.floor(indent.length / from) * to + (indent.length % from));
      }),
    ),
  ),
];

/**
 * The style that turns the indentation of the hunk's old lines (`lines`, its old side sitting at
 * 0-based line `start` of `fileLines`) into the file's. Another style than the diff's own is
 * taken only when it turns every old line's indentation into exactly the file's, and either the
 * old lines stand at two depths or more (a uniform shift cannot explain them too) or the file and
 * the diff indent with different characters. Otherwise, and whenever the old lines' indentation
 * is the file's already, the diff's own style, which leaves lines as they are.
 */
export function indentStyle(
  fileLines: readonly string[],
  lines: readonly HunkLine[],
  start: number,
): IndentStyle {
  const pairs: Array<[string, string]> = [];
  let fileLine = start;
  for (const line of lines) {
    if (line.kind === "add") continue;
    const file = fileLines[fileLine] ?? "";
    fileLine += 1;
    if (line.text.trim() !== "" && file.trim() !== "") pairs.push([line.text, file]);
  }
  const indent = (text: string) => LEADING.exec(text)?.[0] ?? "";
  const depths = new Set(pairs.map(([diff]) => indent(diff)));
  const characters = (side: 0 | 1) => new Set(pairs.flatMap((pair) => [...indent(pair[side])]));
  const diffCharacters = characters(0);
  const fileCharacters = characters(1);
  const differentCharacters = [...diffCharacters].some(
    (character) => !fileCharacters.has(character),
  );
  const same = pairs.every(([diff, file]) => indent(diff) === indent(file));
  if (same || (depths.size < 2 && !differentCharacters)) return identity;
  const perfect = CONVERSIONS.find((convert) =>
    pairs.every(([diff, file]) => indent(convert(diff)) === indent(file)),
  );
  return perfect ?? identity;
}

/**
 * The spaces a tab at the start of an added line stands for when the diff shows it is indented
 * with tabs where the file is indented with spaces only: some context or removed line of the
 * diff starts with a tab, and the file's level is {@link spaceIndentWidth} wide.
 */
export function diffTabWidth(
  fileLines: readonly string[],
  hunks: ReadonlyArray<readonly HunkLine[]>,
): number | undefined {
  const tabbed = hunks.some((lines) =>
    lines.some((line) => line.kind !== "add" && line.text.startsWith("\t")),
  );
  return tabbed ? spaceIndentWidth(fileLines) : undefined;
}

/**
 * The width of one indentation level of a file indented with spaces only, from the most common
 * step between the indentation of consecutive lines (steps of one, as in ` * ` comment lines,
 * aside); `undefined` when a line is indented with a tab or no step stands out.
 */
function spaceIndentWidth(fileLines: readonly string[]): number | undefined {
  const steps = new Map<number, number>();
  let previous = 0;
  for (const line of fileLines) {
    if (line.trim() === "") continue;
    const indent = LEADING.exec(line)?.[0] ?? "";
    if (indent.includes("\t")) return undefined;
    const step = Math.abs(indent.length - previous);
    if (step >= 2) steps.set(step, (steps.get(step) ?? 0) + 1);
    previous = indent.length;
  }
  const [best] = [...steps.entries()].sort((left, right) => right[1] - left[1]);
  return best?.[0];
}

/**
 * The added lines of `lines` with leading tabs turned into the spaces of a file indented with
 * `width` spaces a level; `undefined` when no added line starts with a tab or an old line of the
 * hunk does (then the tabs are the file's, or the hunk's own change).
 */
export function tabsAsFileSpaces(lines: readonly HunkLine[], width: number): string[] | undefined {
  const startsWithTab = (line: HunkLine) => line.text.startsWith("\t");
  if (lines.some((line) => line.kind !== "add" && startsWithTab(line))) return undefined;
  if (!lines.some((line) => line.kind === "add" && startsWithTab(line))) return undefined;
  const convert = restyle((indent) => indent.replaceAll("\t", " ".repeat(width)));
  return lines.filter((line) => line.kind === "add").map((line) => convert(line.text));
}
