import { defineTool, type PluginToolDefinition, ToolError } from "@pleach/core";
import { z } from "zod";
import type { SandboxClient } from "../../sandbox/index.js";
import { TOLERANCE_PHRASES } from "../diff/locate.js";
import { placementNotes } from "../diff/placement-notes.js";
import { findClosestRegion } from "../shared/closest-region.js";
import { LineIndex } from "../shared/line-numbers.js";
import { lineSpan } from "../shared/line-span.js";
import { readTextFile } from "../shared/read-text-file.js";
import {
  readPreviousText,
  rejectSyntaxErrorsDescription,
  SYNTAX_CHECK_DESCRIPTION,
  syntaxCheckBeforeWrite,
  syntaxCheckUnavailableSchema,
  syntaxErrorNotes,
  syntaxErrorsSchema,
} from "../syntax/syntax-check.js";
import { locateEdit } from "./locate-edit.js";
import {
  describeAmbiguous,
  describeNoMatch,
  describeTolerantMatch,
  onlyTolerance,
} from "./messages.js";

/** Whether an `old` not found exactly is placed with tolerances unless `tolerant` says otherwise. */
const TOLERANT_BY_DEFAULT = true;

const editSchema = z
  .object({
    old: z
      .string()
      .min(1)
      .describe("Text that occurs exactly once in the original file, copied exactly."),
    new: z.string().describe("The text to put in its place."),
  })
  .strict();

/** The input of `edit_file`. */
export const editFileInputSchema = z
  .object({
    path: z.string().min(1).describe("The file to edit, relative to the workspace root."),
    old: z
      .string()
      .optional()
      .describe(
        "The exact text to replace, copied from the file with its indentation and line endings; it must occur exactly once, so include enough surrounding lines to make it unique. Empty: create the file, or overwrite it whole, with `new`.",
      ),
    new: z
      .string()
      .optional()
      .describe("The text that replaces `old`; required whenever `old` is given."),
    edits: z
      .array(editSchema)
      .min(1)
      .optional()
      .describe(
        "Instead of `old` and `new`: several replacements in one file. Each `old` must occur exactly once in the ORIGINAL file and the edits must not overlap; either all are applied or none.",
      ),
    tolerant: z
      .boolean()
      .optional()
      .describe(
        "Default true: an `old` not found exactly is replaced where it fits one place only, once line endings, trailing whitespace, Unicode quotes/dashes or indentation are ignored, or with a slip (a typo in a line, a line or blank line left out, a line remembered from an older version, a change already made), and the output says which; the lines `old` and `new` share keep the file's text. `false`: only an exact match is replaced, and such a place is only reported.",
      ),
    rejectSyntaxErrors: z.boolean().optional().describe(rejectSyntaxErrorsDescription("edit")),
  })
  .strict()
  .superRefine((input, context) => {
    if (input.edits !== undefined) {
      if (input.old !== undefined || input.new !== undefined) {
        context.addIssue({
          code: "custom",
          path: ["edits"],
          message: "pass either `old` and `new`, or `edits`, not both",
        });
      }
      input.edits.forEach((edit, index) => {
        if (edit.old === edit.new) {
          context.addIssue({
            code: "custom",
            path: ["edits", index, "new"],
            message: "`old` and `new` are identical; this edit would change nothing",
          });
        }
      });
      return;
    }
    if (input.old === undefined) {
      context.addIssue({
        code: "custom",
        path: ["old"],
        message: "required (a string; empty to write the whole file), unless `edits` is given",
      });
    }
    if (input.new === undefined) {
      context.addIssue({
        code: "custom",
        path: ["new"],
        message: "required (a string), unless `edits` is given",
      });
    }
    if (input.old !== undefined && input.old !== "" && input.old === input.new) {
      context.addIssue({
        code: "custom",
        path: ["new"],
        message: "`old` and `new` are identical; the edit would change nothing",
      });
    }
  });

/** The output of `edit_file`. */
export const editFileOutputSchema = z.object({
  path: z.string().describe("The path as given."),
  action: z
    .enum(["edited", "wrote"])
    .describe("`edited`: replacements were made; `wrote`: an empty `old` wrote the whole file."),
  replacements: z
    .number()
    .int()
    .nonnegative()
    .describe("How many replacements were made (0 when the whole file was written)."),
  firstChangedLine: z
    .number()
    .int()
    .min(1)
    .describe(
      "The 1-based line where the first change starts (1 when the whole file was written).",
    ),
  tolerances: z
    .array(
      z.object({
        edit: z.number().int().nonnegative().describe("Index of the edit (0 for `old`/`new`)."),
        tolerance: z
          .enum([
            "exact",
            "line-endings",
            "trailing-whitespace",
            "unicode-punctuation",
            "indentation",
          ])
          .describe("How loosely the lines that matched were compared."),
        startLine: z.number().int().min(1),
        endLine: z.number().int().min(1),
        how: z
          .string()
          .describe(
            "What was tolerated, for the model: the comparison, and the slips taken (a line that differs by a small edit, a line left out, content already changed).",
          ),
      }),
    )
    .optional()
    .describe(
      "The edits whose `old` was not found exactly and was placed with tolerances, where, and how.",
    ),
  syntaxErrors: syntaxErrorsSchema,
  syntaxCheckUnavailable: syntaxCheckUnavailableSchema,
});

/** What `edit_file` accepts. */
export type EditFileInput = z.input<typeof editFileInputSchema>;
/** What `edit_file` returns. */
export type EditFileOutput = z.output<typeof editFileOutputSchema>;

/** Options of {@link createEditFileTool}. */
export interface EditFileToolOptions {
  /**
   * The most line comparisons spent looking for the region closest to an `old` that is not found.
   * @default 50_000
   */
  maxComparisons?: number;
  /**
   * The most lines of that region quoted in the error.
   * @default 20
   */
  maxQuotedLines?: number;
}

interface Located {
  index: number;
  start: number;
  end: number;
  replacement: string;
}

/**
 * `edit_file`, as the specification defines it: replace text that occurs exactly once, keeping
 * every other byte of the file (line endings, byte order mark, final newline) as it was. Zero
 * matches and several matches are refused with errors that show the model where to look (see
 * `edit-file-messages.ts`).
 */
export function createEditFileTool(
  client: SandboxClient,
  { maxComparisons = 50_000, maxQuotedLines = 20 }: EditFileToolOptions = {},
): PluginToolDefinition<typeof editFileInputSchema, typeof editFileOutputSchema> {
  return defineTool({
    name: "edit_file",
    description: [
      "Replace `old` with `new` in a file; `old` must appear exactly once.",
      "An empty `old` creates or overwrites the file with `new`.",
      "Copy `old` exactly from the file (indentation, blank lines, line endings) and include enough surrounding lines to make it unique.",
      "For several changes to one file pass `edits: [{ old, new }, ...]` instead: each `old` must occur exactly once in the original file, edits must not overlap, and either all apply or none.",
      "Everything outside the replaced text is kept byte for byte.",
      "If `old` is not found exactly but fits one place only once whitespace, line endings or Unicode punctuation are ignored, or despite a slip (a typo, a line left out, a line from an older version), it is replaced there and the output says how; pass `tolerant: false` to allow only an exact match. Otherwise the error quotes the closest region of the file with line numbers.",
      "If `old` is found several times the error lists the lines.",
      SYNTAX_CHECK_DESCRIPTION,
    ].join(" "),
    inputSchema: editFileInputSchema,
    outputSchema: editFileOutputSchema,
    annotations: { title: "Edit file", readOnlyHint: false, destructiveHint: true },
    files: { writes: ({ path }) => [path] },
    async execute(input) {
      const { path } = input;
      const syntaxCheck = (before: string | undefined, after: string) =>
        syntaxCheckBeforeWrite(
          { toolName: "edit_file", what: "edit", reject: input.rejectSyntaxErrors },
          [{ path, before, after }],
        );
      if (input.edits === undefined && input.old === "") {
        const content = input.new ?? "";
        const syntax = await syntaxCheck(await readPreviousText(client, path), content);
        await client.writeFile(path, content);
        return { path, action: "wrote" as const, replacements: 0, firstChangedLine: 1, ...syntax };
      }
      const edits = input.edits ?? [{ old: input.old ?? "", new: input.new ?? "" }];
      const text = await readTextFile(client, path, {
        toolName: "edit_file",
        missingHint: "To create the file, call edit_file with an empty `old` (or use write_file).",
      });
      const failure = (index: number, message: string) =>
        edits.length === 1
          ? `${message}\nNothing was changed.`
          : `edits[${index}]: ${message}\nNo edit was applied; the file is unchanged.`;
      let lineIndex: LineIndex | undefined;
      const lineAt = (offset: number) => {
        lineIndex ??= new LineIndex(text);
        return lineIndex.lineAt(offset);
      };

      const tolerances: NonNullable<EditFileOutput["tolerances"]> = [];
      const tolerant = input.tolerant ?? TOLERANT_BY_DEFAULT;
      const located: Located[] = edits.map((edit, index) => {
        const location = locateEdit(text, edit, { tolerant });
        if (location.status === "found") {
          const { start, end, replacement, tolerated } = location;
          if (tolerated !== undefined) {
            tolerances.push({
              edit: index,
              tolerance: tolerated.tolerance ?? "exact",
              startLine: lineAt(start),
              endLine: lineAt(Math.max(start, end - 1)),
              how: onlyTolerance(tolerated)
                ? TOLERANCE_PHRASES[tolerated.tolerance ?? "exact"]
                : `with tolerances: ${placementNotes(tolerated, { source: "`old`" }).join("; ")}`,
            });
          }
          return { index, start, end, replacement };
        }
        if (location.status === "ambiguous") {
          const lines = location.offsets.map(lineAt);
          throw new ToolError(
            "AMBIGUOUS_MATCH",
            failure(index, describeAmbiguous(path, location.offsets.length, lines)),
            { details: { editIndex: index, lines } },
          );
        }
        const region = findClosestRegion(text, edit.old, { maxComparisons });
        const message = [
          describeNoMatch(path, edit.old, text, region, maxQuotedLines),
          describeTolerantMatch(location.tolerant, !tolerant),
        ]
          .filter((part) => part !== "")
          .join("\n");
        throw new ToolError("NO_MATCH", failure(index, message), {
          details: {
            editIndex: index,
            closest:
              region === undefined
                ? undefined
                : {
                    startLine: region.startLine,
                    endLine: region.endLine,
                    difference: region.difference,
                    similarity: region.similarity,
                  },
          },
        });
      });

      located.sort((left, right) => left.start - right.start);
      for (let position = 1; position < located.length; position += 1) {
        const previous = located[position - 1];
        const current = located[position];
        if (previous === undefined || current === undefined || current.start >= previous.end) {
          continue;
        }
        const [a, b] = [previous, current].sort((left, right) => left.index - right.index);
        if (a === undefined || b === undefined) continue;
        const span = (edit: Located) => lineSpan(lineAt(edit.start), lineAt(edit.end - 1));
        throw new ToolError(
          "CONFLICT",
          `edits[${a.index}] (${span(a)}) and edits[${b.index}] (${span(b)}) overlap; each edit must change a separate part of the file. Merge them into one edit.\nNo edit was applied; the file is unchanged.`,
          { details: { editIndexes: [a.index, b.index] } },
        );
      }

      const pieces: string[] = [];
      let cursor = 0;
      for (const { start, end, replacement } of located) {
        pieces.push(text.slice(cursor, start), replacement);
        cursor = end;
      }
      pieces.push(text.slice(cursor));
      const edited = pieces.join("");
      // The check parses in a worker thread: unless it may refuse the edit, the write goes on
      // meanwhile.
      const checked = syntaxCheck(text, edited);
      if (input.rejectSyntaxErrors === true) await checked;
      const [syntax] = await Promise.all([checked, client.writeFile(path, edited)]);
      return {
        path,
        action: "edited" as const,
        replacements: located.length,
        firstChangedLine: lineAt(located[0]?.start ?? 0),
        ...(tolerances.length > 0 ? { tolerances } : {}),
        ...syntax,
      };
    },
    toModelOutput({
      path,
      action,
      replacements,
      firstChangedLine,
      tolerances = [],
      syntaxErrors,
      syntaxCheckUnavailable,
    }) {
      const syntaxNotes = syntaxErrorNotes("The edit", syntaxErrors, syntaxCheckUnavailable);
      if (action === "wrote") {
        return { output: [`wrote ${path}`, ...syntaxNotes].join("\n"), error: false };
      }
      const detail =
        replacements === 1
          ? `1 replacement at line ${firstChangedLine}`
          : `${replacements} replacements, the first at line ${firstChangedLine}`;
      const notes = tolerances.map(
        ({ edit, startLine, endLine, how }) =>
          `${replacements === 1 ? "`old`" : `edits[${edit}].old`} was not found exactly; it matched ${lineSpan(startLine, endLine)} ${how}, and was replaced there.`,
      );
      return {
        output: [`edited ${path} (${detail})`, ...notes, ...syntaxNotes].join("\n"),
        error: false,
      };
    },
  });
}
