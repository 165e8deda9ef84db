import { z } from "zod";
import {
  rejectSyntaxErrorsDescription,
  syntaxCheckUnavailableSchema,
  syntaxErrorsSchema,
} from "../syntax/syntax-check.js";

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
          "start with a space (context), `-` (removed) or `+` (added). Or a V4A patch " +
          '(`*** Begin Patch` ... `*** End Patch`, OpenAI\'s apply_patch format) with path ".".',
      ),
    engine: z
      .enum(["pleach", "patch"])
      .optional()
      .describe(
        'How to apply: "pleach" (default) locates each hunk by its content, all hunks or none; "patch" runs GNU `patch -p0` in the workspace (with its fuzz; it may apply some hunks and not others).',
      ),
    partial: z
      .boolean()
      .optional()
      .describe(
        "pleach engine only: apply the hunks that fit even when others conflict (default false: nothing is written unless every hunk applies).",
      ),
    rejectSyntaxErrors: z
      .boolean()
      .optional()
      .describe(`pleach engine only. ${rejectSyntaxErrorsDescription("diff")}`),
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
  similarLines: z
    .array(z.number().int())
    .optional()
    .describe(
      "1-based lines of the file that differ from the diff's line by a small edit (a typo) and were taken as that line: kept if context, removed if removed.",
    ),
  missingLines: z
    .array(z.number().int())
    .optional()
    .describe("1-based lines of the file that the diff's context left out; kept as they are."),
  unmatchedContext: z
    .number()
    .int()
    .optional()
    .describe(
      "Context lines of the diff that the file does not have (remembered from an older version), left out.",
    ),
  appliedLines: z
    .array(z.number().int())
    .optional()
    .describe("1-based lines of the file that already read as one of the hunk's changes; kept."),
  blankLinesRemoved: z
    .array(z.number().int())
    .optional()
    .describe(
      "1-based blank lines of the file the diff left out between two of its removed lines; removed with them.",
    ),
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
  syntaxErrors: syntaxErrorsSchema,
  syntaxCheckUnavailable: syntaxCheckUnavailableSchema,
});

/** Input of `apply_diff`. */
export type ApplyDiffInput = z.input<typeof applyDiffInputSchema>;
/** Output of `apply_diff`. */
export type ApplyDiffOutput = z.output<typeof applyDiffOutputSchema>;
/** What happened to one hunk, in {@link ApplyDiffOutput}. */
export type ApplyDiffHunkReport = z.output<typeof hunkReportSchema>;
