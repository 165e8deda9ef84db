import { readFileSync } from "node:fs";

/** A user of the user database: its uid and its home folder, as written there. */
export interface DatabaseUser {
  uid: number;
  home: string;
}

const read = new Map<string, readonly DatabaseUser[]>();

/**
 * The users of `file` (`/etc/passwd` form: `name:password:uid:gid:comment:home:shell`) whose home
 * is an absolute path other than `/`, read once per process. Empty when there is no such file
 * (macOS keeps its users elsewhere).
 */
export function databaseUsers(file = "/etc/passwd"): readonly DatabaseUser[] {
  let users = read.get(file);
  if (users === undefined) {
    let text = "";
    try {
      text = readFileSync(file, "utf8");
    } catch {
      // No user database: the callers' other sources (HOME, os.homedir()) still count.
    }
    users = text.split("\n").flatMap((line) => {
      const [, , uid, , , home] = line.split(":");
      return home?.startsWith("/") === true && home !== "/" && /^[0-9]+$/.test(uid ?? "")
        ? [{ uid: Number(uid), home }]
        : [];
    });
    read.set(file, users);
  }
  return users;
}
