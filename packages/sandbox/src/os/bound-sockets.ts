import { readFileSync } from "node:fs";

/**
 * The absolute paths of the Unix sockets bound in this host's network namespace, from the kernel's
 * own table (`/proc/net/unix`; its last column is the path a socket was bound to, or `@name` for
 * an abstract one, or nothing). Abstract sockets belong to the network namespace the sandbox
 * leaves, and a socket bound by a relative path cannot be placed, so both are left out. A path is
 * as the binder gave it: the caller resolves it and checks it is still a socket. A path that is
 * not UTF-8, or holds a line break, does not survive the table's text and is missed. Empty when
 * the table cannot be read (not Linux, `/proc` not mounted).
 */
export function boundUnixSockets(table = "/proc/net/unix"): string[] {
  let text: string;
  try {
    text = readFileSync(table, "utf8");
  } catch {
    return [];
  }
  const paths = new Set<string>();
  for (const line of text.split("\n").slice(1)) {
    // Num RefCount Protocol Flags Type St Inode Path: the path starts after the seventh field.
    const match = /^\s*\S+:\s+\S+\s+\S+\s+\S+\s+\S+\s+\S+\s+\S+ (\/.*)$/.exec(line);
    if (match?.[1] !== undefined) paths.add(match[1]);
  }
  return [...paths];
}
