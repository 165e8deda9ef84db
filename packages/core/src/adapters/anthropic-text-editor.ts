import { Buffer } from "node:buffer";
import { z } from "zod";
import {
  type AnyToolDefinition,
  defineTool,
  type PluginToolDefinition,
  type ToolExecutionContext,
  type ToolResult,
} from "../define-tool.js";
import { isToolError, ToolError } from "../errors.js";
import { renderToolResult } from "../render.js";

/** The input of Anthropic's `str_replace_based_edit_tool` (`text_editor_20250728`). */
export interface AnthropicTextEditorInput {
  command: "view" | "create" | "str_replace" | "insert" | "undo_edit";
  path: string;
  view_range?: [number, number];
  file_text?: string;
  old_str?: string;
  new_str?: string;
  insert_line?: number;
}

/** The pleach tools the text editor's commands run. */
export const TEXT_EDITOR_TOOL_NAMES = [
  "read_file",
  "list_files",
  "write_file",
  "edit_file",
] as const;

interface Call {
  tools: readonly AnyToolDefinition[];
  context: ToolExecutionContext;
  maxChars: number | undefined;
}

type Outcome = { ok: true; output: unknown; text: ToolResult } | { ok: false; error: unknown };

/** Run the pleach tool `name` with `input`; its structured output and its text for the model. */
async function call({ tools, context, maxChars }: Call, name: string, input: unknown) {
  const tool = tools.find((candidate) => candidate.name === name);
  if (tool === undefined) {
    return {
      ok: false,
      error: new ToolError(
        "UNSUPPORTED",
        `the text editor needs pleach's ${name} tool, which is not among the tools given`,
      ),
    } satisfies Outcome;
  }
  try {
    const output = await tool.execute(input, context);
    const text = renderToolResult({ ok: true, result: tool.toModelOutput(output) }, { maxChars });
    return { ok: true, output, text } satisfies Outcome;
  } catch (error) {
    return { ok: false, error } satisfies Outcome;
  }
}

function failure(error: unknown, { context, maxChars }: Call): ToolResult {
  if (isToolError(error) && error.code === "NOT_FOUND") {
    return { output: `Error: File not found. ${error.message}`, error: true };
  }
  const rendered = renderToolResult(
    { ok: false, error },
    { maxChars, abortSignal: context.abortSignal },
  );
  return { ...rendered, output: `Error: ${rendered.output}` };
}

/** The whole text of a workspace file through `read_file`'s base64 mode (no line budget). */
async function wholeText(run: Call, path: string): Promise<Outcome & { content?: string }> {
  const read = await call(run, "read_file", { path, encoding: "base64" });
  if (!read.ok) return read;
  const { content } = read.output as { content: string };
  return { ...read, content: Buffer.from(content, "base64").toString("utf8") };
}

/**
 * Run one command of Anthropic's text editor (`text_editor_20250728`, named
 * `str_replace_based_edit_tool`) on pleach's tools, with the semantics and messages Anthropic
 * documents: `view` of a file shows its lines numbered `N: text` (`view_range` `[start, end]`,
 * 1-based, `-1` to the end), of a folder its entries (`list_files`); `create` writes a new file and
 * refuses one that exists; `str_replace` replaces text found exactly once (`edit_file`), and
 * answers `Error: No match found for replacement...` or `Error: Found N matches...` otherwise;
 * `insert` puts `new_str` after line `insert_line` (0: at the top). This version has no
 * `undo_edit`. Never throws.
 */
export async function runAnthropicTextEditor({
  tools,
  input,
  context = {},
  maxChars,
}: {
  tools: readonly AnyToolDefinition[];
  input: AnthropicTextEditorInput;
  context?: ToolExecutionContext;
  maxChars?: number;
}): Promise<ToolResult> {
  const run: Call = { tools, context, maxChars };
  const { command, path } = input;
  if (typeof path !== "string" || path === "") {
    return { output: "Error: the `path` parameter is required.", error: true };
  }
  switch (command) {
    case "view":
      return view(run, input);
    case "create": {
      if (typeof input.file_text !== "string") {
        return {
          output: "Error: Parameter `file_text` is required for command: create",
          error: true,
        };
      }
      const existing = await call(run, "read_file", { path, encoding: "base64" });
      if (existing.ok || !(isToolError(existing.error) && existing.error.code === "NOT_FOUND")) {
        return existing.ok
          ? {
              output: `Error: File already exists at: ${path}. Cannot overwrite files using command \`create\`; change it with str_replace or insert, or view it first.`,
              error: true,
            }
          : failure(existing.error, run);
      }
      const written = await call(run, "write_file", { path, content: input.file_text });
      return written.ok
        ? { output: `File created successfully at: ${path}`, error: false }
        : failure(written.error, run);
    }
    case "str_replace":
      return strReplace(run, input);
    case "insert":
      return insert(run, input);
    case "undo_edit":
      return {
        output:
          "Error: undo_edit is not a command of this text editor (text_editor_20250728). Undo a change with str_replace, putting the old text back.",
        error: true,
      };
    default:
      return {
        output: `Error: Unrecognized command ${JSON.stringify(command)}. The commands are: view, create, str_replace, insert.`,
        error: true,
      };
  }
}

async function view(run: Call, { path, view_range: range }: AnthropicTextEditorInput) {
  let offset = 1;
  let limit: number | undefined;
  if (range !== undefined) {
    const [start, end] = range;
    if (
      !Number.isInteger(start) ||
      !Number.isInteger(end) ||
      start < 1 ||
      (end !== -1 && end < start)
    ) {
      return {
        output: `Error: Invalid \`view_range\` ${JSON.stringify(range)}: give [start, end], 1-based, with end >= start or -1 for the end of the file.`,
        error: true,
      };
    }
    offset = start;
    if (end !== -1) limit = end - start + 1;
  }
  const read = await call(run, "read_file", {
    path,
    offset,
    ...(limit === undefined ? {} : { limit }),
  });
  if (!read.ok) {
    if (isToolError(read.error) && read.error.code === "NOT_A_FILE") {
      if (range !== undefined) {
        return {
          output:
            "Error: The `view_range` parameter is not allowed when `path` points to a directory.",
          error: true,
        };
      }
      const listed = await call(run, "list_files", { dir: path });
      return listed.ok ? listed.text : failure(listed.error, run);
    }
    return failure(read.error, run);
  }
  const output = read.output as {
    content: string;
    startLine?: number;
    endLine?: number;
    totalLines?: number;
    nextOffset?: number;
  };
  const first = output.startLine ?? offset;
  const lines = output.content.split("\n");
  if (lines.at(-1) === "") lines.pop();
  const numbered = lines.map((line, index) => `${first + index}: ${line.replace(/\r$/, "")}`);
  if (
    output.nextOffset !== undefined &&
    (limit === undefined || output.nextOffset <= offset + limit - 1)
  ) {
    numbered.push(
      `[lines ${first}-${output.endLine ?? first} of ${output.totalLines ?? "?"} shown; view with view_range [${output.nextOffset}, -1] for more]`,
    );
  }
  return { output: numbered.join("\n"), error: false };
}

async function strReplace(
  run: Call,
  { path, old_str: old, new_str: replacement = "" }: AnthropicTextEditorInput,
) {
  if (typeof old !== "string" || old === "") {
    return {
      output: "Error: Parameter `old_str` is required for command: str_replace",
      error: true,
    };
  }
  const file = await wholeText(run, path);
  if (!file.ok) return failure(file.error, run);
  const lf = (text: string) => text.replace(/\r\n/g, "\n");
  const count = lf(file.content ?? "").split(lf(old)).length - 1;
  if (count === 0) {
    return {
      output: "Error: No match found for replacement. Please check your text and try again.",
      error: true,
    };
  }
  if (count > 1) {
    return {
      output: `Error: Found ${count} matches for replacement text. Please provide more context to make a unique match.`,
      error: true,
    };
  }
  const edited = await call(run, "edit_file", { path, old, new: replacement });
  return edited.ok
    ? { output: "Successfully replaced text at exactly one location.", error: false }
    : failure(edited.error, run);
}

async function insert(
  run: Call,
  { path, insert_line: at, new_str: text }: AnthropicTextEditorInput,
) {
  if (typeof text !== "string") {
    return { output: "Error: Parameter `new_str` is required for command: insert", error: true };
  }
  const file = await wholeText(run, path);
  if (!file.ok) return failure(file.error, run);
  const content = file.content ?? "";
  if (content.includes("\u0000") || content.includes("\uFFFD")) {
    return {
      output: `Error: ${path} is not UTF-8 text, so insert cannot change it without corrupting it.`,
      error: true,
    };
  }
  const newline = content.includes("\r\n") ? "\r\n" : "\n";
  const lines = content.split(/\r?\n/);
  const finalNewline = content === "" || content.endsWith("\n");
  if (finalNewline) lines.pop();
  if (typeof at !== "number" || !Number.isInteger(at) || at < 0 || at > lines.length) {
    return {
      output: `Error: Invalid \`insert_line\` parameter: ${at}. It should be within the range of lines of the file: [0, ${lines.length}]`,
      error: true,
    };
  }
  const added = text.split(/\r?\n/);
  if (text.endsWith("\n")) added.pop();
  lines.splice(at, 0, ...added);
  const next = lines.join(newline) + (finalNewline ? newline : "");
  const written = await call(run, "write_file", { path, content: next });
  return written.ok
    ? { output: `Successfully inserted text after line ${at}.`, error: false }
    : failure(written.error, run);
}

const textEditorInputSchema = z.object({
  command: z.enum(["view", "create", "str_replace", "insert", "undo_edit"]),
  path: z.string(),
  view_range: z.tuple([z.number().int(), z.number().int()]).optional(),
  file_text: z.string().optional(),
  old_str: z.string().optional(),
  new_str: z.string().optional(),
  insert_line: z.number().int().optional(),
});

const textEditorOutputSchema = z.object({ output: z.string(), error: z.boolean() });

/**
 * Anthropic's text editor as one pleach tool named `str_replace_based_edit_tool`, over the
 * session's `read_file`, `list_files`, `write_file` and `edit_file` (see
 * {@link runAnthropicTextEditor}), for a loop that dispatches calls by name, such as the runtime
 * with an Anthropic model's `nativeTools`.
 */
export function createAnthropicTextEditorTool(
  tools: readonly AnyToolDefinition[],
): PluginToolDefinition<typeof textEditorInputSchema, typeof textEditorOutputSchema> {
  return defineTool({
    name: "str_replace_based_edit_tool",
    description:
      "View, create and edit files: view (a file's lines numbered, or a folder), create, str_replace (text found exactly once), insert (after insert_line).",
    inputSchema: textEditorInputSchema,
    outputSchema: textEditorOutputSchema,
    annotations: { title: "Text editor", destructiveHint: true },
    execute: (input, context) =>
      runAnthropicTextEditor({ tools, input: input as AnthropicTextEditorInput, context }),
    toModelOutput: (output) => output,
  });
}
