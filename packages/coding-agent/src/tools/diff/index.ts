export type { ApplyFilePatchOptions, ApplyFilePatchResult, HunkReport } from "./apply.js";
export { applyFilePatch } from "./apply.js";
export type { LocateLinesOptions, Location, Tolerance } from "./locate.js";
export {
  chooseByHint,
  HINT_WINDOW,
  LineTable,
  locateLines,
  normalizeLine,
  TOLERANCE_PHRASES,
  TOLERANCES,
} from "./locate.js";
export type { TolerantMatch } from "./locate-text.js";
export { locateTolerantly } from "./locate-text.js";
export type { FilePatch, Hunk, HunkLine } from "./parse.js";
export { parseUnifiedDiff } from "./parse.js";
