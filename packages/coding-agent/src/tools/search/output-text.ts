/** Where the run of ASCII digits at `text[start, end)` ends. */
export function afterDigits(text: string, start: number, end: number): number {
  let cursor = start;
  while (cursor < end) {
    const code = text.charCodeAt(cursor);
    if (code < 0x30 || code > 0x39) break;
    cursor += 1;
  }
  return cursor;
}

/** How many `\n` `text` holds: `head -n` counts these, inside file names too. */
export function countNewlines(text: string): number {
  let count = 0;
  for (let index = text.indexOf("\n"); index !== -1; index = text.indexOf("\n", index + 1)) {
    count += 1;
  }
  return count;
}

/** The reported path of a printed one: `./a/b` under the searched folder, from the workspace root. */
export function reportedPath(prefix: string, printed: string): string {
  return prefix + (printed.startsWith("./") ? printed.slice(2) : printed);
}
