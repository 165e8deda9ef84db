import { defineTool, type PluginToolDefinition } from "@pleach/core";
import { z } from "zod";
import type { SandboxClient } from "../sandbox/index.js";
import { applyDiffModelOutput } from "./apply-diff-model-output.js";
import { applyWithPatch } from "./apply-diff-patch-engine.js";
import { applyWithEngine } from "./apply-diff-pleach-engine.js";
import { diffFileNames } from "./file-state.js";

export { APPLY_DIFF_PATCH_FILE } from "./apply-diff-patch-engine.js";

/** Input of `apply_diff`. */
export const applyDiffInputSchema = z
  .object({
    path: z
      .string()
      .min(1)
      .describe(
        'The file to patch, relative to the workspace root; it wins over the file names in the diff\'s ---/+++ lines. "." applies the diff to the files its headers name (needed for a diff of several files, or one that creates or deletes a file).',
      ),
    diff: z
      .string()
      .describe(
        "A unified diff, as `diff -u` or `git diff` print it: optional `--- a/file`/`+++ b/file` " +
          "lines, then hunks that start with `@@ -start,count +start,count @@` and whose lines " +
          "start with a space (context), `-` (removed) or `+` (added).",
      ),
    engine: z
      .enum(["pleach", "patch"])
      .optional()
      .describe(
        'How to apply: "pleach" (default) locates each hunk by its content, all hunks or none; "patch" runs GNU `patch -p0` in the workspace (seed protocol: fuzz, partial application).',
      ),
    partial: z
      .boolean()
      .optional()
      .describe(
        "pleach engine only: apply the hunks that fit even when others conflict (default false: nothing is written unless every hunk applies).",
      ),
  })
  .strict();

const hunkReportSchema = z.object({
  file: z.string().describe("The file the hunk belongs to."),
  hunk: z.number().int().min(1).describe("The hunk's number within its file, as in `Hunk #N`."),
  status: z
    .enum(["applied", "already-applied", "conflict", "skipped"])
    .describe(
      "`already-applied`: its new text is in the file and its old text is not, so it was left alone; `skipped`: it fit, but another hunk conflicted and nothing was written.",
    ),
  line: z.number().int().optional().describe("1-based line of the original file where it landed."),
  offset: z.number().int().optional().describe("`line` minus the line its @@ header gave."),
  tolerance: z
    .enum(["exact", "line-endings", "trailing-whitespace", "unicode-punctuation", "indentation"])
    .optional()
    .describe("How loosely lines were compared to locate it."),
  contextDropped: z
    .number()
    .int()
    .optional()
    .describe("Outer context lines left out to locate it."),
  chosenByHint: z
    .boolean()
    .optional()
    .describe("Its text matched several places and the @@ line number chose one."),
  message: z.string().optional().describe("Why it conflicted."),
});

/** Output of `apply_diff`. */
export const applyDiffOutputSchema = z.object({
  hunksApplied: z.number().int().nonnegative().describe("How many hunks were applied and written."),
  conflicts: z
    .array(z.string())
    .describe(
      "One `Hunk #N FAILED ...` line per hunk that did not apply (with the patch engine, `patch`'s own lines). Empty when every hunk applied.",
    ),
  hunks: z
    .array(hunkReportSchema)
    .optional()
    .describe("pleach engine: where each hunk landed and how."),
  files: z
    .array(
      z.object({
        path: z.string(),
        action: z.enum(["modified", "created", "deleted", "unchanged"]),
      }),
    )
    .optional()
    .describe("pleach engine: what happened to each file of the diff."),
});

/** Input of `apply_diff`. */
export type ApplyDiffInput = z.input<typeof applyDiffInputSchema>;
/** Output of `apply_diff`. */
export type ApplyDiffOutput = z.output<typeof applyDiffOutputSchema>;
/** What happened to one hunk, in {@link ApplyDiffOutput}. */
export type ApplyDiffHunkReport = z.output<typeof hunkReportSchema>;

/** Options of {@link createApplyDiffTool}. */
export interface ApplyDiffToolOptions {
  /**
   * How long `patch` (the "patch" engine) or `rm` (a deleted file) may run, in milliseconds.
   * @default 60_000
   */
  timeoutMs?: number;
}

const DESCRIPTION = `Apply a unified diff to workspace files.

Give the file's path and a diff of it (\`--- a/file\`/\`+++ b/file\` lines optional; hunks starting \`@@ -start,count +start,count @@\`; wrong or missing line numbers and counts are tolerated). Each hunk is found by its content: the line numbers only choose between several equally good places. Small differences in the context are tolerated and reported (line endings, trailing whitespace, curly quotes, indentation, an outer context line that no longer matches). A hunk whose text matches several places is refused rather than guessed; add context lines that occur only where you mean. A hunk already present is reported, not applied twice. The file keeps its line endings, byte order mark and final newline.

All or nothing: if any hunk conflicts nothing is written (pass partial: true to apply the others). For a diff of several files, or one that creates (--- /dev/null) or deletes (+++ /dev/null) files, pass path ".". On conflicts, read the file again and send a corrected diff, or use edit_file. engine: "patch" runs GNU patch instead.`;

/**
 * Create the specification's `apply_diff` tool.
 *
 * The default engine ("pleach", see {@link applyWithEngine}) runs in-process over the client's
 * `readFile`/`writeFile`, so the sandbox needs no `patch`: every hunk of every file is placed
 * before anything is written. `engine: "patch"` (see {@link applyWithPatch}) keeps the
 * specification's wire protocol and runs GNU `patch -p0` in the workspace.
 */
export function createApplyDiffTool(
  client: SandboxClient,
  { timeoutMs = 60_000 }: ApplyDiffToolOptions = {},
): PluginToolDefinition<typeof applyDiffInputSchema, typeof applyDiffOutputSchema> {
  return defineTool({
    name: "apply_diff",
    description: DESCRIPTION,
    inputSchema: applyDiffInputSchema,
    outputSchema: applyDiffOutputSchema,
    annotations: { destructiveHint: true },
    // "." means the files the diff's headers name; any other path is the one file it changes.
    files: {
      writes: ({ path: target, diff }) =>
        target === "." || target === "./" ? diffFileNames(diff) : [target],
    },
    async execute(
      { path: requestedPath, diff, engine = "pleach", partial = false },
      { abortSignal },
    ) {
      if (engine === "pleach") {
        return applyWithEngine(client, { requestedPath, diff, partial, timeoutMs, abortSignal });
      }
      return applyWithPatch(client, { requestedPath, diff, timeoutMs, abortSignal });
    },
    toModelOutput: applyDiffModelOutput,
  });
}
