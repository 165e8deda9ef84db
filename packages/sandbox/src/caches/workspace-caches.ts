import path from "node:path";
import { formatBytes } from "@pleach/core";
import { isInside } from "../paths.js";
import { collectGoneWorkspaces, markCacheRoot } from "./cache-collection.js";
import { emptyFolder, folderBytes } from "./cache-pruning.js";
import { cacheEnvironment, workspaceCacheFolder } from "./caches.js";

/** What one confined command gets of its workspace's caches. */
export interface CacheTurn {
  /** The cache folder, bound writable into its sandbox; absent when it cannot be had safely. */
  folder?: string;
  /** The variables that point its tools there (`cacheEnvironment`); empty without a folder. */
  environment: Record<string, string>;
  /** Notes for its result: why there are no caches, or that they were emptied. */
  notes: string[];
  /** Call once its process group is gone: the cache may be measured (and emptied) then. */
  done(): void;
}

/** Options of {@link WorkspaceCaches}. */
export interface WorkspaceCachesOptions {
  /** The most bytes a workspace's cache folder holds before it is emptied. */
  maxBytes: number;
  /** Where `XDG_CACHE_HOME` and `HOME` are read. */
  hostEnvironment: Readonly<Record<string, string | undefined>>;
  /**
   * How long after a measure the cache is measured again, once a command ends.
   * @default 60_000
   */
  checkIntervalMs?: number;
}

/** What this process knows of one cache folder. */
interface CacheState {
  /** Commands of this process that run with it now. */
  holders: number;
  /** When it was last measured; absent: never in this process. */
  checkedAt?: number;
  checking?: Promise<void>;
  /** It was found over the bound while commands held it: emptied once none does. */
  over?: number;
  /** For the next command's result. */
  notes: string[];
}

/** Every cache folder this process used, by path: one measure a minute, whatever the wrappers. */
const states = new Map<string, CacheState>();
/** The folders of every workspace's caches this process looked for gone workspaces in. */
const collected = new Set<string>();
/** The problems already told, by workspace root: one note each, in the first result. */
const toldProblems = new Map<string, string>();

/**
 * The caches of confined commands, one private folder per workspace (`workspaceCacheFolder`),
 * checked at every command, and kept under a bound without a walk per command: measured at the
 * first command of a workspace in this process and then at most once per `checkIntervalMs`,
 * after a command ends and never before one, so that no result waits for it. A cache over the
 * bound is emptied once no command of this process uses it, and the next result says so.
 */
export class WorkspaceCaches {
  readonly #options: Required<WorkspaceCachesOptions>;

  constructor({ maxBytes, hostEnvironment, checkIntervalMs = 60_000 }: WorkspaceCachesOptions) {
    this.#options = { maxBytes, hostEnvironment, checkIntervalMs };
  }

  /**
   * The caches of one command in the workspace `root` (a real path), whose commands cannot read
   * `hiddenPaths`: a cache folder inside one of them stays hidden.
   */
  take(root: string, hiddenPaths: readonly { path: string }[] = []): CacheTurn {
    const located = workspaceCacheFolder({
      root,
      hostEnvironment: this.#options.hostEnvironment,
    });
    const inside = "folder" in located ? located.folder : undefined;
    const hidden =
      inside === undefined
        ? undefined
        : hiddenPaths.find(({ path: each }) => isInside(each, inside));
    const found =
      hidden === undefined ? located : { problem: `${hidden.path} is hidden from commands` };
    if (!("folder" in found)) {
      const told = toldProblems.get(root) === found.problem;
      toldProblems.set(root, found.problem);
      const note = `sandbox: commands get no kept caches here: ${found.problem}. Their tools write caches in the private /tmp, emptied after each command; fix the folder, or turn caches off (caches: false, --no-caches) to drop this note.`;
      return { environment: {}, notes: told ? [] : [note], done: () => {} };
    }
    toldProblems.delete(root);
    const { folder } = found;
    let state = states.get(folder);
    if (state === undefined) {
      state = { holders: 0, notes: [] };
      states.set(folder, state);
      markCacheRoot(folder, root);
      const caches = path.dirname(folder);
      if (!collected.has(caches)) {
        collected.add(caches);
        void collectGoneWorkspaces(caches, (each) => (states.get(each)?.holders ?? 0) > 0);
      }
    }
    const held = state;
    held.holders += 1;
    if (held.checkedAt === undefined) this.#measure(folder, held);
    let done = false;
    return {
      folder,
      environment: cacheEnvironment(folder),
      notes: held.notes.splice(0),
      done: () => {
        if (done) return;
        done = true;
        held.holders -= 1;
        if (held.over !== undefined && held.holders === 0 && held.checking === undefined) {
          // Found over the bound while commands held it (a measure under way empties it itself).
          held.checking = this.#emptyNow(folder, held).finally(() => {
            held.checking = undefined;
          });
        } else if (Date.now() - (held.checkedAt ?? 0) >= this.#options.checkIntervalMs) {
          this.#measure(folder, held);
        }
      },
    };
  }

  /** Resolves once every measure and emptying started so far has ended (for tests). */
  async settled(): Promise<void> {
    for (const state of states.values()) await state.checking;
  }

  #measure(folder: string, state: CacheState): void {
    if (state.checking !== undefined) return;
    state.checkedAt = Date.now();
    state.checking = (async () => {
      try {
        const bytes = await folderBytes(folder);
        if (bytes <= this.#options.maxBytes) return;
        state.over = bytes;
        if (state.holders === 0) await this.#emptyNow(folder, state);
      } catch (error) {
        state.notes.push(
          `sandbox: pleach could not measure the cache folder ${folder} (${(error as Error).message})`,
        );
      } finally {
        state.checking = undefined;
      }
    })();
  }

  async #emptyNow(folder: string, state: CacheState): Promise<void> {
    const bytes = state.over ?? 0;
    state.over = undefined;
    const size = formatBytes(bytes);
    const bound = formatBytes(this.#options.maxBytes);
    try {
      // Aside in the folder of every workspace's caches, which no command sees.
      const aside = path.join(
        path.dirname(folder),
        `.emptying-${path.basename(folder)}-${process.pid}-${Date.now()}`,
      );
      await emptyFolder(folder, aside);
      state.notes.push(
        `sandbox: this workspace's caches (${folder}) held ${size}, over their bound of ${bound}, and were emptied: the next builds fetch and compile again. A larger bound: the caches: { maxBytes } option of the sandbox.`,
      );
    } catch (error) {
      state.notes.push(
        `sandbox: this workspace's caches (${folder}) held ${size}, over their bound of ${bound}, and could not be emptied (${(error as Error).message}); remove what is in that folder.`,
      );
    }
  }
}

/** The default bound of a workspace's caches: 4 GiB (see `CommandWrapperOptions.caches`). */
const DEFAULT_CACHE_BYTES = 4 * 2 ** 30;

/** The {@link WorkspaceCaches} of a wrapper's `caches` option: none for `false`. */
export function workspaceCachesOf(
  option: boolean | { maxBytes?: number } | undefined,
  hostEnvironment: Readonly<Record<string, string | undefined>>,
): WorkspaceCaches | undefined {
  if (option === false) return undefined;
  const maxBytes =
    typeof option === "object" ? (option.maxBytes ?? DEFAULT_CACHE_BYTES) : DEFAULT_CACHE_BYTES;
  return new WorkspaceCaches({ maxBytes, hostEnvironment });
}
