import path from "node:path";
import { defineTool, type PluginToolDefinition, ToolError } from "@pleach/core";
import type { SandboxClient } from "../../sandbox/index.js";
import { diffFileNames } from "../shared/file-state.js";
import {
  readPreviousText,
  SYNTAX_CHECK_DESCRIPTION,
  syntaxCheckBeforeWrite,
} from "../syntax/syntax-check.js";
import { applyDiffModelOutput } from "./model-output.js";
import { applyWithPatch } from "./patch-engine.js";
import { applyWithEngine } from "./pleach-engine.js";
import { applyDiffInputSchema, applyDiffOutputSchema } from "./schema.js";

export { APPLY_DIFF_PATCH_FILE } from "./patch-engine.js";
export type { ApplyDiffHunkReport, ApplyDiffInput, ApplyDiffOutput } from "./schema.js";
export { applyDiffInputSchema, applyDiffOutputSchema } from "./schema.js";

/** Options of {@link createApplyDiffTool}. */
export interface ApplyDiffToolOptions {
  /**
   * How long `patch` (the "patch" engine) or `rm` (a deleted file) may run, in milliseconds.
   * @default 60_000
   */
  timeoutMs?: number;
}

const DESCRIPTION = [
  "Apply a unified diff (as `git diff` or `diff -u` print it: `@@ -start,count +start,count @@` hunks of context, `-` and `+` lines) to a workspace file: give that file's `path`.",
  'It also takes a V4A patch (OpenAI\'s apply_patch format: `*** Begin Patch`, `*** Add File: <path>` with + lines, `*** Delete File: <path>`, `*** Update File: <path>` (optionally `*** Move to: <path>`) with changes that start with `@@` or `@@ <a line above the change, such as its function>`, `*** End of File`, `*** End Patch`) with path "."; its changes are found in order, each after the one before and after its @@ lines, and an added file replaces one that exists.',
  'For a diff of several files, or one that creates (`--- /dev/null`) or deletes (`+++ /dev/null`) a file, pass path "." and the files named in its `---`/`+++` lines are changed (`a/` and `b/` prefixes stripped, either way round, so `git diff -R` output works too).',
  "Each hunk is found by its content: wrong or missing line numbers and counts are tolerated and only choose between equally good places; small differences (line endings, trailing whitespace, curly quotes, indentation in another style, an outer context line that no longer matches, a typo in a context or removed line, a context line left out) are tolerated when the hunk still fits one place only, and reported; added lines take the file's indentation style.",
  "A hunk whose text matches several places is refused rather than guessed (add context lines that occur only where you mean), and a hunk already present is reported, not applied twice. The file keeps its line endings, byte order mark and final newline.",
  "All or nothing: if any hunk conflicts, nothing is written and the result is an error listing each failed hunk (`Hunk #N FAILED ...`) with the closest region of the file and the line that differs; read the file again and send a corrected diff, or use edit_file (`partial: true` applies the hunks that fit and reports the rest).",
  'A diff without hunks, or of several files without path ".", is refused with what to send instead. `engine: "patch"` runs GNU `patch -p0` on the one file instead (with its fuzz, it may apply some hunks and not others).',
  SYNTAX_CHECK_DESCRIPTION,
].join(" ");

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
      { path: requestedPath, diff, engine = "pleach", partial = false, rejectSyntaxErrors = false },
      { abortSignal },
    ) {
      if (engine === "pleach") {
        return applyWithEngine(client, {
          requestedPath,
          diff,
          partial,
          rejectSyntaxErrors,
          timeoutMs,
          abortSignal,
        });
      }
      if (rejectSyntaxErrors) {
        throw new ToolError(
          "INVALID_INPUT",
          'rejectSyntaxErrors needs engine "pleach", which checks the files before writing them; `patch` writes as it goes. Leave out engine, or leave out rejectSyntaxErrors.',
        );
      }
      // `patch` changes the file itself: its text is read before and after to check it.
      const target = path.posix.normalize(requestedPath);
      const before = await readPreviousText(client, target);
      const output = await applyWithPatch(client, { requestedPath, diff, timeoutMs, abortSignal });
      const after = before === undefined ? undefined : await readPreviousText(client, target);
      if (after === undefined || output.hunksApplied === 0) return output;
      const syntax = await syntaxCheckBeforeWrite({ toolName: "apply_diff", what: "diff" }, [
        { path: target, before, after },
      ]);
      return { ...output, ...syntax };
    },
    toModelOutput: applyDiffModelOutput,
  });
}
