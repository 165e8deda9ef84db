import { Buffer } from "node:buffer";
import { isToolError, ToolError } from "@pleach/core";
import { z } from "zod";
import type { SandboxClient } from "../../sandbox/index.js";
import { editCause } from "./edit-cause.js";
import { syntaxLanguageOf } from "./grammars.js";
import { introducedErrors } from "./syntax-errors.js";
import { checkInWorker } from "./syntax-worker-client.js";

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
      edit: z
        .object({
          startLine: z.number().int().min(1).describe("1-based first line the change wrote."),
          endLine: z.number().int().min(1).describe("1-based last line the change wrote."),
          changes: z
            .array(z.string())
            .describe(
              'What the change did that can break the syntax: `removed a "}", so the braces no longer balance`, an unclosed quote, indentation; empty when none of these.',
            ),
        })
        .optional()
        .describe("Where the change was, beside where the parser noticed the error."),
    }),
  )
  .optional()
  .describe(
    "The files the change left with syntax errors they did not have before (JavaScript, TypeScript, TSX, JSON, Python, Go, Rust, CSS, HTML, YAML); absent when none.",
  );

/** The `syntaxCheckUnavailable` output field shared by `write_file`, `edit_file` and `apply_diff`. */
export const syntaxCheckUnavailableSchema = z
  .array(
    z.object({
      path: z.string().describe("The file, as the tool named it."),
      reason: z.string().describe("Why its check could not run, e.g. it took too long."),
    }),
  )
  .optional()
  .describe(
    "Files whose syntax check could not run (diagnostics unavailable), with why: the change was written, unchecked. Absent when every file with a grammar was checked.",
  );

/** A file whose check could not run (an entry of the `syntaxCheckUnavailable` output). */
export type SyntaxCheckUnavailable = NonNullable<
  z.output<typeof syntaxCheckUnavailableSchema>
>[number];

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
 * extension), and the files whose check could not run. Parsed on the host over the texts the tool
 * holds, in a worker thread with a time and memory bound (see {@link checkInWorker}); never runs
 * anything of the workspace. A file without a grammar, over {@link MAX_SYNTAX_CHECK_BYTES}, or
 * whose grammar cannot load is passed over silently. The text after is parsed first, and the text
 * before only when that has errors (see `errorsAcrossEdit` for the trees kept between edits).
 */
async function checkSyntax(
  changes: readonly SyntaxChange[],
): Promise<{ reports: FileSyntaxErrors[]; unavailable: SyntaxCheckUnavailable[] }> {
  const reports: FileSyntaxErrors[] = [];
  const unavailable: SyntaxCheckUnavailable[] = [];
  for (const { path, before, after } of changes) {
    const language = syntaxLanguageOf(path);
    if (language === undefined || before === undefined || after === null) continue;
    if (tooLarge(before) || tooLarge(after)) continue;
    const check = await checkInWorker(language, `${language}:${path}`, before, after);
    if (check.kind === "unavailable") {
      unavailable.push({ path, reason: check.reason });
      continue;
    }
    if (check.kind === "no-grammar" || check.errors === "clean") continue;
    const { errors } = check;
    const introduced = introducedErrors(
      { text: before, errors: errors.before },
      { text: after, errors: errors.after },
    );
    if (introduced.length === 0) continue;
    const edit = editCause(before, after, language);
    reports.push({
      path,
      count: introduced.length,
      errors: introduced.slice(0, LISTED_ERRORS),
      ...(edit === undefined ? {} : { edit }),
    });
  }
  return { reports, unavailable };
}

/**
 * What a tool about to write `changes` adds to its output: `{ syntaxErrors }` when the changes
 * introduce syntax errors, else nothing. With `reject`, such changes are refused instead (the
 * caller has written nothing yet).
 */
export async function syntaxCheckBeforeWrite(
  { toolName, what, reject = false }: { toolName: string; what: string; reject?: boolean },
  changes: readonly SyntaxChange[],
): Promise<{
  syntaxErrors?: FileSyntaxErrors[];
  syntaxCheckUnavailable?: SyntaxCheckUnavailable[];
}> {
  const { reports: syntaxErrors, unavailable } = await checkSyntax(changes);
  if (syntaxErrors.length > 0 && reject) throw syntaxErrorRefusal(toolName, what, syntaxErrors);
  return {
    ...(syntaxErrors.length === 0 ? {} : { syntaxErrors }),
    ...(unavailable.length === 0 ? {} : { syntaxCheckUnavailable: unavailable }),
  };
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

/**
 * `a syntax error in a.ts at line 6 (missing "}")`, or `4 syntax errors in a.ts: line 3 (…), …`,
 * then where the change was and what it did: `; the change at line 4 removed a "}", so the braces
 * no longer balance`.
 */
function describeFile({ path, count, errors, edit }: FileSyntaxErrors): string {
  const [first] = errors;
  const cause =
    edit === undefined || edit.changes.length === 0
      ? ""
      : `the change at ${edit.startLine === edit.endLine ? `line ${edit.startLine}` : `lines ${edit.startLine}-${edit.endLine}`} ${edit.changes.join("; it ")}`;
  if (count === 1 && first !== undefined) {
    const where = cause === "" ? "" : `, where the parser noticed it; ${cause}`;
    return `a syntax error in ${path} at line ${first.line} (${first.message}${where})`;
  }
  const listed = errors.map(({ line, message }) => `line ${line} (${message})`).join(", ");
  const more = count > errors.length ? ` and ${count - errors.length} more` : "";
  return `${count} syntax errors in ${path}: ${listed}${more}${cause === "" ? "" : ` (${cause})`}`;
}

/**
 * The lines a model reads after a change that left syntax errors, one per file, `subject` naming
 * the change ("The edit"), then one per file whose check could not run; none when there were none.
 */
export function syntaxErrorNotes(
  subject: string,
  reports: readonly FileSyntaxErrors[] = [],
  unavailable: readonly SyntaxCheckUnavailable[] = [],
): string[] {
  const notes = reports.map((report) => {
    const them = report.count === 1 ? "it" : "them";
    return `${subject} left ${describeFile(report)}; fix ${them} before running the code.`;
  });
  for (const { path, reason } of unavailable) {
    notes.push(`Syntax diagnostics unavailable for ${path}: ${reason}. It was written unchecked.`);
  }
  return notes;
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
