import { ToolError } from "@pleach/core";

/**
 * How a command's text reaches the shell that runs it, in every mode (bubblewrap, Seatbelt,
 * `danger-full-access`): as its argument (`/bin/bash -c <command>`) when it is short, else read by
 * the shell from a file descriptor, because Linux refuses an argument longer than 128 KiB
 * (`spawn E2BIG`).
 *
 * Short commands keep `bash -c <command>` exactly: bash runs a lone simple command in place of
 * itself, so its signal, messages and process tree are what they always were. A long one is read
 * whole (`read -d ''` reads to the end, the command has no NUL), the descriptor closed, and the
 * text run by `eval` in the same shell: `$0` is still `/bin/bash`, there are no positional
 * parameters, and stdin is the command's own.
 */

/** The shell every command runs in. */
export const SHELL = "/bin/bash";

/** The longest command `exec` runs, in bytes of UTF-8; a longer one is refused (`INVALID_INPUT`). */
export const MAX_COMMAND_BYTES = 1024 * 1024;

/** The longest command given to the shell as its argument; a longer one is read from a descriptor. */
const MAX_ARGUMENT_BYTES = 64 * 1024;

/** Refuse a command longer than {@link MAX_COMMAND_BYTES}, saying what to do instead. */
export function checkCommandLength(command: string): void {
  const bytes = Buffer.byteLength(command);
  if (bytes > MAX_COMMAND_BYTES) {
    throw new ToolError(
      "INVALID_INPUT",
      `the command is ${bytes} bytes, longer than the ${MAX_COMMAND_BYTES} bytes (1 MiB) a command may be; ` +
        "write the script to a file with write_file and run that file instead",
      { details: { bytes, maxBytes: MAX_COMMAND_BYTES } },
    );
  }
}

/** Whether `command` is given to the shell as its argument (no descriptor needed). */
export function fitsInArgument(command: string): boolean {
  return Buffer.byteLength(command) <= MAX_ARGUMENT_BYTES;
}

/** How the shell runs a command: its arguments after `/bin/bash`, and what to feed it on `fd`. */
export interface ShellCommand {
  args: string[];
  /** The command's text, to give the shell on the descriptor its arguments name; absent when short. */
  input?: Uint8Array;
}

/**
 * The arguments that make `/bin/bash` run `command`, reading it from descriptor `fd` (past stdio
 * and the launcher's own inputs) when it is too long for an argument.
 */
export function shellCommand(command: string, fd: number): ShellCommand {
  if (fitsInArgument(command)) return { args: ["-c", command] };
  const script =
    `IFS= read -r -d '' -u ${fd} PLEACH_COMMAND; exec ${fd}<&-; ` +
    `[ -n "$PLEACH_COMMAND" ] || { echo "pleach: the command did not arrive on fd ${fd}" >&2; exit 126; }; ` +
    `eval "unset PLEACH_COMMAND; $PLEACH_COMMAND"`;
  return { args: ["-c", script], input: Buffer.from(command) };
}
