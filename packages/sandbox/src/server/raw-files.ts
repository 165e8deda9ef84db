import type { SandboxMode } from "@pleach/coding-agent/sandbox";
import { ToolError } from "@pleach/core";
import { confinePathSync } from "../paths.js";
import type { SpareBuffer } from "../spare-buffer.js";
import { readConfinedFile, refuseWrite, writeConfinedFile } from "../workspace-files.js";

/**
 * A sandbox's files as bytes, for the server's file route: the local client's `readFile` and
 * `writeFile` (the same confinement, modes, protected paths, limits, atomic write and codes, from
 * the same code), without the string in between, so the bytes go from the file to the socket and
 * back with no decode, no encode and no large string left for the garbage collector.
 */
export interface RawFiles {
  /** The file's bytes, in a buffer of `spare` (give it back once they are sent). */
  read(filePath: unknown): Promise<Buffer>;
  write(filePath: unknown, bytes: Buffer): Promise<void>;
}

export function createRawFiles({
  rootReal,
  rootGiven,
  mode,
  maxFileBytes,
  spare,
}: {
  /** The workspace's real path (the local client's `root`). */
  rootReal: string;
  /** The workspace as it was given, for absolute paths spelled through a link. */
  rootGiven: string;
  mode: SandboxMode;
  maxFileBytes: number;
  /** Where reads get their buffer. */
  spare: SpareBuffer;
}): RawFiles {
  const confine = (requested: unknown) => {
    if (requested === "") throw new ToolError("INVALID_PATH", "the path is empty");
    return confinePathSync(rootReal, rootGiven, requested);
  };
  return {
    async read(filePath) {
      const confined = confine(filePath);
      return readConfinedFile(confined, confined.requested, maxFileBytes, spare);
    },
    async write(filePath, bytes) {
      const confined = confine(filePath);
      refuseWrite(mode, confined);
      await writeConfinedFile(confined, confined.requested, bytes);
    },
  };
}
