import { LineIndex, splitLinesKeepingEnds, stripLineEnding } from "./line-numbers.js";

/** How the closest region differs from the text that was looked for. */
type RegionDifference =
  /** Equal once `\r\n` is read as `\n`: only the line endings differ. */
  | "line-endings"
  /** Equal once all whitespace is removed: only spaces, tabs or line breaks differ. */
  | "whitespace"
  /** Alike line by line, but with other differences. */
  | "similar";

/** The region of a text most like a piece that does not occur in it exactly. */
export interface ClosestRegion {
  /** 1-based first line of the region. */
  startLine: number;
  /** 1-based last line of the region (inclusive). */
  endLine: number;
  /** The region's lines as stored, terminators kept. */
  lines: string[];
  difference: RegionDifference;
  /** Mean line similarity, 0 to 1 (1 for line-ending and whitespace differences). */
  similarity: number;
  /** For `"similar"`: the first line of the region that differs from its counterpart. */
  firstDifference?: { line: number; inText: string; inNeedle: string };
}

/** Options of {@link findClosestRegion}. */
export interface FindClosestRegionOptions {
  /**
   * The most line-to-line comparisons of the fuzzy search. Files too large to compare every
   * window are compared only at the windows that share the most words with the needle.
   * @default 50_000
   */
  maxComparisons?: number;
}

/**
 * Find where `needle` nearly occurs in `text`, for an error message that shows the model what the
 * file really holds there. Tries, in order: a match up to line endings, a match up to whitespace,
 * and the window of lines most similar line by line. The cost is O(text length) plus at most
 * `maxComparisons` line comparisons of at most 160 characters each. `undefined` when the text is
 * empty or no window shares anything with the needle.
 */
export function findClosestRegion(
  text: string,
  needle: string,
  { maxComparisons = 50_000 }: FindClosestRegionOptions = {},
): ClosestRegion | undefined {
  if (text === "" || needle === "") return undefined;
  const textLines = splitLinesKeepingEnds(text);
  const region = (start: number, end: number) => ({
    startLine: start,
    endLine: end,
    lines: textLines.slice(start - 1, end),
  });

  const textLf = text.replaceAll("\r\n", "\n");
  const needleLf = needle.replaceAll("\r\n", "\n");
  if (textLf !== text || needleLf !== needle) {
    const found = textLf.indexOf(needleLf);
    if (found !== -1) {
      // Turning \r\n into \n keeps every line's number, so lines found in textLf are text's lines.
      const index = new LineIndex(textLf);
      return {
        ...region(index.lineAt(found), index.lineAt(found + needleLf.length - 1)),
        difference: "line-endings",
        similarity: 1,
      };
    }
  }

  const squeezedNeedle = needle.replace(/\s+/g, "");
  if (squeezedNeedle !== "") {
    const found = text.replace(/\s+/g, "").indexOf(squeezedNeedle);
    if (found !== -1) {
      const index = new LineIndex(text);
      return {
        ...region(
          index.lineAt(unsqueezedOffset(text, found)),
          index.lineAt(unsqueezedOffset(text, found + squeezedNeedle.length - 1)),
        ),
        difference: "whitespace",
        similarity: 1,
      };
    }
  }

  const needleLines = splitLinesKeepingEnds(needle).map(stripLineEnding);
  const best = mostSimilarWindow(text, textLines, needleLines, maxComparisons);
  if (best === undefined) return undefined;
  const result: ClosestRegion = {
    ...region(best.start + 1, best.start + best.size),
    difference: "similar",
    similarity: best.similarity,
  };
  for (let offset = 0; offset < best.size; offset += 1) {
    const inText = stripLineEnding(textLines[best.start + offset] ?? "");
    const inNeedle = needleLines[offset] ?? "";
    if (inText !== inNeedle) {
      result.firstDifference = { line: best.start + offset + 1, inText, inNeedle };
      break;
    }
  }
  return result;
}

/** The offset in `text` of the character at `squeezedOffset` once all whitespace is removed. */
function unsqueezedOffset(text: string, squeezedOffset: number): number {
  const whitespace = /\s+/g;
  let removed = 0;
  for (let run = whitespace.exec(text); run !== null; run = whitespace.exec(text)) {
    // The run sits before the character sought when it starts at or before that character.
    if (run.index > squeezedOffset + removed) break;
    removed += run[0].length;
  }
  return squeezedOffset + removed;
}

interface Window {
  start: number;
  size: number;
  similarity: number;
}

/** The window of `textLines` (as long as the needle) whose lines are most like the needle's. */
function mostSimilarWindow(
  text: string,
  textLines: readonly string[],
  needleLines: readonly string[],
  maxComparisons: number,
): Window | undefined {
  const size = Math.min(needleLines.length, textLines.length);
  if (size === 0) return undefined;
  const lastStart = textLines.length - size;
  let starts: number[];
  if ((lastStart + 1) * size <= maxComparisons) {
    starts = Array.from({ length: lastStart + 1 }, (_, start) => start);
  } else {
    starts = startsSharingWords(text, textLines.length, needleLines, size, maxComparisons / size);
  }
  const normalizedNeedle = needleLines.map(normalizeLine);
  const normalizedText = new Map<number, string>();
  const normalizedAt = (line: number) => {
    let normalized = normalizedText.get(line);
    if (normalized === undefined) {
      normalized = normalizeLine(textLines[line] ?? "");
      normalizedText.set(line, normalized);
    }
    return normalized;
  };
  let best: Window | undefined;
  for (const start of starts) {
    let total = 0;
    for (let offset = 0; offset < size; offset += 1) {
      total += lineSimilarity(normalizedAt(start + offset), normalizedNeedle[offset] ?? "");
    }
    const similarity = total / needleLines.length;
    if (best === undefined || similarity > best.similarity) best = { start, size, similarity };
  }
  return best !== undefined && best.similarity > 0 ? best : undefined;
}

/**
 * The window starts whose lines hold the most distinct words of the needle, at most `count` of
 * them: the candidates for a full comparison in a file too large to compare everywhere. Each of
 * the needle's (at most 64 longest) words is found with `indexOf`, so the cost is a few native
 * scans of the text plus one binary search per occurrence.
 */
function startsSharingWords(
  text: string,
  lineCount: number,
  needleLines: readonly string[],
  size: number,
  count: number,
): number[] {
  const words = [...new Set(needleLines.flatMap((line) => line.match(WORD) ?? []))]
    .sort((left, right) => right.length - left.length)
    .slice(0, 64);
  const lineIndex = new LineIndex(text);
  const weights = new Uint32Array(lineCount);
  const lastWord = new Int32Array(lineCount).fill(-1);
  words.forEach((word, wordNumber) => {
    for (let at = text.indexOf(word); at !== -1; at = text.indexOf(word, at + word.length)) {
      if (isWordCharacter(text, at - 1) || isWordCharacter(text, at + word.length)) continue;
      const line = lineIndex.lineAt(at) - 1;
      // Count each word once per line, however often the line repeats it.
      if (lastWord[line] !== wordNumber) {
        lastWord[line] = wordNumber;
        weights[line] = (weights[line] ?? 0) + 1;
      }
    }
  });
  const scored: Array<{ start: number; score: number }> = [];
  let sum = 0;
  for (let line = 0; line < lineCount; line += 1) {
    sum += weights[line] ?? 0;
    if (line >= size) sum -= weights[line - size] ?? 0;
    if (line >= size - 1 && sum > 0) scored.push({ start: line - size + 1, score: sum });
  }
  scored.sort((left, right) => right.score - left.score || left.start - right.start);
  return scored.slice(0, Math.max(1, Math.floor(count))).map(({ start }) => start);
}

function isWordCharacter(text: string, index: number): boolean {
  const character = text[index];
  return character !== undefined && WORD_CHARACTER.test(character);
}

const WORD_CHARACTER = /[\p{L}\p{N}_]/u;
const WORD = /[\p{L}\p{N}_]{3,}/gu;

/** A line with its indentation and runs of whitespace made irrelevant, cut to 160 characters. */
function normalizeLine(line: string): string {
  return line.trim().replace(/\s+/g, " ").slice(0, 160);
}

/** Dice coefficient over character bigrams: 1 for equal lines, 0 for nothing in common. */
function lineSimilarity(left: string, right: string): number {
  if (left === right) return 1;
  if (left.length < 2 || right.length < 2) return 0;
  const bigrams = new Map<string, number>();
  for (let index = 0; index < left.length - 1; index += 1) {
    const bigram = left.slice(index, index + 2);
    bigrams.set(bigram, (bigrams.get(bigram) ?? 0) + 1);
  }
  let shared = 0;
  for (let index = 0; index < right.length - 1; index += 1) {
    const bigram = right.slice(index, index + 2);
    const remaining = bigrams.get(bigram) ?? 0;
    if (remaining > 0) {
      shared += 1;
      bigrams.set(bigram, remaining - 1);
    }
  }
  return (2 * shared) / (left.length - 1 + right.length - 1);
}
