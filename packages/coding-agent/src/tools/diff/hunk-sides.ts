import type { HunkLine } from "./parse.js";

/** The hunk's lines as they read before the change: its context and removed lines. */
export const oldSide = (lines: readonly HunkLine[]) =>
  lines.filter((line) => line.kind !== "add").map((line) => line.text);

/** The hunk's lines as they read after the change: its context and added lines. */
export const newSide = (lines: readonly HunkLine[]) =>
  lines.filter((line) => line.kind !== "remove").map((line) => line.text);
