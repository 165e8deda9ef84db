import type { SandboxMode } from "@pleach/core";
import { isToolError } from "@pleach/core";
import {
  createLocalSandbox,
  type LocalSandbox,
  type LocalSandboxOptions,
  type NetworkOption,
} from "@pleach/sandbox";
import { type CliIo, UsageError } from "./cli-support.js";
import type { ReadFlags } from "./read-flags.js";

/** Open the workspace the options name as a local sandbox. */
export async function openWorkspace({
  workspace,
  mode,
  network = false,
  reads = { hideReads: [], allowReads: [] },
  io,
  command,
  session = false,
}: {
  workspace: string | undefined;
  mode: SandboxMode;
  /**
   * Make the client a session (`session` of `createLocalSandbox`): one sandbox for all its
   * commands and background jobs, until `close()`, with its options (`publish`). @default false
   */
  session?: LocalSandboxOptions["session"];
  /** `--network` or the domains (`parseNetworkFlags`). @default false */
  network?: NetworkOption | undefined;
  /** `--hide-read` and `--allow-read` (`parseReadFlags`). @default none */
  reads?: ReadFlags;
  io: CliIo;
  /** The command whose help a wrong `--workspace` points at. */
  command: string;
}): Promise<LocalSandbox> {
  const root = workspace ?? io.cwd;
  try {
    return await createLocalSandbox({ root, mode, network, ...reads, session });
  } catch (error) {
    if (isToolError(error) && (error.code === "NOT_FOUND" || error.code === "NOT_A_DIRECTORY")) {
      throw new UsageError(
        `the workspace ${root} is not an existing folder (${error.message}); pass --workspace DIR or run pleach in the folder to work on`,
        { command },
      );
    }
    throw error;
  }
}
