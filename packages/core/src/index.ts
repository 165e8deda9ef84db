export type {
  AnyToolDefinition,
  PluginToolDefinition,
  ToolAnnotations,
  ToolExecutionContext,
  ToolFileAccess,
  ToolResult,
  ToolSpec,
} from "./define-tool.js";
export { defineTool } from "./define-tool.js";
export type { ToolErrorCode, ToolErrorOptions } from "./errors.js";
export { isToolError, ToolError } from "./errors.js";
export { formatBytes } from "./format-bytes.js";
export { formatZodIssues } from "./format-issues.js";
export type { JSONSchema } from "./json-schema.js";
export { toolInputJSONSchema, toolOutputJSONSchema } from "./json-schema.js";
export type { OutputValidation } from "./output-check.js";
export type { RenderToolResultOptions, ToolOutcome } from "./render.js";
export { renderToolResult } from "./render.js";
export type { RunToolCallOptions, ToolCallArguments } from "./run-tool-call.js";
export { runToolCall } from "./run-tool-call.js";
export type { SandboxMode } from "./sandbox/contract.js";
export { shellJoin, shellQuote } from "./shell-quote.js";
export {
  removeStrictNulls,
  toolStrictInputJSONSchema,
  toStrictJSONSchema,
} from "./strict-schema.js";
export type { ToolContext, ToolDef, ToToolDefOptions } from "./tool-def.js";
export { toToolDef } from "./tool-def.js";
export type { CappedText, CapTextOptions } from "./truncate.js";
export { capText, MODEL_OUTPUT_LIMIT } from "./truncate.js";
