import { isToolError } from "@pleach/core";
import type { SandboxClient } from "../../sandbox/index.js";
import { reportedPath } from "./output-text.js";

/**
 * A search met a hidden file: the sandbox's read policy (`--hide-read`, the credential stores)
 * makes it unreadable for commands, so ripgrep and grep print `./.env: Permission denied (os error
 * 13)` or `grep: ./.env: Permission denied` (Seatbelt: `Operation not permitted`) and exit 2. Such
 * a file is skipped and counted, not a failure; a file unreadable for another reason still is one.
 * Which is which the client says, from the same hidden-path computation that confines commands: its
 * `readFile` refuses a hidden path with `HIDDEN_PATH` (or `PROTECTED_PATH` naming the hidden rule
 * too), and it is asked for 0 bytes, so a readable file is refused from its size, unread.
 */

/** The error line of a file a search could not open, and the path it printed. */
const UNREADABLE =
  /^(?:grep: )?(.+): (?:Permission denied|Operation not permitted)(?: \(os error \d+\))?$/;

/** The most unreadable paths asked about per search; the lines past it stay errors. */
const MAX_ASKED = 1_000;

/** What {@link skipHidden} made of a search's stderr. */
export interface HiddenSkips {
  /** Hidden files and folders the search met. */
  hidden: number;
  /** The rest of stderr: the error lines that are not about a hidden path. */
  stderr: string;
}

/** Count the hidden paths the error lines of `stderr` name, and drop their lines from it. */
export async function skipHidden(
  client: SandboxClient,
  stderr: string,
  { prefix, abortSignal }: { prefix: string; abortSignal: AbortSignal | undefined },
): Promise<HiddenSkips> {
  const kept: string[] = [];
  let hidden = 0;
  let asked = 0;
  for (const line of stderr.split("\n")) {
    const printed = UNREADABLE.exec(line)?.[1];
    if (printed === undefined || asked >= MAX_ASKED || abortSignal?.aborted === true) {
      if (line !== "") kept.push(line);
      continue;
    }
    asked += 1;
    if (await isHidden(client, reportedPath(prefix, printed))) hidden += 1;
    else kept.push(line);
  }
  return { hidden, stderr: kept.join("\n") };
}

async function isHidden(client: SandboxClient, filePath: string): Promise<boolean> {
  try {
    await client.readFile(filePath, { maxBytes: 0 });
    return false;
  } catch (error) {
    if (!isToolError(error)) return false;
    return (
      error.code === "HIDDEN_PATH" ||
      (error.code === "PROTECTED_PATH" && error.details?.hidden !== undefined)
    );
  }
}
