/** Whether `text` holds a C0 control character (newline, tab, NUL, escape, ...) or DEL. */
export function hasControlCharacter(text: string): boolean {
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}

/**
 * A file path as a model reads it inside a line of text: JSON-quoted when it holds a control
 * character, a quote, a backslash or one of `alsoQuote`, so that a newline in a file name cannot
 * pass for the start of another result.
 */
export function displayPath(
  filePath: string,
  { alsoQuote = "" }: { alsoQuote?: string } = {},
): string {
  const needsQuotes =
    hasControlCharacter(filePath) ||
    filePath.includes('"') ||
    filePath.includes("\\") ||
    [...alsoQuote].some((character) => filePath.includes(character));
  return needsQuotes ? JSON.stringify(filePath) : filePath;
}
