import { Buffer } from "node:buffer";

/** One line of a hunk's body. */
export interface HunkLine {
  /** `context` lines are in both versions, `remove` only in the old one, `add` only in the new. */
  kind: "context" | "remove" | "add";
  /** The line without its marker character and without `\n`; a `\r` the diff carried is kept. */
  text: string;
  /** A `\ No newline at end of file` marker followed this line. */
  noNewlineAtEnd: boolean;
}

/** One `@@` hunk of a file's diff. */
export interface Hunk {
  /** 1-based old start line from the header; `undefined` when the header has no numbers. */
  oldStart: number | undefined;
  /** The old line count the header declared, which may disagree with the body. */
  oldCount: number | undefined;
  /** 1-based new start line from the header; `undefined` when the header has no numbers. */
  newStart: number | undefined;
  /** The new line count the header declared. */
  newCount: number | undefined;
  lines: HunkLine[];
  /** The header's counts did not describe the body, which was taken up to the next header. */
  recounted: boolean;
}

/** The diff of one file. */
export interface FilePatch {
  /** The old file's path from the headers (`a/` stripped); `undefined` when absent or `/dev/null`. */
  oldPath: string | undefined;
  /** The new file's path from the headers (`b/` stripped); `undefined` when absent or `/dev/null`. */
  newPath: string | undefined;
  /** `create`: old side is `/dev/null`; `delete`: new side is `/dev/null`; otherwise `modify`. */
  operation: "modify" | "create" | "delete";
  hunks: Hunk[];
}

const NUMBERED_HEADER = /^@@+ *-(\d+)(?:,(\d+))? +\+(\d+)(?:,(\d+))? *@@/;
const TIMESTAMP =
  /\s+(?:\d{4}-\d\d-\d\d[ T]\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?: ?[+-]\d{4}|Z)?|[A-Z][a-z]{2} [A-Z][a-z]{2} +\d+ \d\d:\d\d:\d\d \d{4})$/;

/**
 * Read a unified diff the way a model sends one: `diff --git` and `---`/`+++` headers (optional,
 * `a/`/`b/` prefixes stripped either way round, as `git diff -R` writes them, and timestamps too), Markdown fences and prose around the diff (ignored),
 * `@@` headers whose numbers or counts are wrong or missing (the body is recounted up to the next
 * header), blank context lines that lost their leading space, and a diff sent with CRLF line ends.
 * Files without hunks (renames, mode changes, binary files) are left out.
 */
export function parseUnifiedDiff(diff: string): FilePatch[] {
  const lines = diffLines(diff);
  const files: FilePatch[] = [];
  let current: FilePatch | undefined;
  let headed = false;
  let reversed = false;
  const startFile = (): FilePatch => {
    if (current !== undefined && current.hunks.length > 0) files.push(current);
    current = { oldPath: undefined, newPath: undefined, operation: "modify", hunks: [] };
    headed = false;
    return current;
  };
  let index = 0;
  while (index < lines.length) {
    const line = lines[index] ?? "";
    if (line.startsWith("diff --git ")) {
      startFile();
      reversed = isReversedGitLine(line);
      index += 1;
    } else if (isFileHeaderAt(lines, index)) {
      // A second ---/+++ pair, or one after hunks, starts another file even without `diff --git`.
      const file =
        current === undefined || headed || current.hunks.length > 0 ? startFile() : current;
      setPaths(file, line.slice(4), (lines[index + 1] ?? "").slice(4), reversed);
      reversed = false;
      headed = true;
      index += 2;
    } else if (line.startsWith("@@")) {
      const file = current ?? startFile();
      const { hunk, next } = parseHunk(lines, index);
      file.hunks.push(hunk);
      index = next;
    } else {
      index += 1;
    }
  }
  if (current !== undefined && (current as FilePatch).hunks.length > 0) files.push(current);
  return files;
}

/**
 * The diff's lines. A diff whose hunk headers end in `\r` was sent with CRLF line ends as a
 * whole, so every `\r` is transport and dropped; otherwise a `\r` at a body line's end belongs to
 * that line of the file (a diff of a CRLF file made by `diff` or `git diff`).
 */
function diffLines(diff: string): string[] {
  const lines = diff.split("\n");
  if (lines.at(-1) === "") lines.pop();
  const headers = lines.filter((line) => line.startsWith("@@"));
  if (headers.length > 0 && headers.every((line) => line.endsWith("\r"))) {
    return lines.map((line) => (line.endsWith("\r") ? line.slice(0, -1) : line));
  }
  return lines;
}

function isFileHeaderAt(lines: readonly string[], index: number): boolean {
  return (lines[index] ?? "").startsWith("--- ") && (lines[index + 1] ?? "").startsWith("+++ ");
}

/**
 * Whether a `diff --git` line names its sides the other way round, `b/` then `a/`, as
 * `git diff -R` and `git show -R` write them.
 */
function isReversedGitLine(line: string): boolean {
  return line.startsWith("diff --git b/") && line.includes(" a/");
}

/**
 * Set the file's paths from its `---`/`+++` lines, with git's `a/` and `b/` prefixes stripped:
 * `--- a/x` / `+++ b/x`, or reversed, `--- b/x` / `+++ a/x`. A side that is `/dev/null` takes
 * the prefix the other side leaves; for a reversed diff that creates or deletes a file, only when
 * its `diff --git` line is reversed too, so that `+++ a/x` alone still names the file `a/x`.
 */
function setPaths(file: FilePatch, oldRaw: string, newRaw: string, reversed: boolean): void {
  let oldPath = headerPath(oldRaw);
  let newPath = headerPath(newRaw);
  const prefixed = (value: string | null, prefix: string) =>
    value === null || value.startsWith(prefix);
  const both = oldPath !== null && newPath !== null;
  const forward = prefixed(oldPath, "a/") && prefixed(newPath, "b/");
  const backward = prefixed(oldPath, "b/") && prefixed(newPath, "a/") && (both || reversed);
  if (oldPath !== newPath && (forward || backward)) {
    oldPath = oldPath?.slice(2) ?? null;
    newPath = newPath?.slice(2) ?? null;
  }
  file.oldPath = oldPath ?? undefined;
  file.newPath = newPath ?? undefined;
  file.operation = oldPath === null ? "create" : newPath === null ? "delete" : "modify";
}

/** The path of a `---`/`+++` line after its marker; `null` for `/dev/null`. */
function headerPath(raw: string): string | null {
  let value = raw.replace(/\r$/, "");
  if (value.startsWith('"')) {
    const end = closingQuote(value);
    if (end !== -1) value = unquote(value.slice(1, end));
  } else {
    value = (value.split("\t")[0] ?? "").replace(TIMESTAMP, "").trim();
  }
  return value === "/dev/null" ? null : value;
}

function closingQuote(value: string): number {
  for (let index = 1; index < value.length; index += 1) {
    if (value[index] === "\\") index += 1;
    else if (value[index] === '"') return index;
  }
  return -1;
}

/** Undo git's C-style quoting of a path, octal escapes of UTF-8 bytes included. */
function unquote(quoted: string): string {
  const bytes: number[] = [];
  const simple: Record<string, string> = { n: "\n", t: "\t", '"': '"', "\\": "\\", r: "\r" };
  for (let index = 0; index < quoted.length; index += 1) {
    const character = quoted[index] ?? "";
    if (character !== "\\") {
      bytes.push(...Buffer.from(character, "utf8"));
      continue;
    }
    const next = quoted[index + 1] ?? "";
    const octal = /^[0-7]{3}/.exec(quoted.slice(index + 1));
    if (octal !== null) {
      bytes.push(Number.parseInt(octal[0], 8));
      index += 3;
    } else {
      bytes.push(...Buffer.from(simple[next] ?? next, "utf8"));
      index += 1;
    }
  }
  return Buffer.from(bytes).toString("utf8");
}

function bodyLine(line: string): HunkLine | undefined {
  if (line === "" || line === "\r") return { kind: "context", text: "", noNewlineAtEnd: false };
  const marker = line[0];
  const text = line.slice(1);
  if (marker === " ") return { kind: "context", text, noNewlineAtEnd: false };
  if (marker === "-") return { kind: "remove", text, noNewlineAtEnd: false };
  if (marker === "+") return { kind: "add", text, noNewlineAtEnd: false };
  return undefined;
}

/** Parse the hunk whose header is at `start`: by its counts when they fit, else recounted. */
function parseHunk(lines: readonly string[], start: number): { hunk: Hunk; next: number } {
  const header = NUMBERED_HEADER.exec(lines[start] ?? "");
  const numbers = header
    ?.slice(1)
    .map((value) => (value === undefined ? undefined : Number(value)));
  const hunk: Hunk = {
    oldStart: numbers?.[0],
    // A count left out means one line (`@@ -5 +5 @@`).
    oldCount: header === null ? undefined : (numbers?.[1] ?? 1),
    newStart: numbers?.[2],
    newCount: header === null ? undefined : (numbers?.[3] ?? 1),
    lines: [],
    recounted: false,
  };
  if (hunk.oldCount !== undefined && hunk.newCount !== undefined) {
    const counted = bodyByCounts(lines, start + 1, hunk.oldCount, hunk.newCount);
    if (counted !== undefined) {
      hunk.lines = counted.body;
      return { hunk, next: counted.next };
    }
  }
  hunk.recounted = true;
  let end = start + 1;
  while (end < lines.length) {
    const line = lines[end] ?? "";
    if (line.startsWith("@@") || line.startsWith("diff --git ") || isFileHeaderAt(lines, end)) {
      break;
    }
    if (!line.startsWith("\\") && bodyLine(line) === undefined) break;
    end += 1;
  }
  // Blank lines before whatever ends the hunk separate it from that; they are no context.
  while (end > start + 1 && (lines[end - 1] === "" || lines[end - 1] === "\r")) end -= 1;
  hunk.lines = collect(lines.slice(start + 1, end));
  return { hunk, next: end };
}

function collect(raw: readonly string[]): HunkLine[] {
  const body: HunkLine[] = [];
  for (const line of raw) {
    if (line.startsWith("\\")) {
      const last = body.at(-1);
      if (last !== undefined) last.noNewlineAtEnd = true;
      continue;
    }
    const parsed = bodyLine(line);
    if (parsed !== undefined) body.push(parsed);
  }
  return body;
}

/**
 * The hunk body as the header's counts delimit it, or `undefined` when the counts do not fit:
 * the body ends early, or a body line follows where the counts say the hunk is over.
 */
function bodyByCounts(
  lines: readonly string[],
  start: number,
  oldCount: number,
  newCount: number,
): { body: HunkLine[]; next: number } | undefined {
  let oldLeft = oldCount;
  let newLeft = newCount;
  let index = start;
  const raw: string[] = [];
  while (oldLeft > 0 || newLeft > 0) {
    const line = lines[index];
    if (line === undefined || line.startsWith("@@")) return undefined;
    index += 1;
    raw.push(line);
    if (line.startsWith("\\")) continue;
    const parsed = bodyLine(line);
    if (parsed === undefined) return undefined;
    if (parsed.kind !== "add") oldLeft -= 1;
    if (parsed.kind !== "remove") newLeft -= 1;
    if (oldLeft < 0 || newLeft < 0) return undefined;
  }
  while ((lines[index] ?? "").startsWith("\\")) {
    raw.push(lines[index] ?? "");
    index += 1;
  }
  const following = lines[index];
  if (
    following !== undefined &&
    /^[-+ ]/.test(following) &&
    !isFileHeaderAt(lines, index) &&
    following !== "-- " // the signature separator `git format-patch` ends a mail with
  ) {
    return undefined;
  }
  return { body: collect(raw), next: index };
}
