import type { HunkLine } from "./parse.js";

/** The hunk's lines as they read before the change: its context and removed lines. */
export const oldSide = (lines: readonly HunkLine[]) =>
  lines.filter((line) => line.kind !== "add").map((line) => line.text);

/** The hunk's lines as they read after the change: its context and added lines. */
export const newSide = (lines: readonly HunkLine[]) =>
  lines.filter((line) => line.kind !== "remove").map((line) => line.text);

export function addsOnly(lines: readonly HunkLine[]): boolean {
  return !lines.some((line) => line.kind === "remove");
}

export function leadingContext(lines: readonly HunkLine[]): number {
  let count = 0;
  while (lines[count]?.kind === "context") count += 1;
  return count;
}

/** The original lines [start, end) the hunk's changed lines cover (empty for a pure insertion). */
export function coreRange(lines: readonly HunkLine[], start: number): [number, number] {
  const first = lines.findIndex((line) => line.kind !== "context");
  let last = lines.length - 1;
  while (last >= 0 && lines[last]?.kind === "context") last -= 1;
  const oldBefore = oldSide(lines.slice(0, Math.max(first, 0))).length;
  const oldWithin = oldSide(lines.slice(Math.max(first, 0), last + 1)).length;
  return [start + oldBefore, start + oldBefore + oldWithin];
}

export function rangesOverlap(
  start: number,
  end: number,
  otherStart: number,
  otherEnd: number,
): boolean {
  if (start === end && otherStart === otherEnd) return start === otherStart;
  if (start === end) return otherStart < start && start < otherEnd;
  if (otherStart === otherEnd) return start < otherStart && otherStart < end;
  return start < otherEnd && otherStart < end;
}
