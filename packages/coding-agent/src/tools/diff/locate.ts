/**
 * How loosely lines were compared to find a piece of text, from strict to loose. Each level
 * includes the ones before it.
 *
 * - `exact`: byte for byte (a `\r` before `\n` included).
 * - `line-endings`: a `\r` at the end of a line is ignored (an LF diff against a CRLF file).
 * - `trailing-whitespace`: spaces and tabs at the end of a line are ignored.
 * - `unicode-punctuation`: curly quotes, dashes, ellipses and non-breaking or wide spaces read as
 *   their ASCII counterparts (text that went through a word processor or a model's memory).
 * - `indentation`: every run of whitespace reads as one space and leading whitespace is ignored.
 */
export type Tolerance =
  | "exact"
  | "line-endings"
  | "trailing-whitespace"
  | "unicode-punctuation"
  | "indentation";

/** The tolerances in the order they are tried. */
export const TOLERANCES: readonly Tolerance[] = [
  "exact",
  "line-endings",
  "trailing-whitespace",
  "unicode-punctuation",
  "indentation",
];

/** Words for a tolerance in a message: "if <phrase>". */
export const TOLERANCE_PHRASES: Record<Tolerance, string> = {
  exact: "as written",
  "line-endings": "if line endings (\\r\\n against \\n) are ignored",
  "trailing-whitespace": "if whitespace at the ends of lines is ignored",
  "unicode-punctuation":
    "if Unicode punctuation lookalikes (curly quotes, dashes, non-breaking spaces) read as ASCII",
  indentation: "if indentation and other whitespace are ignored",
};

const LOOKALIKES: ReadonlyArray<[RegExp, string]> = [
  [/[\u2018\u2019\u201A\u201B\u2032\u2035]/g, "'"],
  [/[\u201C\u201D\u201E\u201F\u2033\u2036]/g, '"'],
  [/[\u2010\u2011\u2012\u2013\u2014\u2015\u2212]/g, "-"],
  [/\u2026/g, "..."],
  [/[\u00A0\u2000-\u200A\u202F\u205F\u3000]/g, " "],
  [/[\u200B\u2060\uFEFF]/g, ""],
];

/** `line` (without `\n`) as it compares under `tolerance`. */
export function normalizeLine(line: string, tolerance: Tolerance): string {
  switch (tolerance) {
    case "exact":
      return line;
    case "line-endings":
      return line.endsWith("\r") ? line.slice(0, -1) : line;
    case "trailing-whitespace":
      return line.trimEnd();
    case "unicode-punctuation":
      return replaceLookalikes(line).trimEnd();
    case "indentation":
      return replaceLookalikes(line).replace(/\s+/g, " ").trim();
  }
}

function replaceLookalikes(line: string): string {
  let result = line;
  // Most lines are ASCII; the regular expressions only run on the others.
  if (!/[^\u0020-\u007E\t\r]/.test(result)) return result;
  for (const [pattern, replacement] of LOOKALIKES) result = result.replace(pattern, replacement);
  return result;
}

/**
 * The lines of a text (each without `\n`, a `\r` before it kept), with a lazily built index per
 * tolerance from normalized line to the positions holding it, so a piece is found in time
 * proportional to the occurrences of its rarest line.
 */
export class LineTable {
  readonly lines: readonly string[];
  readonly #keys = new Map<Tolerance, string[]>();
  readonly #positions = new Map<Tolerance, Map<string, number[]>>();

  constructor(lines: readonly string[]) {
    this.lines = lines;
  }

  /** Every line normalized under `tolerance`. */
  keys(tolerance: Tolerance): readonly string[] {
    let keys = this.#keys.get(tolerance);
    if (keys === undefined) {
      keys = this.lines.map((line) => normalizeLine(line, tolerance));
      this.#keys.set(tolerance, keys);
    }
    return keys;
  }

  #positionsOf(tolerance: Tolerance): Map<string, number[]> {
    let positions = this.#positions.get(tolerance);
    if (positions === undefined) {
      positions = new Map();
      this.keys(tolerance).forEach((key, index) => {
        const list = positions?.get(key);
        if (list === undefined) positions?.set(key, [index]);
        else list.push(index);
      });
      this.#positions.set(tolerance, positions);
    }
    return positions;
  }

  /** 0-based start lines where `needle`'s lines all equal the text's under `tolerance`. */
  findAll(needle: readonly string[], tolerance: Tolerance): number[] {
    if (needle.length === 0) return [];
    const keys = this.keys(tolerance);
    const wanted = needle.map((line) => normalizeLine(line, tolerance));
    const positions = this.#positionsOf(tolerance);
    let anchor = 0;
    let anchorPositions: readonly number[] | undefined;
    for (let index = 0; index < wanted.length; index += 1) {
      const found = positions.get(wanted[index] ?? "") ?? [];
      if (anchorPositions === undefined || found.length < anchorPositions.length) {
        anchor = index;
        anchorPositions = found;
        if (found.length === 0) return [];
      }
    }
    const starts: number[] = [];
    for (const position of anchorPositions ?? []) {
      const start = position - anchor;
      if (start < 0 || start + wanted.length > keys.length) continue;
      let equal = true;
      for (let index = 0; index < wanted.length && equal; index += 1) {
        equal = keys[start + index] === wanted[index];
      }
      if (equal) starts.push(start);
    }
    return starts;
  }
}

/** Where a piece of text was found. */
export type Location =
  | { status: "unique"; start: number; tolerance: Tolerance; chosenByHint: boolean }
  | { status: "ambiguous"; starts: number[]; tolerance: Tolerance }
  | { status: "none" };

/** Options of {@link locateLines}. */
export interface LocateLinesOptions {
  /**
   * The 0-based line the piece is expected to start at, used only to choose among several
   * matches (see {@link chooseByHint}).
   */
  hint?: number | undefined;
  /** Candidates this returns false for are left out (a region another hunk already changes). */
  accept?: (start: number) => boolean;
  /**
   * The tolerances to try, in order.
   * @default TOLERANCES
   */
  tolerances?: readonly Tolerance[];
}

/**
 * Find `needle` (whole lines) in `table`, trying each tolerance in turn and stopping at the first
 * that finds it. Several matches at that tolerance are `ambiguous` unless the hint singles one out;
 * a looser tolerance is never tried then, since it can only find more.
 */
export function locateLines(
  table: LineTable,
  needle: readonly string[],
  { hint, accept, tolerances = TOLERANCES }: LocateLinesOptions = {},
): Location {
  for (const tolerance of tolerances) {
    let starts = table.findAll(needle, tolerance);
    if (accept !== undefined) starts = starts.filter(accept);
    if (starts.length === 0) continue;
    const [only] = starts;
    if (starts.length === 1 && only !== undefined) {
      return { status: "unique", start: only, tolerance, chosenByHint: false };
    }
    const chosen = chooseByHint(starts, hint);
    if (chosen !== undefined) {
      return { status: "unique", start: chosen, tolerance, chosenByHint: true };
    }
    return { status: "ambiguous", starts, tolerance };
  }
  return { status: "none" };
}

/** How far from the hinted line the one match it picks may lie. */
const HINT_WINDOW = 3;

/**
 * The match a line-number hint singles out among several: the one exactly at the hinted line,
 * else the only one within {@link HINT_WINDOW} lines of it. `undefined` otherwise, and then the
 * caller must not guess.
 */
export function chooseByHint(
  starts: readonly number[],
  hint: number | undefined,
): number | undefined {
  if (hint === undefined) return undefined;
  if (starts.includes(hint)) return hint;
  const near = starts.filter((start) => Math.abs(start - hint) <= HINT_WINDOW);
  return near.length === 1 ? near[0] : undefined;
}
