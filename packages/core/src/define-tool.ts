import type { z } from "zod";
import { ToolError } from "./errors.js";
import { formatZodIssues } from "./format-issues.js";
import { type OutputValidation, outputChecker } from "./output-check.js";

/** Hints about a tool's behaviour, with the meaning MCP gives them. */
export interface ToolAnnotations {
  /** A human-readable title. */
  title?: string;
  /** The tool does not change its environment. */
  readOnlyHint?: boolean;
  /** The tool may change or delete existing data (meaningful when not read-only). */
  destructiveHint?: boolean;
  /** Calling it twice with the same input has no further effect. */
  idempotentHint?: boolean;
  /** The tool reaches outside the workspace (the network, say). */
  openWorldHint?: boolean;
}

/** What a caller may pass to a tool's `execute` besides its input. */
export interface ToolExecutionContext {
  /** Aborts the call; tools pass it down to the commands they run. */
  abortSignal?: AbortSignal;
  /** The id the model gave this call, if any. */
  toolCallId?: string;
}

/**
 * What a tool declares about the workspace files its calls read or change, so that a session's
 * record of what the model has read, and a runtime's answer to an unchanged re-read, work from
 * the tool itself and never from a list of tool names. Each function gets the validated input.
 */
export interface ToolFileAccess<Input> {
  /** The files a call reads and shows the model (a session records their content). */
  reads?(input: Input): string[];
  /**
   * The files a call may change: a session refuses the call when one of them exists and the model
   * has not read it, or it changed since.
   */
  writes?(input: Input): string[];
  /**
   * For a tool that `reads`: what else in the input decides the result (`read_file`'s encoding
   * and line range). A runtime answers a repeat of a call, with the same files and the same key,
   * by pointing at the earlier result while the files are unchanged and that result is still in
   * the conversation. Without it, every call runs.
   */
  readKey?(input: Input): string;
}

/** The model-facing result of the `ToolDef` contract: text and an error flag. */
export interface ToolResult {
  output: string;
  error: boolean;
  /** The {@link ToolError} code when `error` is set by a thrown error. */
  code?: string;
}

/** The definition passed to {@link defineTool}. */
export interface ToolSpec<Input extends z.ZodType, Output extends z.ZodType> {
  name: string;
  description: string;
  inputSchema: Input;
  outputSchema: Output;
  annotations?: ToolAnnotations;
  /** The workspace files a call reads or changes (see {@link ToolFileAccess}). */
  files?: ToolFileAccess<z.output<Input>>;
  /**
   * How each output is checked against `outputSchema`. `"parse"` returns zod's parse of it (a
   * copy: unknown keys stripped, defaults and transforms applied). `"check"` validates it as
   * fully (a drifting output still throws `INVALID_OUTPUT` with zod's issues) and returns the
   * output as the tool built it, without the copy: for tools whose outputs can hold tens of
   * thousands of entries. It needs a schema of plain data (no defaults, transforms, coercions or
   * overwriting checks such as `trim()`), and keys the schema does not name are kept, not
   * stripped, so the tool must build exactly the schema's shape.
   * @default "parse"
   */
  outputValidation?: OutputValidation;
  execute(input: z.output<Input>, context: ToolExecutionContext): Promise<z.input<Output>>;
  /**
   * How a successful output reads to a model, when pretty JSON is not the best form (a file's
   * text, a command's merged output). The result is capped by {@link renderToolResult}.
   */
  toModelOutput?(output: z.output<Output>): ToolResult;
}

/**
 * The canonical tool shape of `@pleach/core`: a named, described, schema-typed function whose
 * input is validated before it runs and whose output is validated after.
 */
export interface PluginToolDefinition<
  Input extends z.ZodType = z.ZodType,
  Output extends z.ZodType = z.ZodType,
> {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: Input;
  readonly outputSchema: Output;
  readonly annotations: ToolAnnotations;
  /** The workspace files a call reads or changes, when the tool declares them. */
  readonly files?: ToolFileAccess<z.output<Input>>;
  /**
   * Validate `input`, run the tool, validate its output. Throws {@link ToolError}: `INVALID_INPUT`
   * naming each wrong field, `INVALID_OUTPUT` on drift, or the tool's own code.
   */
  execute(input: unknown, context?: ToolExecutionContext): Promise<z.output<Output>>;
  /** Render an output of this tool for a model (see {@link renderToolResult}). */
  toModelOutput(output: z.output<Output>): ToolResult;
}

/** Any tool, whatever its types; the form lists of tools take. */
// biome-ignore lint/suspicious/noExplicitAny: a heterogeneous list of tools needs an open type
export type AnyToolDefinition = PluginToolDefinition<any, any>;

const TOOL_NAME = /^[a-zA-Z][a-zA-Z0-9_-]{0,63}$/;

/** Define a tool. Nothing runs until `execute` is called. */
export function defineTool<Input extends z.ZodType, Output extends z.ZodType>(
  spec: ToolSpec<Input, Output>,
): PluginToolDefinition<Input, Output> {
  const { name, description, inputSchema, outputSchema, annotations = {}, files, execute } = spec;
  if (!TOOL_NAME.test(name)) {
    throw new TypeError(`defineTool: invalid tool name ${JSON.stringify(name)}`);
  }
  const checkOutput = outputChecker(outputSchema, spec.outputValidation ?? "parse");
  const toModelOutput: (output: z.output<Output>) => ToolResult =
    spec.toModelOutput ?? defaultModelOutput;
  return {
    name,
    description,
    inputSchema,
    outputSchema,
    annotations,
    ...(files === undefined ? {} : { files }),
    async execute(input, context = {}) {
      if (context.abortSignal?.aborted) {
        throw new ToolError("ABORTED", `${name} was aborted before it started`);
      }
      const parsedInput = inputSchema.safeParse(input);
      if (!parsedInput.success) {
        throw new ToolError(
          "INVALID_INPUT",
          `${name} got invalid input:\n${formatZodIssues(parsedInput.error.issues)}`,
          { details: { issues: parsedInput.error.issues } },
        );
      }
      const output = await execute(parsedInput.data as z.output<Input>, context);
      const checked = checkOutput(output);
      if (!checked.success) {
        throw new ToolError(
          "INVALID_OUTPUT",
          `${name} produced output that does not match its schema:\n${formatZodIssues(checked.issues)}`,
          { details: { issues: checked.issues } },
        );
      }
      return checked.data as z.output<Output>;
    },
    toModelOutput,
  };
}

function defaultModelOutput(output: unknown): ToolResult {
  return {
    output: typeof output === "string" ? output : JSON.stringify(output, null, 2),
    error: false,
  };
}
