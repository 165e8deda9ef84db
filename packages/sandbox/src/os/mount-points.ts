import { type BigIntStats, type FSWatcher, lstatSync, watch } from "node:fs";
import path from "node:path";
import type { ProtectedPath } from "./protection.js";

/**
 * The paths a sandbox that lives on (a session's) mounts over, as they were when it started, and
 * watchers that tell as soon as one changes on the host. Removing or replacing a mount point on the
 * host detaches the mount over it inside every sandbox (Linux since 3.18), so that a job could
 * write the path: the sandbox must stop then.
 */
export class MountPoints {
  /** What stood at each path (see {@link identityAt}), and whether it is a placeholder. */
  readonly #identities = new Map<string, { identity: string; placeholder: boolean }>();
  readonly #watchers: FSWatcher[] = [];

  /**
   * Note what stands at each of `protectedPaths` now (`missing` ones are placeholders), and call
   * `onChange` with the first that changes, from a watcher of its folder. A folder that cannot be
   * watched (past the watch limit, say) leaves the look to {@link changed}.
   */
  constructor(protectedPaths: readonly ProtectedPath[], onChange: (changed: string) => void) {
    const names = new Map<string, Set<string>>();
    for (const { path: target, state } of protectedPaths) {
      const placeholder = state === "missing";
      this.#identities.set(target, { identity: identityAt(target, placeholder), placeholder });
      const folder = path.dirname(target);
      names.set(folder, (names.get(folder) ?? new Set()).add(path.basename(target)));
    }
    for (const [folder, inside] of names) {
      try {
        const watcher = watch(folder, { persistent: false }, (_event, name) => {
          if (typeof name === "string" && !inside.has(name)) return;
          const changed = this.changed();
          if (changed !== undefined) onChange(changed);
        });
        // A failed watcher leaves the look to the next command, as one never set does.
        watcher.on("error", () => {});
        this.#watchers.push(watcher);
      } catch {
        // Not watched: the next command looks.
      }
    }
  }

  /** The first path that is no longer what stood there, or `undefined`. */
  changed(): string | undefined {
    for (const [target, { identity, placeholder }] of this.#identities) {
      if (identityAt(target, placeholder) !== identity) return target;
    }
    return undefined;
  }

  /** Stop watching. */
  close(): void {
    for (const watcher of this.#watchers) watcher.close();
    this.#watchers.length = 0;
  }
}

/**
 * Who is at `target` now: device, inode, kind and birth time (an inode number can be used again
 * at once), and with `withChangeTime` its change time too (for a placeholder or a protected path,
 * which nothing changes but the host, since the sandbox mounts over it); or `missing`.
 */
export function identityAt(target: string, withChangeTime: boolean): string {
  let info: BigIntStats | undefined;
  try {
    info = lstatSync(target, { throwIfNoEntry: false, bigint: true });
  } catch {
    return "missing";
  }
  if (info === undefined) return "missing";
  const kind = info.isDirectory() ? "folder" : info.isSymbolicLink() ? "link" : "other";
  const changed = withChangeTime ? `:${info.ctimeNs}` : "";
  return `${info.dev}:${info.ino}:${kind}:${info.birthtimeNs}${changed}`;
}
