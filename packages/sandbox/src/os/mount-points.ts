import { type BigIntStats, type FSWatcher, lstatSync, watch } from "node:fs";
import path from "node:path";
import type { ProtectedPath } from "../policy/protection.js";

/**
 * The protected paths of a sandbox that lives on (a session's), as they were when it started, and
 * watchers that tell as soon as one changes on the host. Removing or replacing a mount point on the
 * host detaches the mount over it inside every sandbox (Linux since 3.18), so that a job could
 * write the path: the sandbox must stop then. Something appearing at a missing one (made by a job,
 * or by the host) is told apart: the session decides (see `SessionSandboxSpec.onAppeared`).
 */
export class MountPoints {
  /** What stood at each path that exists (see {@link identityAt}). */
  readonly #identities = new Map<string, string>();
  /** The paths that were missing and still are, as far as it knows. */
  readonly #missing = new Set<string>();
  readonly #watchers: FSWatcher[] = [];

  /**
   * Note what stands at each of `protectedPaths` now, and call `onChange` with the first that
   * changes (`changed`: a mount point; `appeared`: something at a missing one, told once), from a
   * watcher of its folder. A folder that cannot be watched (missing, past the watch limit) leaves
   * the look to {@link changed} and the session's next look.
   */
  constructor(
    protectedPaths: readonly ProtectedPath[],
    onChange: (changed: string, how: "changed" | "appeared") => void,
  ) {
    const names = new Map<string, Set<string>>();
    for (const { path: target, state } of protectedPaths) {
      if (state === "missing") this.#missing.add(target);
      else this.#identities.set(target, identityAt(target, false));
      const folder = path.dirname(target);
      names.set(folder, (names.get(folder) ?? new Set()).add(path.basename(target)));
    }
    for (const [folder, inside] of names) {
      try {
        const watcher = watch(folder, { persistent: false }, (_event, name) => {
          if (typeof name === "string" && !inside.has(name)) return;
          const changed = this.changed();
          if (changed !== undefined) return onChange(changed, "changed");
          const appeared = this.#appeared();
          if (appeared !== undefined) onChange(appeared, "appeared");
        });
        // A failed watcher leaves the look to the next command, as one never set does.
        watcher.on("error", () => {});
        this.#watchers.push(watcher);
      } catch {
        // Not watched: the next command looks.
      }
    }
  }

  /** The first path that exists and is no longer what stood there, or `undefined`. */
  changed(): string | undefined {
    for (const [target, identity] of this.#identities) {
      if (identityAt(target, false) !== identity) return target;
    }
    return undefined;
  }

  /** The first missing path where something stands now (then no longer counted missing). */
  #appeared(): string | undefined {
    for (const target of this.#missing) {
      if (lstatSync(target, { throwIfNoEntry: false }) === undefined) continue;
      this.#missing.delete(target);
      return target;
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
 * at once), and with `withChangeTime` its change time too (for a protected path,
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
