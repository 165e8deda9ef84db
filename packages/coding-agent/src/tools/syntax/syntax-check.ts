import { Buffer } from "node:buffer";
import { isToolError, ToolError } from "@pleach/core";
import { z } from "zod";
import type { SandboxClient } from "../../sandbox/index.js";
import { parserFor, syntaxLanguageOf } from "./grammars.js";
import { errorsAcrossEdit } from "./kept-trees.js";
import { introducedErrors } from "./syntax-errors.js";

/** Files larger than this, before or after the change, are not checked. */
export const MAX_SYNTAX_CHECK_BYTES = 1024 * 1024;

/** How many of a file's new errors the output lists; the count says how many there are. */
const LISTED_ERRORS = 5;

/** The `syntaxErrors` output field shared by `write_file`, `edit_file` and `apply_diff`. */
export const syntaxErrorsSchema = z
  .array(
    z.object({
      path: z.string().describe("The file, as the tool named it."),
      count: z.number().int().min(1).describe("How many lines hold an error the change made."),
      errors: z
        .array(
          z.object({
            line: z.number().int().min(1).describe("1-based line of the error."),
            message: z.string().describe('What the parser found, e.g. `missing "}"`.'),
          }),
        )
        .describe(`The first ${LISTED_ERRORS} of them, by line.`),
    }),
  )
  .optional()
  .describe(
    "The files the change left with syntax errors they did not have before (JavaScript, TypeScript, TSX, JSON, Python, Go, Rust, CSS, HTML, YAML); absent when none.",
  );

/** The syntax errors a change made in one file (an entry of the `syntaxErrors` output). */
export type FileSyntaxErrors = NonNullable<z.output<typeof syntaxErrorsSchema>>[number];

/** The sentence of each writing tool's description that tells the model about the check. */
export const SYNTAX_CHECK_DESCRIPTION =
  "A written JavaScript, TypeScript, JSON, Python, Go, Rust, CSS, HTML or YAML file is parsed: syntax errors the change introduced are listed in the result (pass rejectSyntaxErrors: true to refuse such a change instead).";

/** The description of the opt-in `rejectSyntaxErrors` input; `what` is "edit", "diff" or "write". */
export function rejectSyntaxErrorsDescription(what: string): string {
  return `Refuse the ${what}, writing nothing, when it would leave a JavaScript, TypeScript, TSX, JSON, Python, Go, Rust, CSS, HTML or YAML file with a syntax error it did not have before (default false: the ${what} is written and the result lists the new errors).`;
}

/** One file a tool is about to write: its text before (`""` when new) and after. */
export interface SyntaxChange {
  path: string;
  /** The text before the change; `undefined` when it could not be read (the file is not checked). */
  before: string | undefined;
  /** The text to be written; `null` when the file is deleted (not checked). */
  after: string | null;
}

/**
 * The syntax errors each change introduces, for files in a language with a grammar here (by
 * extension). Runs on the host over the texts the tool holds; never runs anything of the
 * workspace. A file without a grammar, over {@link MAX_SYNTAX_CHECK_BYTES}, or whose grammar
 * cannot load is passed over silently. The text after is parsed first, and the text before only
 * when that has errors (see {@link errorsAcrossEdit} for the trees kept between edits).
 */
async function checkSyntax(changes: readonly SyntaxChange[]): Promise<FileSyntaxErrors[]> {
  const reports: FileSyntaxErrors[] = [];
  for (const { path, before, after } of changes) {
    const language = syntaxLanguageOf(path);
    if (language === undefined || before === undefined || after === null) continue;
    if (tooLarge(before) || tooLarge(after)) continue;
    const parser = await parserFor(language);
    if (parser === undefined) continue;
    const errors = errorsAcrossEdit(parser, `${language}:${path}`, before, after);
    if (errors === undefined || errors === "clean") continue;
    const introduced = introducedErrors(
      { text: before, errors: errors.before },
      { text: after, errors: errors.after },
    );
    if (introduced.length === 0) continue;
    reports.push({ path, count: introduced.length, errors: introduced.slice(0, LISTED_ERRORS) });
  }
  return reports;
}

/**
 * What a tool about to write `changes` adds to its output: `{ syntaxErrors }` when the changes
 * introduce syntax errors, else nothing. With `reject`, such changes are refused instead (the
 * caller has written nothing yet).
 */
export async function syntaxCheckBeforeWrite(
  { toolName, what, reject = false }: { toolName: string; what: string; reject?: boolean },
  changes: readonly SyntaxChange[],
): Promise<{ syntaxErrors?: FileSyntaxErrors[] }> {
  const syntaxErrors = await checkSyntax(changes);
  if (syntaxErrors.length === 0) return {};
  if (reject) throw syntaxErrorRefusal(toolName, what, syntaxErrors);
  return { syntaxErrors };
}

/**
 * The text of `path` before a tool replaces it whole, for {@link checkSyntax}: `""` when the file
 * does not exist, `undefined` when it cannot be read as text (or has no grammar here, so the read
 * is skipped).
 */
export async function readPreviousText(
  client: SandboxClient,
  path: string,
): Promise<string | undefined> {
  if (syntaxLanguageOf(path) === undefined) return undefined;
  try {
    return await client.readFile(path, { maxBytes: MAX_SYNTAX_CHECK_BYTES });
  } catch (error) {
    return isToolError(error) && error.code === "NOT_FOUND" ? "" : undefined;
  }
}

function tooLarge(text: string): boolean {
  // A UTF-16 unit is at most 3 bytes of UTF-8, so short texts skip the count.
  return (
    text.length * 3 > MAX_SYNTAX_CHECK_BYTES && Buffer.byteLength(text) > MAX_SYNTAX_CHECK_BYTES
  );
}

/** `a syntax error in a.ts at line 3 (missing "}")`, or `4 syntax errors in a.ts: line 3 (…), …`. */
function describeFile({ path, count, errors }: FileSyntaxErrors): string {
  const [first] = errors;
  if (count === 1 && first !== undefined) {
    return `a syntax error in ${path} at line ${first.line} (${first.message})`;
  }
  const listed = errors.map(({ line, message }) => `line ${line} (${message})`).join(", ");
  const more = count > errors.length ? ` and ${count - errors.length} more` : "";
  return `${count} syntax errors in ${path}: ${listed}${more}`;
}

/**
 * The lines a model reads after a change that left syntax errors, one per file, `subject` naming
 * the change ("The edit"); none when there were none.
 */
export function syntaxErrorNotes(
  subject: string,
  reports: readonly FileSyntaxErrors[] = [],
): string[] {
  return reports.map((report) => {
    const them = report.count === 1 ? "it" : "them";
    return `${subject} left ${describeFile(report)}; fix ${them} before running the code.`;
  });
}

/**
 * The refusal of a change under `rejectSyntaxErrors`, naming each file and line; `what` is "edit",
 * "diff" or "write".
 */
function syntaxErrorRefusal(
  toolName: string,
  what: string,
  reports: readonly FileSyntaxErrors[],
): ToolError {
  const files = reports.map(describeFile).join("; ");
  return new ToolError(
    "SYNTAX_ERROR",
    `${toolName} refused the ${what}: it would leave ${files}. Nothing was written. Correct the ${what} so the code parses and send it again, or leave out rejectSyntaxErrors to write it as it is.`,
    { details: { syntaxErrors: reports } },
  );
}
