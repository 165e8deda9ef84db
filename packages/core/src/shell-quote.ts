/**
 * Quote one argument for a POSIX shell: wrap in single quotes, and spell each single quote as
 * `'\''`. The result is always one word, whatever the input holds (spaces, `$`, backticks, `;`).
 * NUL bytes cannot be passed to a command at all, so they are refused.
 */
export function shellQuote(argument: string): string {
  if (argument.includes("\0")) {
    throw new TypeError("a shell argument cannot contain a NUL byte");
  }
  if (/^[A-Za-z0-9_/.,:=@%+-]+$/.test(argument)) return argument;
  return `'${argument.replaceAll("'", `'\\''`)}'`;
}

/** Quote each argument and join them with spaces. */
export function shellJoin(argv: readonly string[]): string {
  return argv.map(shellQuote).join(" ");
}
