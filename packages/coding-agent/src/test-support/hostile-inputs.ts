import { execFileSync } from "node:child_process";
import { readdir } from "node:fs/promises";
import path from "node:path";

/**
 * Inputs that would run a command, or become an option, if a tool let them reach the shell or the
 * program unquoted. Each one that runs tries to create a file named `pwned`.
 */
export const HOSTILE_INPUTS: readonly string[] = [
  "$(touch pwned)",
  "`touch pwned`",
  "x; touch pwned",
  "x && touch pwned #",
  "x | touch pwned",
  "-rf",
  "--output=pwned",
  "'; touch pwned; '",
  '"; touch pwned; "',
  "x\ntouch pwned",
  "$'\\x41'; touch pwned",
];

/** Every path below `root` whose name is `pwned` (empty when no hostile input ran). */
export async function findPwned(root: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true });
  return entries
    .filter((entry) => path.basename(entry) === "pwned")
    .map((entry) => path.join(root, entry));
}

/** Run git in `cwd` as a fixed test identity, returning its stdout. */
export function git(cwd: string, ...args: string[]): string {
  return execFileSync(
    "git",
    ["-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main", ...args],
    { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] },
  );
}
