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

/** The short escapes JSON has for some control characters. */
const SHORT_ESCAPES: Readonly<Record<string, string>> = {
  "\b": "\\b",
  "\t": "\\t",
  "\n": "\\n",
  "\f": "\\f",
  "\r": "\\r",
};

/**
 * Text from a dataset, a repository or a model, made safe to print on a terminal: every control
 * character (C0, DEL and C1) is written as a visible escape (`\r`, `\u001b` for ESC, `\u009b`), so
 * the text cannot move the cursor, clear the line, set the window title (OSC 0/2) or write the
 * clipboard (OSC 52). With `multiline`, line feeds, tabs and CRLF line ends are kept, for text
 * meant to be read as lines; a lone carriage return is still shown. The escapes are JSON's, so
 * JSON text stays valid JSON with the same value.
 */
export function showControlCharacters(
  text: string,
  { multiline = false }: { /** @default false */ multiline?: boolean } = {},
): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds.
  return text.replace(/\r\n|[\u0000-\u001f\u007f-\u009f]/g, (control) => {
    if (multiline && (control === "\n" || control === "\t" || control === "\r\n")) return control;
    if (control === "\r\n") return "\\r\\n";
    return SHORT_ESCAPES[control] ?? `\\u${control.charCodeAt(0).toString(16).padStart(4, "0")}`;
  });
}
