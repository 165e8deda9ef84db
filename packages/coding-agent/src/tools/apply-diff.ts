import { defineTool, type PluginToolDefinition } from "@pleach/core";
import type { SandboxClient } from "../sandbox/index.js";
import { applyDiffModelOutput } from "./apply-diff-model-output.js";
import { applyWithPatch } from "./apply-diff-patch-engine.js";
import { applyWithEngine } from "./apply-diff-pleach-engine.js";
import { applyDiffInputSchema, applyDiffOutputSchema } from "./apply-diff-schema.js";
import { diffFileNames } from "./file-state.js";

export { APPLY_DIFF_PATCH_FILE } from "./apply-diff-patch-engine.js";
export type { ApplyDiffHunkReport, ApplyDiffInput, ApplyDiffOutput } from "./apply-diff-schema.js";
export { applyDiffInputSchema, applyDiffOutputSchema } from "./apply-diff-schema.js";

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
    annotations: { title: "Apply a diff", destructiveHint: true },
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
