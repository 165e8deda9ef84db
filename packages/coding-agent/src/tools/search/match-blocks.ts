import { compareTreePaths } from "../shared/path-order.js";
import type { SearchMatch } from "./search-match.js";

/** One file's matches, in line order. */
interface Block {
  /** The file's path below the searched folder, as it is sorted. */
  key: string;
  matches: SearchMatch[];
}

/**
 * Matches of one file after another, as a search program printed them (each file's matches
 * together, in line order), put in path order a file at a time: a sort of files, not of matches.
 */
export class MatchBlocks {
  readonly #blocks: Block[] = [];
  #count = 0;

  /** How many matches were added. */
  get count(): number {
    return this.#count;
  }

  /** Starts the block of the file printed as `printed` (`./a/b.ts`, or `a/b.ts`). */
  startFile(printed: string): void {
    this.#blocks.push({ key: printed.startsWith("./") ? printed.slice(2) : printed, matches: [] });
  }

  /** Adds a match to the file started last. */
  add(match: SearchMatch): void {
    this.#blocks[this.#blocks.length - 1]?.matches.push(match);
    this.#count += 1;
  }

  /** The matches in path order, as a sorted directory walk meets the files; lines stay in order. */
  sorted(): SearchMatch[] {
    const blocks = [...this.#blocks].sort((left, right) => compareTreePaths(left.key, right.key));
    const matches: SearchMatch[] = [];
    for (const block of blocks) for (const match of block.matches) matches.push(match);
    return matches;
  }
}
