import { ToolError } from "@pleach/core";
import type { HunkLine } from "./parse.js";

/**
 * One change of a V4A `*** Update File:` section: the `@@` lines that lead to it (each a line of the
 * file, such as a class or function signature, found in order after the change before), its
 * context, removed and added lines, and whether `*** End of File` pins it to the file's end.
 */
export interface V4AChunk {
  anchors: string[];
  lines: HunkLine[];
  endOfFile: boolean;
}

/** One file section of a V4A patch. */
export type V4AFile =
  | { kind: "add"; path: string; text: string }
  | { kind: "delete"; path: string }
  | { kind: "update"; path: string; moveTo: string | undefined; chunks: V4AChunk[] };

const BEGIN = "*** Begin Patch";
const END = "*** End Patch";
const ADD = "*** Add File: ";
const DELETE = "*** Delete File: ";
const UPDATE = "*** Update File: ";
const MOVE = "*** Move to: ";
const END_OF_FILE = "*** End of File";
/** A unified diff's `@@ -1,2 +1,3 @@` header written in a V4A patch: no anchor, its numbers unused. */
const NUMBERED = /^-\d+(?:,\d+)? \+\d+(?:,\d+)? @@/;

const FORMAT =
  "A V4A patch is `*** Begin Patch`, then per file `*** Add File: <path>` (its lines each starting with +), `*** Delete File: <path>`, or `*** Update File: <path>` (optionally `*** Move to: <new path>`) followed by changes that each start with `@@` (optionally `@@ <a line of the file above the change, such as its function>`) and whose lines start with a space (context), - (removed) or + (added), then `*** End Patch`.";

function invalid(message: string): ToolError {
  return new ToolError("INVALID_INPUT", `${message}. ${FORMAT}`);
}

/** Whether `text` is a V4A patch: its first line that is not blank reads `*** Begin Patch`. */
export function isV4APatch(text: string): boolean {
  const first = text.split("\n").find((line) => line.trim() !== "");
  return first?.trim() === BEGIN;
}

/**
 * Read a V4A patch (OpenAI's apply_patch format). Marker lines may carry spaces around them; a
 * `\r` before each `\n` is dropped. Throws `INVALID_INPUT`, saying where and what to send, for a
 * patch that has no `*** End Patch` (cut off), no file, an unknown `***` line, an update without
 * changes, or a line that is none of context, removed or added.
 */
export function parseV4APatch(patch: string): V4AFile[] {
  const lines = patch.split("\n").map((line) => line.replace(/\r$/, ""));
  const begin = lines.findIndex((line) => line.trim() === BEGIN);
  const end = lines.findLastIndex((line) => line.trim() === END);
  if (begin === -1) throw invalid("the patch has no `*** Begin Patch` line");
  if (end <= begin) {
    throw invalid(
      "the patch has no `*** End Patch` line after `*** Begin Patch`, so it may have been cut off; send it whole",
    );
  }
  const files: V4AFile[] = [];
  let index = begin + 1;
  while (index < end) {
    const line = (lines[index] ?? "").trim();
    const lineNumber = index + 1;
    index += 1;
    if (line === "") continue;
    if (line.startsWith(ADD)) {
      const path = pathOf(line, ADD, lineNumber);
      const added: string[] = [];
      while (index < end && (lines[index] ?? "").startsWith("+")) {
        added.push((lines[index] ?? "").slice(1));
        index += 1;
      }
      files.push({ kind: "add", path, text: added.map((text) => `${text}\n`).join("") });
    } else if (line.startsWith(DELETE)) {
      files.push({ kind: "delete", path: pathOf(line, DELETE, lineNumber) });
    } else if (line.startsWith(UPDATE)) {
      const path = pathOf(line, UPDATE, lineNumber);
      let moveTo: string | undefined;
      if ((lines[index] ?? "").trim().startsWith(MOVE)) {
        moveTo = pathOf((lines[index] ?? "").trim(), MOVE, index + 1);
        index += 1;
      }
      let bodyEnd = index;
      while (bodyEnd < end && !isFileHeader(lines[bodyEnd] ?? "")) bodyEnd += 1;
      const chunks = parseV4AChunks(lines.slice(index, bodyEnd).join("\n"), {
        path,
        firstLine: index + 1,
      });
      index = bodyEnd;
      files.push({ kind: "update", path, moveTo, chunks });
    } else {
      throw invalid(
        `line ${lineNumber} of the patch, ${JSON.stringify(line.slice(0, 80))}, is not a file header (\`*** Add File:\`, \`*** Delete File:\` or \`*** Update File:\`)`,
      );
    }
  }
  if (files.length === 0) throw invalid("the patch changes no file");
  return files;
}

/**
 * The changes of one `*** Update File:` section. The first change may leave out its `@@` line. Throws `INVALID_INPUT` when there is no
 * change or a line is none of `@@`, context, removed, added or `*** End of File`.
 */
function parseV4AChunks(
  body: string,
  { path, firstLine = 1 }: { path: string; firstLine?: number },
): V4AChunk[] {
  const lines = body.split("\n").map((line) => line.replace(/\r$/, ""));
  while (lines.length > 0 && (lines.at(-1) ?? "").trim() === "") lines.pop();
  const chunks: V4AChunk[] = [];
  let current: V4AChunk | undefined;
  lines.forEach((line, offset) => {
    const trimmed = line.trim();
    if (trimmed.startsWith("@@")) {
      const anchor = trimmed.slice(2).trim();
      // Consecutive @@ lines narrow down to one place (a class, then a method in it).
      if (current === undefined || current.lines.length > 0 || current.endOfFile) {
        current = { anchors: [], lines: [], endOfFile: false };
        chunks.push(current);
      }
      if (anchor !== "" && !NUMBERED.test(anchor)) current.anchors.push(anchor);
      return;
    }
    if (trimmed === END_OF_FILE) {
      if (current !== undefined) current.endOfFile = true;
      return;
    }
    const marker = line[0];
    const kind =
      line === ""
        ? "context"
        : marker === " "
          ? "context"
          : marker === "-"
            ? "remove"
            : marker === "+"
              ? "add"
              : undefined;
    if (kind === undefined) {
      throw invalid(
        `line ${firstLine + offset} of the patch (in ${path}), ${JSON.stringify(line.slice(0, 80))}, does not start with a space, - or +; every line of a change is context (a space), removed (-) or added (+)`,
      );
    }
    if (current === undefined || current.endOfFile) {
      current = { anchors: [], lines: [], endOfFile: false };
      chunks.push(current);
    }
    current.lines.push({ kind, text: line.slice(1), noNewlineAtEnd: false });
  });
  const changes = chunks.filter((chunk) => chunk.lines.some((line) => line.kind !== "context"));
  if (changes.length === 0) {
    throw invalid(`the update of ${path} has no added or removed lines, so it changes nothing`);
  }
  return chunks;
}

/** The files a V4A patch names (moves' destinations too), loosely, for the record of what it writes. */
export function v4aFileNames(patch: string): string[] {
  const names = new Set<string>();
  for (const raw of patch.split("\n")) {
    const line = raw.trim();
    for (const header of [ADD, DELETE, UPDATE, MOVE]) {
      if (line.startsWith(header)) names.add(line.slice(header.length).trim());
    }
  }
  names.delete("");
  return [...names];
}

function isFileHeader(line: string): boolean {
  const trimmed = line.trim();
  return [ADD, DELETE, UPDATE].some((header) => trimmed.startsWith(header));
}

function pathOf(line: string, header: string, lineNumber: number): string {
  const path = line.slice(header.length).trim();
  if (path === "") throw invalid(`line ${lineNumber} of the patch names no file`);
  return path;
}
