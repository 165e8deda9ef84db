import { realpathSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { isInside } from "../paths.js";
import {
  defaultCredentialHomes,
  type HiddenPath,
  hiddenReads,
  type ReadPolicy,
} from "../policy/hidden-reads.js";
import { pathState, realpathOr } from "../policy/path-state.js";
import {
  entriesNamed,
  inheritedEnvironment,
  PROTECTED_WORKSPACE_ENTRIES,
} from "../policy/protected-entries.js";
import {
  type ProtectedPath,
  type WorkspaceProtection,
  workspaceProtection,
} from "../policy/protection.js";
import { type ReadView, readView } from "../policy/read-view.js";
import {
  completeScan,
  createWorkspaceWalker,
  type WorkspaceScan,
  type WorkspaceWalker,
} from "./folder-walk.js";
import { hostSockets } from "./host-sockets.js";

/** What the bubblewrap probe found about `/usr/bin/bwrap`. */
export interface BubblewrapFacts {
  /** The trusted absolute path of the launcher. */
  path: string;
  /** Whether `--disable-userns` works (bubblewrap 0.8 and later). */
  disableUserNamespaces: boolean;
  /**
   * Whether `--perms` applies to `--tmpfs` (bubblewrap 0.5 and later); emptied folders of the read
   * view are made mode 555 rather than remounted read-only. Absent means it does.
   */
  tmpfsPermissions?: boolean;
}

/**
 * Everything about the host that shapes a confined invocation, gathered for each command so that
 * {@link wrapCommand} can stay a pure function of it.
 */
export interface HostFacts {
  /** Real path of the workspace root. */
  root: string;
  /**
   * Paths to keep read-only, shallowest first within each writable folder (the workspace, then
   * each of `writableFolders`): gitdirs, nested `.git`, protected entries.
   */
  protectedPaths: ProtectedPath[];
  /**
   * Real paths of the folders besides the workspace that commands may write (`allowWrites`,
   * checked by `writableFolders`): shown read-only in `read-only` mode, and in `workspace-write`
   * bound writable, the workspace's rules holding inside each.
   * @default none
   */
  writableFolders?: string[];
  /** Paths commands cannot read: credential stores, the shadow files, `hideReads` (see `hiddenReads`). */
  hiddenPaths: HiddenPath[];
  /**
   * What commands see of the host beyond the system's folders and the workspace (`readView`):
   * the emptied top-level entries and homes, and what is shown again inside them.
   * @default nothing emptied (the whole host, less `hiddenPaths`)
   */
  readView?: ReadView;
  /**
   * Unix sockets a confined command could otherwise connect to: those inside the workspace, every
   * socket bound in the host's network namespace (`/proc/net/unix`) and the host's agent and
   * container sockets, outside the trees that are hidden anyway (`/tmp`, `/run`, `/dev`). A
   * read-only mount does not stop `connect()`, so each is masked.
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
  /**
   * How much of the workspace tree was searched for nested repositories and sockets, how many of
   * its folders had to be read this time (the others were unchanged since the last call, by their
   * stamps), and how: `stamps` (an `lstat` of every folder) or `walk` (all read).
   */
  walk: Pick<WorkspaceScan, "directories" | "truncated" | "listed" | "tracking">;
  /**
   * The git directory entries the walk found (`WorkspaceScan.gitEntries`), of the workspace and
   * of each of `writableFolders`: what a command that makes a repository is compared with once it
   * ends (`makeNewRepositoriesInert`).
   */
  gitEntries: string[];
  /**
   * The folders the walk could not list (`WorkspaceScan.unreadable`), of the workspace and of each
   * of `writableFolders`: protected whole, so a folder a command closes is one not among them.
   */
  unreadableFolders: string[];
  /** Present when the bubblewrap probe succeeded. */
  bubblewrap?: BubblewrapFacts;
}

/** Options of {@link createHostFactsCache}. */
export interface HostFactsCacheOptions {
  /**
   * How long after a change a folder is read again regardless of its stamp (see
   * {@link createWorkspaceWalker}); tests lower it to exercise the stamps.
   * @default 2_000
   */
  recentChangeMs?: number;
  /**
   * How many workspaces' walks are kept; the least recently used is dropped past it.
   * @default 16
   */
  maxWorkspaces?: number;
}

/**
 * What {@link gatherHostFacts} keeps between calls: the walk of each workspace (its folders'
 * listings, kept current by their `lstat` stamps), and nothing else. The policy (hidden and protected paths, git
 * configuration, sockets) is computed afresh from the host's files on every call: nothing derived
 * from the walk outlives the call that derived it.
 */
export interface HostFactsCache {
  /** The walker of `root` for this folder limit (made on first use). */
  walker(root: string, maxDirectories: number): WorkspaceWalker;
  /** Forget every walk (a later call walks again). */
  close(): void;
}

/** A cache to pass to every {@link gatherHostFacts} call of one wrapper. */
export function createHostFactsCache({
  recentChangeMs,
  maxWorkspaces = 16,
}: HostFactsCacheOptions = {}): HostFactsCache {
  const walkers = new Map<string, WorkspaceWalker>();
  return {
    walker(root, maxDirectories) {
      const key = `${maxDirectories}:${root}`;
      let walker = walkers.get(key);
      if (walker === undefined) {
        walker = createWorkspaceWalker({
          root,
          maxDirectories,
          ...(recentChangeMs === undefined ? {} : { recentChangeMs }),
        });
        if (walkers.size >= maxWorkspaces) {
          const [oldest] = walkers;
          if (oldest !== undefined) {
            walkers.delete(oldest[0]);
            oldest[1].close();
          }
        }
      } else {
        walkers.delete(key);
      }
      walkers.set(key, walker);
      return walker;
    },
    close() {
      for (const walker of walkers.values()) walker.close();
      walkers.clear();
    },
  };
}

let sharedCache: HostFactsCache | undefined;

/**
 * The process's {@link HostFactsCache}, for the wrappers and writers made without one, so that
 * they share a walk.
 */
export function sharedHostFactsCache(): HostFactsCache {
  sharedCache ??= createHostFactsCache();
  return sharedCache;
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
   * stops (`walk.truncated`), and with `protect` the call is refused (`TOO_LARGE`), since deeper
   * nested repositories could not be protected.
   * @default 200_000
   */
  maxDirectories?: number;
  /**
   * Entries at the top of the workspace to protect.
   * @default PROTECTED_WORKSPACE_ENTRIES
   */
  protectedEntries?: readonly string[];
  /**
   * Commands may write git's objects, refs, index and logs (`allowGitWrites`): see
   * `WorkspaceProtectionOptions.gitWrites`.
   * @default false
   */
  gitWrites?: boolean;
  /**
   * The host's environment, for the inherited variables and the agent sockets it names.
   * @default process.env
   */
  hostEnvironment?: Readonly<Record<string, string | undefined>>;
  /** The bubblewrap probe's findings, copied into the facts. */
  bubblewrap?: BubblewrapFacts;
  /**
   * What commands may not read besides the defaults, and what they may read back (`hiddenReads`).
   * @default the defaults: credential stores and the shadow files
   */
  readPolicy?: ReadPolicy;
  /**
   * What earlier calls found, revalidated rather than searched again.
   * @default a fresh cache: the whole workspace is walked
   */
  cache?: HostFactsCache;
  /**
   * The real paths of the folders besides the workspace that commands may write, checked against
   * this call's hidden paths (`writableFoldersOf`); with `protect` each is walked and protected
   * as the workspace is. @default none
   */
  writableFolders?: (hiddenPaths: readonly HiddenPath[]) => string[];
}

/** Options of {@link currentProtection}. */
export type CurrentProtectionOptions = Pick<
  GatherHostFactsOptions,
  "root" | "maxDirectories" | "protectedEntries" | "hostEnvironment" | "cache" | "gitWrites"
> & {
  /**
   * Real paths of the other folders commands write (the workspace, `allowWrites`): their
   * repositories' machinery inside `root` is protected too (`otherGitEntries`).
   * @default none
   */
  otherRoots?: readonly string[];
};

/**
 * What is protected in the workspace `root` now ({@link workspaceProtection}), from the same walk
 * and options that {@link gatherHostFacts} gives the OS sandbox: what every host-side writer asks
 * before it writes.
 */
export async function currentProtection({
  root,
  maxDirectories = 200_000,
  protectedEntries = PROTECTED_WORKSPACE_ENTRIES,
  hostEnvironment = process.env,
  cache = createHostFactsCache(),
  gitWrites = false,
  otherRoots = [],
}: CurrentProtectionOptions): Promise<WorkspaceProtection> {
  const rootReal = realpathSync.native(root);
  const walk = await completeScan(cache.walker(rootReal, maxDirectories), maxDirectories);
  const others: string[] = [];
  for (const other of otherRoots) {
    const scan = await completeScan(cache.walker(other, maxDirectories), maxDirectories);
    others.push(...gitEntriesOf(other, scan));
  }
  return protectionOf(rootReal, walk, protectedEntries, hostEnvironment, gitWrites, others);
}

/** The git directory entries of the folder `top` after `walk`: its `.git`, and the walk's. */
function gitEntriesOf(top: string, walk: WorkspaceScan): string[] {
  return [path.join(top, ".git"), ...walk.gitEntries];
}

/** What is protected in the workspace `root` after `walk` (the one computation of both callers). */
function protectionOf(
  root: string,
  walk: WorkspaceScan,
  protectedEntries: readonly string[],
  hostEnvironment: Readonly<Record<string, string | undefined>>,
  gitWrites: boolean,
  otherGitEntries: readonly string[],
): WorkspaceProtection {
  return workspaceProtection({
    root,
    nestedGitEntries: walk.gitEntries,
    unreadableFolders: walk.unreadable,
    protectedEntries: entriesNamed(protectedEntries),
    hostEnvironment,
    gitWrites,
    otherGitEntries,
  });
}

/**
 * Look at the host: the workspace's real path, its gitdir (also through a `.git` file), every
 * nested `.git` in the tree, the hooks folder and included files its git config names, the
 * protected entries present or missing, and the sockets to mask.
 *
 * The tree walk never follows symbolic links, does not descend into `.git` folders, and stops
 * after `maxDirectories` folders, breadth first, so that a huge `node_modules` costs a bounded
 * time. With a `cache`, later calls read again only the folders whose `lstat` stamps changed (see
 * {@link createWorkspaceWalker} for why that misses no change).
 * Everything else is read afresh on every call, synchronously: a few dozen small system calls
 * cost less than the thread-pool round trips of their asynchronous forms.
 */
export async function gatherHostFacts({
  root,
  protect = true,
  maxDirectories = 200_000,
  protectedEntries = PROTECTED_WORKSPACE_ENTRIES,
  hostEnvironment = process.env,
  bubblewrap,
  readPolicy = {},
  cache = createHostFactsCache(),
  gitWrites = false,
  writableFolders,
}: GatherHostFactsOptions): Promise<HostFacts> {
  const rootReal = realpathSync.native(root);
  const walker = cache.walker(rootReal, maxDirectories);
  const walk = protect ? await completeScan(walker, maxDirectories) : await walker.scan();
  const hiddenPaths = hiddenReads({ root: rootReal, hostEnvironment, ...readPolicy });
  const folders = writableFolders?.(hiddenPaths) ?? [];
  // The presets (`@secrets`) hide in the writable folders what they hide in the workspace.
  const presets = (readPolicy.hideReads ?? []).filter((each) => each.startsWith("@"));
  for (const top of presets.length === 0 ? [] : folders) {
    const scope = "workspace";
    hiddenPaths.push(
      ...hiddenReads({ root: top, hostEnvironment, ...readPolicy, hideReads: presets, scope }),
    );
  }
  const view = readView({
    root: rootReal,
    homes: readPolicy.credentialHomes ?? defaultCredentialHomes(hostEnvironment),
    searchPath: hostEnvironment.PATH,
    allowReads: [...(readPolicy.allowReads ?? []), ...folders],
  });
  // Each writable folder is walked (and protected) as the workspace is.
  const walks: [string, WorkspaceScan][] = [[rootReal, walk]];
  for (const folder of folders) {
    const each = cache.walker(folder, maxDirectories);
    walks.push([folder, protect ? await completeScan(each, maxDirectories) : await each.scan()]);
  }
  return {
    root: rootReal,
    hiddenPaths,
    readView: view,
    protectedPaths: protect
      ? walks.flatMap(
          ([top, each]) =>
            protectionOf(
              top,
              each,
              protectedEntries,
              hostEnvironment,
              gitWrites,
              walks.flatMap(([other, scan]) => (other === top ? [] : gitEntriesOf(other, scan))),
            ).paths,
        )
      : [],
    writableFolders: folders,
    hostSockets: hostSockets({
      root: rootReal,
      workspaceSockets: walks.flatMap(([, each]) => each.sockets),
      hiddenPaths,
      hostEnvironment,
    }),
    runPathsToKeep: runPathsToKeep(),
    varRunIsDirectory: pathState("/var/run") === "directory",
    inheritedEnvironment: inheritedEnvironment({ hostEnvironment }),
    temporaryDirectory: realpathOr(os.tmpdir()),
    gitEntries: walks.flatMap(([, each]) => each.gitEntries),
    unreadableFolders: walks.flatMap(([, each]) => each.unreadable),
    walk: {
      directories: walk.directories,
      truncated: walk.truncated,
      listed: walk.listed,
      tracking: walk.tracking,
    },
    ...(bubblewrap === undefined ? {} : { bubblewrap }),
  };
}

function runPathsToKeep(): string[] {
  const resolver = realpathOr("/etc/resolv.conf");
  return isInside("/run", resolver) ? [resolver] : [];
}
