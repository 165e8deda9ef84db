import type { ChildProcess } from "node:child_process";
import type { Writable } from "node:stream";

/**
 * Data a launcher reads from file descriptors past stdio (bubblewrap's seccomp filter, read from
 * fd 3; a long command's text, read by the shell): each is given as a pipe that gets the data and
 * is then closed, so the reader reads it to its end. It is written as the process starts, as fast
 * as the reader takes it (up to `MAX_COMMAND_BYTES`).
 */

/** The `stdio` entries of `spawn` for `inputs`, to follow the entries before them. */
export function inputPipes(inputs: readonly Uint8Array[] | undefined): "pipe"[] {
  return (inputs ?? []).map(() => "pipe");
}

/** Write each of `inputs` into its pipe of `child` (the first at fd `first`) and close it. */
export function feedInputs(
  child: ChildProcess,
  inputs: readonly Uint8Array[] | undefined,
  first = 3,
): void {
  (inputs ?? []).forEach((data, index) => {
    const pipe = child.stdio[first + index] as Writable | null | undefined;
    if (pipe == null) return;
    pipe.on("error", () => {
      // The launcher went away without reading it (it failed to start): its exit says why.
    });
    pipe.end(data);
    // Node's end of the pipe reads too: drained, it closes once the launcher has closed its end.
    (pipe as Writable & { resume?: () => void }).resume?.();
  });
}
