import { align, type FuzzyAlignment, MATCHING, type Step } from "./fuzzy-align.js";
import { chooseByHint, type LineTable, normalizeLine } from "./locate.js";
import type { HunkLine } from "./parse.js";
import { isSmallEdit } from "./small-edit.js";

/** The slips an alignment has taken so far, by kind. */
interface Used {
  similar: number;
  missing: number;
  unmatched: number;
  applied: number;
}

/** Where {@link locateFuzzy} lined a hunk up. */
export type FuzzyLocation =
  | { status: "unique"; alignment: FuzzyAlignment; chosenByHint: boolean }
  | { status: "ambiguous"; starts: number[] }
  | { status: "none" };

/** Options of {@link locateFuzzy}. */
export interface LocateFuzzyOptions {
  /** The 0-based line the hunk's old lines are expected to start at, to choose among matches. */
  hint: number | undefined;
  /** Alignments this returns false for are left out (they overlap a hunk placed before). */
  accept: (lines: HunkLine[], start: number) => boolean;
  /**
   * Let a file line be missing where lines are added before a context line too, where it is
   * unclear whether it goes before or after them: to tell where a hunk may be, not to apply it.
   * @default false
   */
  anyGap?: boolean;
  /**
   * The hunk is a search/replace edit, which replaces the whole region from its first old line to
   * its last: a blank file line it left out between two removed lines goes with them. (In a diff
   * a blank line between removed lines left out may as well be kept.)
   * @default false
   */
  region?: boolean;
}

/** Lines of a hunk that may differ from the file's by a small edit, at most. */
const MAX_SIMILAR = 3;
/** File lines the diff's context may leave out, per hunk. */
const MAX_MISSING = 2;
/** Context lines of the diff the file may not have (remembered from an older version), per hunk. */
const MAX_UNMATCHED = 1;
/** Characters (whitespace aside) the matching lines must hold for a remembered version's slips. */
const PINNING_CHARACTERS = 48;
/** Changes of a hunk the file may hold already (a model re-sending what it did before), per hunk. */
const MAX_APPLIED = 2;
/** A line occurring more often than this anchors nothing. */
const MAX_ANCHOR_POSITIONS = 64;
/** Line comparisons one hunk may spend; past them it is not found (a conflict, never a guess). */
const MAX_COMPARISONS = 200_000;
/** The loosest comparison of lines that count as matching: no indentation. */
const LOOSEST = MATCHING.at(-1) ?? "exact";

/**
 * Line a hunk's old lines (`hunkLines` without the added ones) up with the file when no
 * tolerance finds them: a line may differ from the file's by a small edit (see
 * {@link isSmallEdit}), and up to {@link MAX_MISSING} file lines between two of the hunk's old
 * lines may be missing from the diff, when no line is added between the two or the second is
 * removed. At most a third of the old lines may differ ({@link MAX_SIMILAR} at most), at least half
 * must match and one of those must be more than punctuation. Every way of lining the hunk up
 * within these bounds is found; only one may remain (or the hint single one out), else the hunk
 * is ambiguous.
 */
export function locateFuzzy(
  table: LineTable,
  hunkLines: readonly HunkLine[],
  { hint, accept, anyGap = false, region = false }: LocateFuzzyOptions,
): FuzzyLocation {
  const old = hunkLines.filter((line) => line.kind !== "add").map((line) => line.text);
  if (old.length < 2) return { status: "none" };
  // Whether a file line may be missing before old line i: not when lines are added between old
  // line i - 1 and it (the missing line could stand before or after them), unless old line i is
  // removed. A diff lists a change's removed lines before its added ones, so lines added just
  // before a removed line belong to the change before the missing line.
  const mayMissBefore: boolean[] = [];
  let adding = false;
  for (const line of hunkLines) {
    if (line.kind === "add") adding = true;
    else {
      mayMissBefore.push(anyGap || !adding || line.kind === "remove");
      adding = false;
    }
  }
  // Per old line: whether it is context, and for the first removed line of a change, its added
  // lines (the change the file may hold already).
  const isContext: boolean[] = [];
  const nextToOld: boolean[] = [];
  const changeAt = new Map<number, { removed: number; added: string[] }>();
  let changes = 0;
  hunkLines.forEach((line, position) => {
    if (line.kind !== "context" && hunkLines[position - 1]?.kind !== line.kind) {
      if (line.kind === "remove" || hunkLines[position - 1]?.kind !== "remove") changes += 1;
    }
    if (line.kind === "add") {
      // Lines added before the next old line: the file may hold them there already.
      if (hunkLines[position - 1]?.kind !== "add" && hunkLines[position - 1]?.kind !== "remove") {
        let end = position;
        const added: string[] = [];
        while (hunkLines[end]?.kind === "add") added.push(hunkLines[end++]?.text ?? "");
        if (hunkLines[end] !== undefined && added.some((text) => text.trim() !== "")) {
          changeAt.set(-1 - isContext.length, { removed: 0, added });
        }
      }
      return;
    }
    isContext.push(line.kind === "context");
    // A context line the file lacks is left out only beside another old line, which keeps the
    // place of the added lines next to it: between added lines and the hunk's end it would not.
    const besideOld = (other: HunkLine | undefined) => other !== undefined && other.kind !== "add";
    nextToOld.push(besideOld(hunkLines[position - 1]) || besideOld(hunkLines[position + 1]));
    const previous = hunkLines[position - 1];
    if (line.kind !== "remove" || previous?.kind === "remove") return;
    let end = position;
    while (hunkLines[end]?.kind === "remove") end += 1;
    const added: string[] = [];
    while (hunkLines[end]?.kind === "add") added.push(hunkLines[end++]?.text ?? "");
    if (added.some((text) => text.trim() !== "")) {
      changeAt.set(isContext.length - 1, { removed: end - position - added.length, added });
    }
  });
  // A file line left out between two removed lines: a blank one may be meant to go with them (a
  // model drops blank lines inside a block) or to stay, and only an edit's region says (it goes);
  // any other stays in a diff, as a context line left out does, and in an edit's region nothing
  // says whether it was meant to go.
  const mayMissAmidRemoved = (index: number, fileText: string) =>
    isContext[index - 1] !== false ||
    isContext[index] !== false ||
    (region ? fileText.trim() === "" : fileText.trim() !== "");
  const keys = table.keys(LOOSEST);
  const wanted = old.map((line) => normalizeLine(line, LOOSEST));
  const maxSimilar = Math.min(MAX_SIMILAR, Math.max(1, Math.floor(old.length / 3)));
  const minMatching = Math.ceil(old.length / 2);

  const starts = new Set<number>();
  wanted.forEach((line, index) => {
    if (line.trim().length < 3) return;
    const positions = table.findAll([old[index] ?? ""], LOOSEST);
    if (positions.length > MAX_ANCHOR_POSITIONS) return;
    for (const position of positions) {
      for (let missing = -MAX_UNMATCHED; missing <= MAX_MISSING; missing += 1) {
        const start = position - index - missing;
        if (start >= 0) starts.add(start);
      }
    }
  });

  const found = new Map<string, FuzzyAlignment>();
  let comparisons = 0;
  // First with the slips of a diff made from the file as it is (typos, lines left out); only if
  // that finds nothing, also with those of one remembered from an older version (context lines
  // the file lacks, changes it holds already): they explain more, so they may only add a place.
  for (const remembered of [false, true]) {
    if (found.size > 0) break;
    for (const start of starts) {
      const steps: Step[] = [];
      const walk = (index: number, fileLine: number, used: Used) => {
        comparisons += 1;
        if (comparisons > MAX_COMPARISONS) return;
        if (index === old.length) {
          if (used.similar + used.missing + used.unmatched + used.applied === 0) return;
          const matching = steps.filter(
            (step) => step.old >= 0 && step.fileLine >= 0 && !step.similar && !step.applied,
          );
          const telling = matching.some((step) => (wanted[step.old] ?? "").trim().length >= 3);
          if (matching.length < minMatching || !telling) return;
          // A version remembered wrongly is taken only where the lines that do match pin the
          // place: two thirds of the old lines, with enough text between them to tell.
          if (used.unmatched + used.applied > 0) {
            const pinning = matching.reduce(
              (sum, step) => sum + (wanted[step.old] ?? "").trim().length,
              0,
            );
            if (pinning < PINNING_CHARACTERS || matching.length * 3 < old.length * 2) return;
          }
          // A hunk all of whose changes the file holds already changes nothing here.
          if (used.applied > 0 && used.applied === changes) return;
          const alignment = align(table, hunkLines, old, start, steps, region);
          if (!accept(alignment.lines, start)) return;
          // Alignments that remove and add the same lines at the same places are one; the one
          // with the fewest slips tells about them.
          const key = effect(alignment);
          const known = found.get(key);
          if (known === undefined || slips(alignment) < slips(known)) found.set(key, alignment);
          return;
        }
        const held = changeAt.get(-1 - index);
        const last = steps.at(-1);
        if (
          remembered &&
          held !== undefined &&
          used.applied < MAX_APPLIED &&
          !(last?.applied && last.old === -1) &&
          held.added.every(
            (text, offset) => keys[fileLine + offset] === normalizeLine(text, LOOSEST),
          )
        ) {
          held.added.forEach((_, offset) => {
            steps.push({ old: -1, fileLine: fileLine + offset, similar: false, applied: true });
          });
          walk(index, fileLine + held.added.length, { ...used, applied: used.applied + 1 });
          steps.splice(steps.length - held.added.length);
        }
        // A context line the file does not have next to a file line the diff does not have is a line
        // replaced, not a slip.
        const _unmatchedLast =
          last !== undefined && last.old >= 0 && last.fileLine < 0 && !last.applied;
        const _missingLast = last !== undefined && last.old === -1 && !last.applied;
        const fileKey = keys[fileLine];
        if (fileKey !== undefined && fileKey === wanted[index]) {
          steps.push({ old: index, fileLine, similar: false });
          walk(index + 1, fileLine + 1, used);
          steps.pop();
        } else if (
          fileKey !== undefined &&
          used.similar < maxSimilar &&
          isSmallEdit(old[index] ?? "", table.lines[fileLine] ?? "")
        ) {
          steps.push({ old: index, fileLine, similar: true });
          walk(index + 1, fileLine + 1, { ...used, similar: used.similar + 1 });
          steps.pop();
        }
        const change = changeAt.get(index);
        if (
          remembered &&
          change !== undefined &&
          used.applied < MAX_APPLIED &&
          change.added.every(
            (text, offset) => keys[fileLine + offset] === normalizeLine(text, LOOSEST),
          )
        ) {
          for (let offset = 0; offset < change.removed; offset += 1) {
            steps.push({
              old: index + offset,
              fileLine: offset === 0 ? fileLine : -1,
              similar: false,
              applied: true,
            });
          }
          walk(index + change.removed, fileLine + change.added.length, {
            ...used,
            applied: used.applied + 1,
          });
          steps.splice(steps.length - change.removed);
        }
        // A context line the file lacks and a file line the diff lacks in one hunk explain each
        // other's place too many ways: one or the other.
        if (
          remembered &&
          isContext[index] &&
          nextToOld[index] &&
          used.unmatched < MAX_UNMATCHED &&
          used.missing === 0
        ) {
          steps.push({ old: index, fileLine: -1, similar: false });
          walk(index + 1, fileLine, { ...used, unmatched: used.unmatched + 1 });
          steps.pop();
        }
        if (
          fileKey !== undefined &&
          index > 0 &&
          used.missing < MAX_MISSING &&
          mayMissBefore[index] &&
          used.unmatched === 0 &&
          mayMissAmidRemoved(index, table.lines[fileLine] ?? "")
        ) {
          steps.push({ old: -1, fileLine, similar: false });
          walk(index, fileLine + 1, { ...used, missing: used.missing + 1 });
          steps.pop();
        }
      };
      walk(0, start, { similar: 0, missing: 0, unmatched: 0, applied: 0 });
    }
  }

  if (comparisons > MAX_COMPARISONS) return { status: "none" };
  const alignments = [...found.values()];
  const [only] = alignments;
  if (only === undefined) return { status: "none" };
  if (alignments.length === 1) return { status: "unique", alignment: only, chosenByHint: false };
  const distinct = [...new Set(alignments.map((alignment) => alignment.start))];
  const chosen = chooseByHint(distinct, hint);
  const atChosen = alignments.filter((alignment) => alignment.start === chosen);
  const [picked] = atChosen;
  if (picked !== undefined && atChosen.length === 1) {
    return { status: "unique", alignment: picked, chosenByHint: true };
  }
  return { status: "ambiguous", starts: distinct };
}

const slips = (alignment: FuzzyAlignment) =>
  alignment.similarLines.length +
  alignment.missingLines.length +
  alignment.blankLinesRemoved.length +
  alignment.unmatchedContext.length +
  alignment.appliedLines.length;

/** What an alignment does to the file: the lines it removes and the lines it adds where. */
function effect({ start, lines }: FuzzyAlignment): string {
  const parts: string[] = [];
  let fileLine = start;
  for (const line of lines) {
    if (line.kind === "add") parts.push(`+${fileLine}:${line.text}`);
    else {
      if (line.kind === "remove") parts.push(`-${fileLine}`);
      fileLine += 1;
    }
  }
  return parts.join("\u0000");
}
