import type { AnyToolDefinition } from "@pleach/core";
import type { SandboxClient } from "../sandbox/index.js";
import { currentFileHash, type FileState, normalizeFilePath } from "../tools/shared/file-state.js";
import type { ModelMessage } from "./model.js";

/** A call that reads files, as its tool declares them (`files.reads` and `files.readKey`). */
export interface DeclaredRead {
  /** The tool and the files, normalized: one memory per pair. */
  key: string;
  filePaths: string[];
  /** What else in the input decides the result. */
  readKey: string;
}

/**
 * The runtime's memory of reads: where the result of the latest read of some files sits in the
 * transcript, so that a repeat of it, while the files are unchanged, is answered by pointing there
 * instead of sending the same content again.
 */
export interface ReadMemory {
  /** The read a call makes, when its tool declares one that can be remembered. */
  readOf(tool: AnyToolDefinition, input: unknown): DeclaredRead | undefined;
  /**
   * The step whose result still holds for `read`: same files and key, the files unchanged in the
   * session's record and on disk, and the result not elided. `undefined` when the call must run.
   */
  recall(read: DeclaredRead): Promise<number | undefined>;
  /** Remember that `message`, at `step`, holds the result of `read`. */
  remember(read: DeclaredRead, { step, message }: { step: number; message: ModelMessage }): void;
}

interface Remembered {
  readKey: string;
  hashes: string[];
  step: number;
  message: ModelMessage;
}

/** Make the memory of one run, over the session's file state. */
export function createReadMemory({
  client,
  fileState,
  elided,
}: {
  client: SandboxClient;
  fileState: FileState;
  /** The transcript messages elided to save context (see `elideOldResults`). */
  elided: ReadonlySet<ModelMessage>;
}): ReadMemory {
  const memories = new Map<string, Remembered>();
  return {
    readOf(tool, input) {
      const { reads, readKey } = tool.files ?? {};
      if (reads === undefined || readKey === undefined) return undefined;
      const parsed = tool.inputSchema.safeParse(input);
      // Input the tool refuses runs, so that the tool says what is wrong with it.
      if (!parsed.success) return undefined;
      const filePaths = [...new Set(reads(parsed.data).map(normalizeFilePath))];
      if (filePaths.length === 0) return undefined;
      return {
        key: JSON.stringify([tool.name, filePaths]),
        filePaths,
        readKey: readKey(parsed.data),
      };
    },
    async recall(read) {
      const memory = memories.get(read.key);
      if (memory === undefined || elided.has(memory.message) || memory.readKey !== read.readKey) {
        return undefined;
      }
      for (const [index, filePath] of read.filePaths.entries()) {
        const hash = memory.hashes[index];
        if (fileState.get(filePath)?.hash !== hash) return undefined;
        if ((await currentFileHash(client, filePath)) !== hash) return undefined;
      }
      return memory.step;
    },
    remember(read, { step, message }) {
      const hashes: string[] = [];
      for (const filePath of read.filePaths) {
        const record = fileState.get(filePath);
        if (record === undefined) return;
        hashes.push(record.hash);
      }
      memories.set(read.key, { readKey: read.readKey, hashes, step, message });
    },
  };
}
