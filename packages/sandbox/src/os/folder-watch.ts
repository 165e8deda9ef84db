import { type FolderListing, FolderReader, RECENT_CHANGE_MS } from "./folder-reader.js";

/** Options of {@link createFolderWatch}. */
export interface FolderWatchOptions {
  /** @default 2_000 */
  recentChangeMs?: number;
}

/**
 * Listings of a few fixed folders (outside the workspace), each read again only when its stamp
 * says it changed. A missing folder is looked at again every time.
 */
export function createFolderWatch({ recentChangeMs = RECENT_CHANGE_MS }: FolderWatchOptions = {}): {
  listing(folder: string): FolderListing | undefined;
} {
  const reader = new FolderReader(recentChangeMs);
  const listings = new Map<string, FolderListing>();
  return {
    listing(folder) {
      const known = listings.get(folder);
      if (known !== undefined && reader.holds(folder, known)) return known;
      const listing = reader.read(folder);
      if (listing === undefined) listings.delete(folder);
      else listings.set(folder, listing);
      return listing;
    },
  };
}
