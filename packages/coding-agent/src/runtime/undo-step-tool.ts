import { defineTool, type PluginToolDefinition, ToolError } from "@pleach/core";
import type { SandboxCheckpoints } from "@pleach/core/sandbox";
import { z } from "zod";

/** The label of the checkpoint the runtime takes before step `step`'s tool calls. */
export function stepCheckpointLabel(step: number): string {
  return `step ${step}`;
}

/** The step a checkpoint's label says it was taken before, or `undefined` for another label. */
export function checkpointStep(label: string): number | undefined {
  const match = /^step ([1-9][0-9]*)$/.exec(label);
  return match === null ? undefined : Number(match[1]);
}

/** The input of `undo_step`. */
export const undoStepInputSchema = z
  .object({
    step: z
      .number()
      .int()
      .min(1)
      .describe(
        "The step to undo, with every later one: the workspace goes back as it was before that step's tool calls ran.",
      ),
  })
  .strict();

/** The output of `undo_step`. */
export const undoStepOutputSchema = z.object({
  step: z.number().describe("The step undone, with every later one."),
  written: z.array(z.string()).describe("Files written back as they were."),
  removed: z.array(z.string()).describe("Files removed: made since."),
  skipped: z
    .array(z.object({ path: z.string(), reason: z.string() }))
    .describe("Paths left as they are, and why."),
});

/**
 * `undo_step`: the runtime's tool for a model to roll back its own steps, over the checkpoints the
 * runtime took before each step (`taken`, by step).
 */
export function createUndoStepTool(
  checkpoints: SandboxCheckpoints,
  taken: ReadonlyMap<number, string>,
): PluginToolDefinition<typeof undoStepInputSchema, typeof undoStepOutputSchema> {
  return defineTool({
    name: "undo_step",
    description:
      "Undo the changes to the workspace's files of one of your earlier steps (a step is one of your replies with its tool calls) and of every step after it: files come back byte for byte as they were before that step's tool calls ran, files made since are removed. Files ignored by .gitignore, nested git repositories and what commands started (background jobs) are left as they are. Read the files again afterwards.",
    inputSchema: undoStepInputSchema,
    outputSchema: undoStepOutputSchema,
    annotations: { title: "Undo a step", destructiveHint: true, idempotentHint: true },
    async execute({ step }) {
      const checkpoint = taken.get(step);
      if (checkpoint === undefined) {
        const steps = [...taken.keys()];
        throw new ToolError(
          "INVALID_INPUT",
          `no checkpoint was taken before step ${step}; steps that can be undone: ${steps.join(", ") || "none yet"}`,
        );
      }
      const restored = await checkpoints.restore(checkpoint);
      return {
        step,
        written: restored.written,
        removed: restored.removed,
        skipped: restored.skipped,
      };
    },
    toModelOutput({ step, written, removed, skipped }) {
      const list = (paths: readonly string[]) => (paths.length === 0 ? "none" : paths.join(", "));
      return {
        output: [
          `the workspace is back as it was before step ${step}`,
          `written back: ${list(written)}`,
          `removed: ${list(removed)}`,
          ...skipped.map(({ path, reason }) => `left as it is: ${path}: ${reason}`),
        ].join("\n"),
        error: false,
      };
    },
  });
}
