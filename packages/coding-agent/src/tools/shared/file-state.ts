import { Buffer } from "node:buffer";
import { createHash } from "node:crypto";
import path from "node:path";
import {
  type AnyToolDefinition,
  defineTool,
  isToolError,
  type PluginToolDefinition,
  ToolError,
  type ToolFileAccess,
} from "@pleach/core";
import type { SandboxClient } from "../../sandbox/index.js";
import { isV4APatch, v4aFileNames } from "../diff/v4a.js";

/** What a session knows about one file: the hash of the bytes the model last saw or wrote. */
export interface FileRecord {
  /** SHA-256 (hex) of the file's bytes when the model last read or wrote it. */
  hash: string;
  /** How the record was made. */
  via: "read" | "write";
}

/**
 * The record a session keeps of what the model has read, by content hash. Tools wrapped by
 * {@link withFileState} share one: a write to an existing file is refused unless the model read
 * it and it has not changed since.
 */
export interface FileState {
  /** The record of `filePath`, if the model read or wrote it. */
  get(filePath: string): FileRecord | undefined;
  /** Remember that the model saw (or wrote) these bytes of `filePath`. */
  record(filePath: string, record: FileRecord): void;
  /** Forget `filePath` (it was deleted). */
  forget(filePath: string): void;
  /** The paths recorded, normalized. */
  paths(): string[];
}

/** Make an empty {@link FileState}, one per agent session. */
export function createFileState(): FileState {
  const records = new Map<string, FileRecord>();
  return {
    get: (filePath) => records.get(normalizeFilePath(filePath)),
    record: (filePath, record) => {
      records.set(normalizeFilePath(filePath), record);
    },
    forget: (filePath) => {
      records.delete(normalizeFilePath(filePath));
    },
    paths: () => [...records.keys()],
  };
}

/** The key a path is recorded under: posix-normalized, without a leading `./`. */
export function normalizeFilePath(filePath: string): string {
  const normalized = path.posix.normalize(filePath.replaceAll("\\", "/"));
  return normalized.startsWith("./") ? normalized.slice(2) : normalized;
}

/** SHA-256 (hex) of bytes given as base64, the way {@link SandboxClient.readFile} returns them. */
function hashBase64(base64: string): string {
  return createHash("sha256").update(Buffer.from(base64, "base64")).digest("hex");
}

/**
 * The current hash of `filePath` through the client; `undefined` when it does not exist. Other
 * failures (an escaping path, a folder) return `null`: the tool itself reports those in its words.
 */
export async function currentFileHash(
  client: SandboxClient,
  filePath: string,
): Promise<string | undefined | null> {
  try {
    return hashBase64(await client.readFile(filePath, { encoding: "base64" }));
  } catch (error) {
    if (isToolError(error) && error.code === "NOT_FOUND") return undefined;
    return null;
  }
}

/** Options of {@link withFileState}. */
export interface WithFileStateOptions {
  /** The session's record, shared by all its tools. */
  fileState: FileState;
  /** The client the tool works through, used to hash files. */
  client: SandboxClient;
  /**
   * The files a call reads or writes, for a tool that does not declare them itself.
   * @default tool.files
   */
  files?: ToolFileAccess<unknown>;
}

/**
 * Wrap a tool's `execute` with the session's file state, from the files the tool declares (see
 * {@link ToolFileAccess}); a tool that declares none is returned as it is. The files a call reads
 * are recorded by hash. A call that would write an existing file is refused with `STALE_FILE` when
 * the file was never read in this session, or changed on disk since (another process, the user);
 * after a successful write the record is refreshed, so the model may edit the same file again.
 */
export function withFileState<Tool extends AnyToolDefinition>(
  tool: Tool,
  { fileState, client, files = tool.files }: WithFileStateOptions,
): Tool {
  if (files?.reads === undefined && files?.writes === undefined) return tool;
  const wrapped: PluginToolDefinition = defineTool({
    name: tool.name,
    description: tool.description,
    inputSchema: tool.inputSchema,
    outputSchema: tool.outputSchema,
    annotations: tool.annotations,
    files,
    async execute(input, context) {
      const reads = uniquePaths(files.reads?.(input));
      const writes = uniquePaths(files.writes?.(input));
      for (const filePath of writes) {
        await checkFresh({ client, fileState, filePath, toolName: tool.name });
      }
      const output = await tool.execute(input, context);
      await recordHashes({ client, fileState, filePaths: reads, via: "read" });
      await recordHashes({ client, fileState, filePaths: writes, via: "write" });
      return output;
    },
    toModelOutput: (output) => tool.toModelOutput(output),
  });
  return wrapped as Tool;
}

function uniquePaths(filePaths: readonly string[] = []): string[] {
  return [...new Set(filePaths.map(normalizeFilePath))];
}

async function recordHashes({
  client,
  fileState,
  filePaths,
  via,
}: {
  client: SandboxClient;
  fileState: FileState;
  filePaths: readonly string[];
  via: FileRecord["via"];
}): Promise<void> {
  for (const filePath of filePaths) {
    const hash = await currentFileHash(client, filePath);
    if (hash === undefined) fileState.forget(filePath);
    else if (hash !== null) fileState.record(filePath, { hash, via });
  }
}

async function checkFresh({
  client,
  fileState,
  filePath,
  toolName,
}: {
  client: SandboxClient;
  fileState: FileState;
  filePath: string;
  toolName: string;
}): Promise<void> {
  const current = await currentFileHash(client, filePath);
  // A path the client refuses is left to the tool, which says what is wrong with it. A missing
  // file needs no read: a write creates it, and a tool that needs it reports it with its hints.
  if (current === null || current === undefined) return;
  const record = fileState.get(filePath);
  if (record === undefined) {
    throw new ToolError(
      "STALE_FILE",
      `${toolName} refused: you have not read ${filePath} in this session, so the change could be based on a guess of its content. Call read_file on ${filePath} first, then make the change against what it returns.`,
      { details: { path: filePath, reason: "not-read" } },
    );
  }
  if (record.hash !== current) {
    throw new ToolError(
      "STALE_FILE",
      `${toolName} refused: ${filePath} changed on disk since you last read it (another process or the user changed it, or a command you ran did). Call read_file on ${filePath} again and redo the change against its current content.`,
      { details: { path: filePath, reason: "changed" } },
    );
  }
}

/**
 * The files a unified diff names in its `---`/`+++` lines, loosely: `a/`/`b/` stripped,
 * timestamps and `/dev/null` dropped; of a V4A patch, its file headers' paths.
 */
export function diffFileNames(diff: string): string[] {
  if (isV4APatch(diff)) return v4aFileNames(diff);
  const names = new Set<string>();
  const lines = diff.split("\n").map((line) => line.replace(/\r$/, ""));
  lines.forEach((line, index) => {
    // A header is a `---` line followed by a `+++` line; a lone one is a hunk's body line.
    const next = lines[index + 1] ?? "";
    if (!line.startsWith("--- ") || !next.startsWith("+++ ")) return;
    for (const header of [line, next]) {
      let name = header.slice(4).split("\t")[0]?.trim() ?? "";
      if (name.startsWith('"') && name.endsWith('"')) name = name.slice(1, -1);
      if (name === "" || name === "/dev/null") continue;
      if (/^[ab]\//.test(name)) name = name.slice(2);
      names.add(name);
    }
  });
  return [...names];
}
