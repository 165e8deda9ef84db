import { type Dirent, lstatSync } from "node:fs";
import { readdir, readFile, realpath } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { inheritedEnvironment, PROTECTED_WORKSPACE_ENTRIES } from "./protected-entries.js";

/** What is found today at a path that must stay read-only. */
export type ProtectedPathState = "directory" | "file" | "symbolic-link" | "other" | "missing";

/** A path a confined command may not change, with what is there now. */
export interface ProtectedPath {
  /** Absolute path inside the workspace. */
  path: string;
  state: ProtectedPathState;
}

/** What the bubblewrap probe found about `/usr/bin/bwrap`. */
export interface BubblewrapFacts {
  /** The trusted absolute path of the launcher. */
  path: string;
  /** Whether `--disable-userns` works (bubblewrap 0.8 and later). */
  disableUserNamespaces: boolean;
}

/**
 * Everything about the host that shapes a confined invocation, gathered once per command so that
 * {@link wrapCommand} can stay a pure function of it.
 */
export interface HostFacts {
  /** Real path of the workspace root. */
  root: string;
  /** Paths to keep read-only, shallowest first: gitdirs, nested `.git`, protected entries. */
  protectedPaths: ProtectedPath[];
  /**
   * Unix sockets a confined command could otherwise connect to: those inside the workspace and
   * the host's agent and container sockets outside the trees that are hidden anyway (`/tmp`,
   * `/run`, `/dev`). A read-only mount does not stop `connect()`, so each is masked.
   */
  hostSockets: string[];
  /** Paths under `/run` that stay visible although `/run` is hidden (the resolver configuration). */
  runPathsToKeep: string[];
  /** Whether `/var/run` is a folder of its own rather than a link to `/run`. */
  varRunIsDirectory: boolean;
  /** The host variables a confined command inherits (already filtered). */
  inheritedEnvironment: Record<string, string>;
  /** Real path of the host's temporary folder (macOS lets commands write there). */
  temporaryDirectory: string;
  /** How much of the workspace tree was searched for nested repositories and sockets. */
  walk: { directories: number; truncated: boolean };
  /** Present when the bubblewrap probe succeeded. */
  bubblewrap?: BubblewrapFacts;
}

/** Options of {@link gatherHostFacts}. */
export interface GatherHostFactsOptions {
  /** The workspace root (resolved to its real path here). */
  root: string;
  /**
   * Whether to look for every path that must stay read-only; a `read-only` sandbox does not need
   * them because nothing is writable.
   * @default true
   */
  protect?: boolean;
  /**
   * The most folders of the workspace searched for nested `.git` and sockets. Past it the search
   * stops (`walk.truncated`), and deeper nested repositories are not protected.
   * @default 20_000
   */
  maxDirectories?: number;
  /**
   * Entries at the top of the workspace to protect.
   * @default PROTECTED_WORKSPACE_ENTRIES
   */
  protectedEntries?: readonly string[];
  /**
   * The host's environment, for the inherited variables and the agent sockets it names.
   * @default process.env
   */
  hostEnvironment?: Readonly<Record<string, string | undefined>>;
  /** The bubblewrap probe's findings, copied into the facts. */
  bubblewrap?: BubblewrapFacts;
}

/** Folders under the home directory where agents and container engines keep their sockets. */
const HOME_SOCKET_FOLDERS = [".ssh", ".gnupg", ".docker", ".docker/run", ".docker/desktop"];
/** Trees the bubblewrap sandbox replaces with empty ones, so their sockets are out of reach. */
const HIDDEN_TREES = ["/tmp", "/run", "/var/run", "/dev"];

/**
 * Look at the host: the workspace's real path, its gitdir (also through a `.git` file), every
 * nested `.git` in the tree, the hooks folder and included files its git config names, the
 * protected entries present or missing, and the sockets to mask.
 *
 * The tree walk never follows symbolic links, does not descend into `.git` folders, and stops
 * after `maxDirectories` folders, breadth first, so that a huge `node_modules` costs a bounded time.
 */
export async function gatherHostFacts({
  root,
  protect = true,
  maxDirectories = 20_000,
  protectedEntries = PROTECTED_WORKSPACE_ENTRIES,
  hostEnvironment = process.env,
  bubblewrap,
}: GatherHostFactsOptions): Promise<HostFacts> {
  const rootReal = await realpath(root);
  const [walk, outsideSockets, keptRunPaths, temporaryDirectory] = await Promise.all([
    walkWorkspace({ root: rootReal, maxDirectories }),
    hostSocketsOutside({ root: rootReal, hostEnvironment }),
    runPathsToKeep(),
    realpath(os.tmpdir()).catch(() => os.tmpdir()),
  ]);
  const protectedPaths: ProtectedPath[] = [];
  if (protect) {
    const candidates = new Set<string>();
    for (const entry of protectedEntries) candidates.add(path.join(rootReal, entry));
    for (const nested of walk.gitEntries) candidates.add(nested);
    const machinery = await Promise.all(
      [path.join(rootReal, ".git"), ...walk.gitEntries].map((gitEntry) =>
        gitMachinery({ gitEntry, root: rootReal, hostEnvironment }),
      ),
    );
    for (const extra of machinery.flat()) candidates.add(extra);
    const described = await Promise.all(
      [...candidates]
        .filter((candidate) => candidate !== rootReal && isInside(rootReal, candidate))
        .map(async (candidate): Promise<ProtectedPath> => {
          const state = pathState(candidate);
          // Creating a missing path's parents would leave them behind on the host; protecting
          // the shallowest missing folder blocks the same writes.
          const target = state === "missing" ? shallowestMissing(rootReal, candidate) : candidate;
          return { path: target, state };
        }),
    );
    protectedPaths.push(...described);
  }
  return {
    root: rootReal,
    protectedPaths: outermostOnly(protectedPaths),
    hostSockets: [...walk.sockets, ...outsideSockets].sort(),
    runPathsToKeep: keptRunPaths,
    varRunIsDirectory: pathState("/var/run") === "directory",
    inheritedEnvironment: inheritedEnvironment({ hostEnvironment }),
    temporaryDirectory,
    walk: { directories: walk.directories, truncated: walk.truncated },
    ...(bubblewrap === undefined ? {} : { bubblewrap }),
  };
}

interface WalkResult {
  gitEntries: string[];
  sockets: string[];
  directories: number;
  truncated: boolean;
}

async function walkWorkspace({
  root,
  maxDirectories,
}: {
  root: string;
  maxDirectories: number;
}): Promise<WalkResult> {
  const result: WalkResult = { gitEntries: [], sockets: [], directories: 0, truncated: false };
  let level = [root];
  while (level.length > 0) {
    if (result.directories + level.length > maxDirectories) {
      level = level.slice(0, Math.max(0, maxDirectories - result.directories));
      result.truncated = true;
    }
    result.directories += level.length;
    const listings = await Promise.all(
      level.map(async (directory) => ({
        directory,
        entries: await readdir(directory, { withFileTypes: true }).catch((): Dirent[] => []),
      })),
    );
    const next: string[] = [];
    for (const { directory, entries } of listings) {
      for (const entry of entries) {
        const full = path.join(directory, entry.name);
        if (entry.name === ".git") {
          if (directory !== root) result.gitEntries.push(full);
        } else if (entry.isDirectory()) {
          next.push(full);
        } else if (entry.isSocket()) {
          result.sockets.push(full);
        }
      }
    }
    if (result.truncated) break;
    level = next;
  }
  result.gitEntries.sort();
  return result;
}

/**
 * The paths inside the workspace that a repository's `.git` makes the host run or read as
 * configuration: the gitdir a `.git` file points to, its common dir, the hooks folder named by
 * `core.hooksPath`, and files pulled in by `include.path`.
 */
async function gitMachinery({
  gitEntry,
  root,
  hostEnvironment,
}: {
  gitEntry: string;
  root: string;
  hostEnvironment: Readonly<Record<string, string | undefined>>;
}): Promise<string[]> {
  const found: string[] = [];
  const state = pathState(gitEntry);
  let gitdir = gitEntry;
  if (state === "file") {
    const pointer = /^gitdir:\s*(.+?)\s*$/m.exec(await readFile(gitEntry, "utf8").catch(() => ""));
    if (pointer?.[1] === undefined) return found;
    gitdir = await realpathOr(path.resolve(path.dirname(gitEntry), pointer[1]));
    found.push(gitdir);
  } else if (state !== "directory") {
    return found;
  }
  const gitdirs = [gitdir];
  const common = (await readFile(path.join(gitdir, "commondir"), "utf8").catch(() => "")).trim();
  if (common !== "") {
    const commonDirectory = await realpathOr(path.resolve(gitdir, common));
    found.push(commonDirectory);
    gitdirs.push(commonDirectory);
  }
  const workTree = path.dirname(gitEntry);
  const home = hostEnvironment.HOME;
  for (const directory of gitdirs) {
    for (const name of ["config", "config.worktree"]) {
      const text = await readFile(path.join(directory, name), "utf8").catch(() => "");
      for (const { section, key, value } of gitConfigEntries(text)) {
        const expanded =
          value.startsWith("~/") && home !== undefined ? path.join(home, value.slice(2)) : value;
        if (section === "core" && key === "hookspath") {
          found.push(path.resolve(workTree, expanded));
        } else if (section.startsWith("include") && key === "path") {
          found.push(path.resolve(directory, expanded));
        }
      }
    }
  }
  return Promise.all(found.map((entry) => realpathOr(entry))).then((paths) =>
    paths.filter((entry) => isInside(root, entry)),
  );
}

/** A forgiving reader of git's config format: enough to find `core.hooksPath` and includes. */
function gitConfigEntries(text: string): { section: string; key: string; value: string }[] {
  const entries: { section: string; key: string; value: string }[] = [];
  let section = "";
  for (const rawLine of text.split("\n")) {
    const line = rawLine.trim();
    const header = /^\[\s*([A-Za-z0-9.-]+)/.exec(line);
    if (header?.[1] !== undefined) {
      section = header[1].toLowerCase();
      continue;
    }
    const pair = /^([A-Za-z][A-Za-z0-9-]*)\s*=\s*(.*)$/.exec(line);
    if (pair?.[1] === undefined || pair[2] === undefined) continue;
    const value = pair[2].replace(/\s[;#].*$/, "").replace(/^"(.*)"$/, "$1");
    entries.push({ section, key: pair[1].toLowerCase(), value });
  }
  return entries;
}

async function hostSocketsOutside({
  root,
  hostEnvironment,
}: {
  root: string;
  hostEnvironment: Readonly<Record<string, string | undefined>>;
}): Promise<string[]> {
  const candidates = new Set<string>();
  const named = [
    hostEnvironment.SSH_AUTH_SOCK,
    hostEnvironment.DOCKER_HOST?.replace(/^unix:\/\//, ""),
  ];
  for (const value of named) {
    if (value?.startsWith("/")) candidates.add(value);
  }
  const home = hostEnvironment.HOME;
  if (home?.startsWith("/")) {
    for (const folder of HOME_SOCKET_FOLDERS) {
      const directory = path.join(home, folder);
      const entries = await readdir(directory, { withFileTypes: true }).catch((): Dirent[] => []);
      for (const entry of entries) {
        if (entry.isSocket()) candidates.add(path.join(directory, entry.name));
      }
    }
  }
  const sockets: string[] = [];
  for (const candidate of candidates) {
    const real = await realpath(candidate).catch(() => undefined);
    if (real === undefined || pathState(real) !== "other") continue;
    if (isInside(root, real) || HIDDEN_TREES.some((tree) => isInside(tree, real))) continue;
    sockets.push(real);
  }
  return sockets;
}

async function runPathsToKeep(): Promise<string[]> {
  const resolver = await realpath("/etc/resolv.conf").catch(() => undefined);
  return resolver !== undefined && isInside("/run", resolver) ? [resolver] : [];
}

/**
 * Synchronous on purpose: a command needs a few dozen of these, and each asynchronous round trip
 * through the thread pool costs more than the system call it wraps.
 */
function pathState(target: string): ProtectedPathState {
  try {
    const info = lstatSync(target);
    if (info.isSymbolicLink()) return "symbolic-link";
    if (info.isDirectory()) return "directory";
    if (info.isFile()) return "file";
    return "other";
  } catch {
    return "missing";
  }
}

function shallowestMissing(root: string, target: string): string {
  const segments = path.relative(root, target).split(path.sep);
  let current = root;
  for (const segment of segments) {
    current = path.join(current, segment);
    if (pathState(current) === "missing") return current;
  }
  return target;
}

async function realpathOr(target: string): Promise<string> {
  return realpath(target).catch(() => target);
}

/** Drop paths inside another protected folder (a read-only bind covers them) and sort shallow first. */
function outermostOnly(paths: ProtectedPath[]): ProtectedPath[] {
  const sorted = [...paths].sort(
    (left, right) => depth(left.path) - depth(right.path) || left.path.localeCompare(right.path),
  );
  const kept: ProtectedPath[] = [];
  for (const candidate of sorted) {
    if (
      kept.some((outer) => outer.path === candidate.path || isInside(outer.path, candidate.path))
    ) {
      continue;
    }
    kept.push(candidate);
  }
  return kept;
}

function depth(target: string): number {
  return target.split(path.sep).length;
}

/** Whether `target` is `parent` itself or lies beneath it. */
export function isInside(parent: string, target: string): boolean {
  const relative = path.relative(parent, target);
  return (
    relative === "" ||
    (relative !== ".." && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative))
  );
}
