import path from "node:path";
import { type ExecResult, NETWORK_OFF_NOTE_START } from "@pleach/core/sandbox";
import { isInside } from "../paths.js";
import { type HiddenPath, hiddenPathOf } from "../policy/hidden-reads.js";
import { realpathOr } from "../policy/path-state.js";
import { GIT_RUN_ENTRIES } from "../policy/protected-entries.js";
import type { ProtectedPath } from "../policy/protection.js";
import { type ReadView, visibleInView } from "../policy/read-view.js";

/**
 * Failures explained: after a confined command, the lines that tie what it printed to one of the
 * sandbox's rules and say the way out (`ExecResult.sandboxNotes`). A line is added only when the
 * failure is tied to the rule: a path the policy covers, on the same output line as the error
 * message that rule produces (or, for the network, a name lookup that failed while the policy had
 * it off). Nothing is guessed from a message alone. One note is a likely cause rather than a tie:
 * a command killed at its time limit while the network was off, which is how a tool that retries
 * its requests (npm, pip, git) ends there, printing nothing before it is killed.
 */

/** What a confined command ran under, as far as its failures can be explained. */
export interface FailurePolicy {
  /**
   * What confined the command: bubblewrap's read-only mounts fail a write with "Read-only file
   * system" (EROFS), Seatbelt's denials with "Operation not permitted" (EPERM).
   */
  backend: "bubblewrap" | "seatbelt";
  mode: "read-only" | "workspace-write";
  /** Whether the command could reach the network. */
  network: boolean;
  /** Real path of the workspace root. */
  root: string;
  /** Real path of the folder the command started in: relative paths it prints are resolved here. */
  cwd: string;
  /** The protected paths (`HostFacts.protectedPaths`): those that exist are read-only for it. */
  protectedPaths: readonly ProtectedPath[];
  /** The paths it could not read (`HostFacts.hiddenPaths`). */
  hiddenPaths: readonly HiddenPath[];
  /** What it saw of the host (`HostFacts.readView`): a path it did not find outside it is named. */
  readView?: ReadView;
  /** Whether it could write git's objects, refs and index (`allowGitWrites`). @default false */
  gitWrites?: boolean;
}

/** Options of {@link failureNotes}. */
export interface FailureNotesOptions {
  result: Pick<ExecResult, "exitCode" | "stdout" | "stderr"> &
    Partial<Pick<ExecResult, "timedOut">>;
  policy: FailurePolicy;
  /**
   * The command as it was asked for: a git command that failed writing its repository without a
   * word (`git stash` prints nothing) still gets the note on git writes.
   */
  command?: string;
  /**
   * Lines from the network proxy about the requests of this command it refused (from its own log
   * of the command, so they are tied by construction), added as they are, first.
   * @default []
   */
  proxyNotes?: readonly string[];
}

/** The most lines a result gets: one per rule and path, the first ones met. */
const MAX_NOTES = 5;
/** The most output lines looked at for an error message. */
const MAX_LINES = 200;

/** The error messages of the errors a sandbox rule produces, as C tools, Node and Python print them. */
const MESSAGES = {
  EROFS: /read-only file system/i,
  EACCES: /permission denied/i,
  EPERM: /operation not permitted/i,
  EBUSY: /device or resource busy/i,
  EISDIR: /is a directory/i,
  ENOENT: /no such file or directory/i,
} as const;
type Errno = keyof typeof MESSAGES;
const ANY_MESSAGE = new RegExp(
  Object.values(MESSAGES)
    .map((each) => each.source)
    .join("|"),
  "i",
);

/** What the resolver, git, curl, ssh, pip and Node print when no name can be looked up or reached. */
const OFFLINE =
  /Could not resolve host|Temporary failure in name resolution|unable to look up \S+ \(port|Name or service not known|getaddrinfo (?:EAI_AGAIN|ENOTFOUND)|Network is unreachable/i;

/** A quoted path: 'x' (coreutils, Node, Python), "x", ‘x’ (coreutils in a UTF-8 locale), `x'. */
const QUOTED = /'([^'\n]+)'|"([^"\n]+)"|‘([^’\n]+)’|`([^'`\n]+)'/g;

/**
 * The sandbox's notes on a command's result under `policy`: each line names the rule a failure
 * met and the way out. Empty when nothing in the output is tied to a rule.
 */
export function failureNotes({
  result,
  policy,
  command,
  proxyNotes = [],
}: FailureNotesOptions): string[] {
  const notes = new Map<string, string>();
  for (const line of proxyNotes) notes.set(line, line);
  const output = `${result.stdout}\n${result.stderr}`;
  for (const line of errorLines(output)) {
    if (notes.size >= MAX_NOTES) break;
    const errnos = new Set(
      (Object.keys(MESSAGES) as Errno[]).filter((errno) => MESSAGES[errno].test(line)),
    );
    for (const printed of printedPaths(line)) {
      const note = noteFor(printed, errnos, policy);
      if (note !== undefined && !notes.has(note.key)) notes.set(note.key, note.line);
    }
  }
  if (result.exitCode !== 0 && !policy.network) {
    if (OFFLINE.test(output)) notes.set("network", NETWORK_OFF_NOTE);
    else if (result.timedOut === true) notes.set("network", NETWORK_OFF_TIMEOUT_NOTE);
  }
  const gitRefused = [...notes.keys()].some((key) => key.startsWith("protected:") && isGitKey(key));
  if (
    result.exitCode !== 0 &&
    policy.mode === "workspace-write" &&
    policy.gitWrites !== true &&
    !gitRefused &&
    command !== undefined &&
    GIT_WRITING.test(command) &&
    policy.protectedPaths.some(
      ({ path: target, state }) => state === "directory" && path.basename(target) === ".git",
    )
  ) {
    notes.set("git-writes", `sandbox: ${GIT_WRITES_WAY_OUT}`);
  }
  return [...notes.values()].slice(0, MAX_NOTES);
}

/**
 * The first {@link MAX_LINES} lines of `output` holding an error message, each once: found by one
 * pass of a regular expression over the whole output, so many megabytes cost one scan.
 */
function* errorLines(output: string): Generator<string> {
  let looked = 0;
  let lineEnd = -1;
  for (const match of output.matchAll(new RegExp(ANY_MESSAGE.source, "gi"))) {
    if (match.index < lineEnd) continue;
    if (looked >= MAX_LINES) return;
    looked += 1;
    const lineStart = output.lastIndexOf("\n", match.index) + 1;
    lineEnd = output.indexOf("\n", match.index);
    if (lineEnd === -1) lineEnd = output.length;
    yield output.slice(lineStart, lineEnd);
  }
}

/**
 * The paths an error line names: its quoted strings when it has any, else the last word before
 * the message (`bash: x: ...`, `sh: 1: cannot create x: ...`, git's `... file .git/config: ...`).
 */
function printedPaths(line: string): string[] {
  const quoted = [...line.matchAll(QUOTED)]
    .map((match) => match.slice(1).find((group) => group !== undefined) ?? "")
    .filter((each) => each !== "");
  if (quoted.length > 0) return quoted;
  const at = line.search(ANY_MESSAGE);
  const before = line
    .slice(0, at)
    .replace(/[:,\s]+$/, "")
    .split(": ")
    .pop();
  const word = before?.split(/\s+/).pop() ?? "";
  return word === "" ? [] : [word];
}

/** The note for one printed path and the error messages on its line, keyed by rule and path. */
function noteFor(
  printed: string,
  errnos: ReadonlySet<Errno>,
  policy: FailurePolicy,
): { key: string; line: string } | undefined {
  if (printed.includes("\0")) return undefined;
  const absolute = path.resolve(policy.cwd, printed);
  const reached = [absolute, realpathOr(absolute)];
  const shown = isInside(policy.root, absolute)
    ? path.relative(policy.root, absolute) || "."
    : absolute;

  const hidden = hiddenPathOf(policy.hiddenPaths, reached);
  if (hidden !== undefined && (errnos.has("EACCES") || errnos.has("EPERM"))) {
    return { key: `hidden:${hidden.path}`, line: hiddenNote(shown, hidden) };
  }
  const view = policy.readView;
  const real = reached[1] ?? absolute;
  const emptied =
    view === undefined || visibleInView(view, policy.root, real)
      ? undefined
      : view.emptied.find((each) => isInside(each.path, real));
  if (emptied !== undefined) {
    // Not found there: the path may well be there on the host.
    if (errnos.has("ENOENT")) {
      return { key: `view:${emptied.path}`, line: outsideViewNote(shown, emptied.path) };
    }
    // A tool making its cache or settings in an emptied home (mode 555, or read-only).
    if (errnos.has("EACCES") || errnos.has("EROFS")) {
      return { key: `view-write:${emptied.path}`, line: emptiedWriteNote(shown, emptied.path) };
    }
  }
  const refusedWrite = errnos.has(policy.backend === "seatbelt" ? "EPERM" : "EROFS");
  if (policy.mode === "workspace-write") {
    // Under bubblewrap a protected path that exists is a mount point (EBUSY to remove or rename);
    // nothing stands at a missing one, which a command may make (it is moved aside at the end).
    const kept = policy.protectedPaths.find(
      (each) =>
        isInside(each.path, absolute) &&
        (policy.backend !== "bubblewrap" || each.state !== "missing"),
    );
    if (
      kept?.rule !== undefined &&
      (refusedWrite || (policy.backend === "bubblewrap" && errnos.has("EBUSY")))
    ) {
      return {
        key: `protected:${kept.path}`,
        line: protectedNote(shown, kept.rule, policy.gitWrites),
      };
    }
  }
  if (!refusedWrite) return undefined;
  if (isInside(policy.root, absolute)) {
    return policy.mode === "read-only"
      ? { key: "read-only", line: readOnlyNote(shown) }
      : undefined;
  }
  if (absolute === "/tmp" || isInside("/tmp", absolute)) return undefined;
  return { key: "outside", line: outsideNote(shown, policy.mode) };
}

function hiddenNote(shown: string, hidden: HiddenPath): string {
  return `sandbox: reading ${shown} was refused: ${hidden.rule}. Commands in read-only and workspace-write cannot read it; if the task needs it, ask the user to give it back with --allow-read ${hidden.path} (allowReads).`;
}

function outsideViewNote(shown: string, emptied: string): string {
  return `sandbox: ${shown} is outside what commands see of the host: ${emptied} is empty for them (commands see the system's folders, the workspace and the toolchains on PATH; every home and other folder is empty). If the task needs to read it, ask the user to add it with --allow-read ${shown} (allowReads); to write there, with --allow-write and its folder (allowWrites).`;
}

function emptiedWriteNote(shown: string, emptied: string): string {
  return `sandbox: writing ${shown} was refused: ${emptied} is an empty read-only folder for commands (every home and other folder outside the system's, the workspace and the toolchains on PATH). Point the tool's cache or settings at /tmp or the workspace (GOCACHE=/tmp/go-build, npm_config_cache=/tmp/npm, XDG_CACHE_HOME=/tmp/cache, ...); if the task must write a folder there, ask the user to start pleach with --allow-write and that folder (allowWrites).`;
}

function protectedNote(shown: string, rule: string, gitWrites: boolean | undefined): string {
  const git = !gitWrites && gitWritesWouldHelp(shown) ? ` ${GIT_WRITES_WAY_OUT}` : "";
  return `sandbox: writing ${shown} was refused: ${rule}. pleach keeps the repository's git machinery and files that make the host run code read-only for commands, and the file tools refuse them too; ask the user to make this change.${git}`;
}

/** What lets git commands write their repository, for a note on one that could not. */
const GIT_WRITES_WAY_OUT =
  "git commands cannot write the repository (commit, branch, stash, rebase) in this sandbox: start pleach with --allow-git-writes (allowGitWrites: true) to let them; git's config and hooks stay protected.";

/** A command that runs a git subcommand that writes the repository. */
const GIT_WRITING =
  /(^|[\s;&|(])git(\s+-[Cc]\s+\S+)*\s+(stash|commit|checkout|switch|branch|rebase|merge|cherry-pick|revert|reset|tag|am|pull|fetch|add|rm|mv|restore|init|gc|worktree)\b/;

/** Whether `shown` lies in a `.git` but not in what git writes leave protected. */
function gitWritesWouldHelp(shown: string): boolean {
  const segments = shown.split(path.sep);
  const at = segments.lastIndexOf(".git");
  if (at === -1) return false;
  const inside = segments.slice(at + 1);
  return !inside.some((_, index) => GIT_RUN_ENTRIES.includes(inside.slice(0, index + 1).join("/")));
}

/** Whether a note's key names a path in a `.git`. */
function isGitKey(key: string): boolean {
  return key.split(path.sep).includes(".git");
}

function readOnlyNote(shown: string): string {
  return `sandbox: writing ${shown} was refused: this sandbox runs in read-only mode, where commands write only their private /tmp. Writing the workspace needs workspace-write mode (--mode workspace-write where pleach is started, mode: "workspace-write" in the options); ask the user to switch.`;
}

function outsideNote(shown: string, mode: FailurePolicy["mode"]): string {
  const writable =
    mode === "workspace-write" ? "the workspace and a private /tmp are" : "a private /tmp is";
  return `sandbox: writing ${shown} was refused: in ${mode} mode only ${writable} writable for commands (/tmp is emptied after each command). Write inside the workspace instead; if the task must write a folder outside it (a build output), ask the user to start pleach with --allow-write DIR (allowWrites).`;
}

/** Where the network is turned on for commands, and what to do meanwhile. */
const NETWORK_WAY_OUT =
  "It is turned on where pleach is started: `--allow-domain HOST` (repeatable) on its command line (call, mcp, run, eval) for just the hosts the task needs, or `--network` for all; `network: { allowDomains: [...] }` or `network: true` in the options of `createLocalSandbox` / `createLocalSandboxProvider`. Ask the user to allow what the task needs, or work from what is already on disk (a local repository clones from its path or file:// URL).";

/** The way out of a failed name lookup while the network is off. */
const NETWORK_OFF_NOTE = `${NETWORK_OFF_NOTE_START}, so names cannot be looked up and hosts cannot be reached. ${NETWORK_WAY_OUT}`;

/** The likely cause of a command killed at its time limit while the network is off. */
const NETWORK_OFF_TIMEOUT_NOTE = `${NETWORK_OFF_NOTE_START}: a command that needs it (an install, a download, a clone, a name lookup) retries until it is killed at its time limit, so if this one waits on the network, a larger timeout will not help. ${NETWORK_WAY_OUT}`;
