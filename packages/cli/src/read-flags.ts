import os from "node:os";
import path from "node:path";

/**
 * The options of every command that runs commands: paths hidden from them, or given back, and
 * their kept caches turned off.
 */
export const READ_OPTIONS = {
  "hide-read": { type: "string", multiple: true },
  "allow-read": { type: "string", multiple: true },
  "no-caches": { type: "boolean" },
  "allow-git-writes": { type: "boolean" },
  "allow-write": { type: "string", multiple: true },
} as const;

/** The help lines of {@link READ_OPTIONS}, with the options' descriptions starting at `column`. */
export function readOptionsHelp(column: number): string {
  // A flag too long for its column gets its own line, as the commands' other long flags do.
  const line = (flag: string, text: string) =>
    flag.length > column - 4
      ? `  ${flag}\n${" ".repeat(column)}${text}`
      : `  ${flag.padEnd(column - 2)}${text}`;
  return [
    line("--hide-read PATH", "hide PATH (a file, a folder or a glob: '**/.env') from sandboxed"),
    `${" ".repeat(column)}commands and the file tools; @secrets: the workspace's .env and`,
    `${" ".repeat(column)}.env.* files but *.example, *.sample, .env.template; repeatable`,
    line("--allow-read PATH", "let sandboxed commands read PATH, out of their view by default (a"),
    `${" ".repeat(column)}file of a home, ~/.npmrc, say), read-only; repeatable. docs/sandbox.md`,
    `${" ".repeat(column)}says what commands see`,
    line("--no-caches", "no kept caches for sandboxed commands (Go, cargo, pip, uv, npm: by"),
    `${" ".repeat(column)}default a private folder per workspace under ~/.cache/pleach/caches,`,
    `${" ".repeat(column)}at most 4 GiB); their tools then cache in the private /tmp`,
    line("--allow-git-writes", "let sandboxed commands commit, branch, stash and rebase: git's"),
    `${" ".repeat(column)}objects, refs, index and logs writable; its config, hooks and links`,
    `${" ".repeat(column)}to other git directories stay protected`,
    line("--allow-write DIR", "let sandboxed commands write DIR too, a folder outside the"),
    `${" ".repeat(column)}workspace (a build output), under the workspace's rules; not a`,
    `${" ".repeat(column)}home, its dot-entries or a system folder; repeatable`,
  ].join("\n");
}

/** What commands may not read besides the defaults, what they may read back, and their caches. */
export interface ReadFlags {
  hideReads: string[];
  allowReads: string[];
  /** `false` with `--no-caches`; absent: the default caches. */
  caches?: false;
  /** `true` with `--allow-git-writes`. */
  allowGitWrites?: true;
  /** `--allow-write DIR`, absolute; absent without one. */
  allowWrites?: string[];
}

/**
 * `--hide-read` and `--allow-read` as absolute paths (`--no-caches` as `caches: false`,
 * `--allow-git-writes` as `allowGitWrites: true`, `--allow-write` as `allowWrites`): relative to the current folder, with a
 * leading `~` for the home of the user running pleach, as a shell would expand it. A glob
 * (`**\/.env`) is made absolute the same way; a preset (`--hide-read @secrets`) is passed on as it
 * is.
 */
export function parseReadFlags(
  values: {
    "hide-read"?: string[] | undefined;
    "allow-read"?: string[] | undefined;
    "no-caches"?: boolean | undefined;
    "allow-git-writes"?: boolean | undefined;
    "allow-write"?: string[] | undefined;
  },
  io: { cwd: string },
): ReadFlags {
  const resolve = (each: string) =>
    each === "~" || each.startsWith("~/")
      ? path.join(os.homedir(), each.slice(1))
      : path.resolve(io.cwd, each);
  return {
    hideReads: (values["hide-read"] ?? []).map((each) =>
      each.startsWith("@") ? each : resolve(each),
    ),
    allowReads: (values["allow-read"] ?? []).map(resolve),
    ...(values["no-caches"] === true ? { caches: false as const } : {}),
    ...(values["allow-git-writes"] === true ? { allowGitWrites: true as const } : {}),
    ...(values["allow-write"] === undefined
      ? {}
      : { allowWrites: values["allow-write"].map(resolve) }),
  };
}
