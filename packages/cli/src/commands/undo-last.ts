import { checkpointStep } from "@pleach/coding-agent/runtime";
import type { SandboxMode } from "@pleach/core";
import type { CliIo } from "../cli-support.js";
import { openWorkspace } from "../open-workspace.js";
import type { ReadFlags } from "../read-flags.js";

/**
 * `pleach run --undo-last`: bring the workspace back to the checkpoint taken before the last step
 * of the last run, files made since removed, and say what changed and how to undo the undo.
 * Exit code 0 when restored, 1 when there is nothing to restore.
 */
export async function undoLastStep({
  workspace,
  mode,
  reads,
  io,
  json,
}: {
  workspace: string | undefined;
  mode: SandboxMode;
  reads: ReadFlags;
  io: CliIo;
  json: boolean | undefined;
}): Promise<number> {
  const client = await openWorkspace({ workspace, mode, reads, io, command: "run" });
  try {
    const last = (await client.checkpoints.list()).find(
      (each) => checkpointStep(each.label) !== undefined,
    );
    if (last === undefined) {
      io.stderr(
        `pleach run --undo-last: no run of pleach took a checkpoint of ${client.root} yet (they are kept in this user's private state folder until the machine restarts)\n`,
      );
      return 1;
    }
    const restored = await client.checkpoints.restore(last.id);
    if (json) {
      io.stdout(`${JSON.stringify({ type: "restored", label: last.label, ...restored })}\n`);
      return 0;
    }
    const list = (paths: readonly string[]) => (paths.length === 0 ? "none" : paths.join(", "));
    io.stdout(
      [
        `pleach run --undo-last: ${client.root} is back as it was before ${last.label} of the last run (checkpoint ${last.id.slice(0, 12)}, ${new Date(last.createdAt).toISOString()}).`,
        `  written back: ${list(restored.written)}`,
        `  removed: ${list(restored.removed)}`,
        ...restored.skipped.map(({ path, reason }) => `  left as it is: ${path}: ${reason}`),
        `What it replaced is checkpoint ${restored.undo}: restore it with checkpoints.restore() of the library to undo this.`,
        "",
      ].join("\n"),
    );
    return 0;
  } finally {
    await client.close();
  }
}
