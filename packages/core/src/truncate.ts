/** The cap: no single tool result may put more than this many characters before a model. */
export const MODEL_OUTPUT_LIMIT = 50_000;

/** Options of {@link capText}. */
export interface CapTextOptions {
  /**
   * The most characters the result may have, marker included.
   * @default 50_000
   */
  maxChars?: number;
}

/** What {@link capText} returns. */
export interface CappedText {
  text: string;
  /** How many characters of the input were cut out; 0 when it fit. */
  cutChars: number;
}

/**
 * Cap `text` at `maxChars` characters, keeping its head and its tail (errors tend to be at the end
 * of a command's output, context at the start) with a marker in between that says how much was cut.
 */
export function capText(
  text: string,
  { maxChars = MODEL_OUTPUT_LIMIT }: CapTextOptions = {},
): CappedText {
  if (text.length <= maxChars) return { text, cutChars: 0 };
  // The marker's length depends on the number it holds; reserve enough for any realistic count.
  const reserve = 120;
  const keep = Math.max(0, maxChars - reserve);
  const headLength = avoidSplitSurrogate(text, Math.ceil(keep / 2));
  const tailStart = avoidSplitSurrogate(text, text.length - (keep - headLength));
  const cutChars = tailStart - headLength;
  const marker = `\n\n[... ${cutChars.toLocaleString("en-US")} characters cut from the middle of this output ...]\n\n`;
  const capped = `${text.slice(0, headLength)}${marker}${text.slice(tailStart)}`;
  return { text: capped.slice(0, maxChars), cutChars };
}

/** Move an index off the low half of a surrogate pair so a cut never splits a character. */
function avoidSplitSurrogate(text: string, index: number): number {
  const code = text.charCodeAt(index);
  return code >= 0xdc00 && code <= 0xdfff ? index + 1 : index;
}
