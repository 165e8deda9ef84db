// Escape sequences terminals understand: CSI (colours, cursor moves), OSC (titles, hyperlinks,
// bounded so an unterminated one cannot make the scan quadratic), charset selection (`ESC ( B`,
// which terminfo's sgr0 emits) and the remaining two-byte escapes.
const ANSI_PATTERN =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching escape bytes is the point.
  /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]{0,4096}(?:\u0007|\u001b\\)|\u001b[()*+][0-9A-Za-z]|\u001b[@-Z\\-_]/g;

/** Strips terminal escape sequences so colourised output parses like plain output. */
export function stripAnsi(text: string): string {
  return text.includes("\u001b") ? text.replace(ANSI_PATTERN, "") : text;
}
