/** How pleach's tools are listed over MCP: descriptions, schemas, icon and client hints. */
import type { Tool } from "@modelcontextprotocol/server";
import {
  type AnyToolDefinition,
  type JSONSchema,
  toolInputJSONSchema,
  toolOutputJSONSchema,
} from "@pleach/core";

/**
 * The `_meta` key of a listed tool by which Claude Code lets a result of the tool reach its
 * model whole up to that many characters, instead of spilling it to a file past its own limit.
 */
const CLAUDE_CODE_RESULT_SIZE_META_KEY = "anthropic/maxResultSizeChars";

/**
 * The icon every tool and the server list: pleach's mark, small enough to travel in each listing
 * as a data URI (MCP icons may be `data:` URIs, so no client has to fetch anything).
 */
export const PLEACH_ICON = {
  src: `data:image/svg+xml;base64,${Buffer.from(
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#2f6f4f"/><path d="M4 12V4h4.5a2.5 2.5 0 0 1 0 5H4" fill="none" stroke="#fff" stroke-width="1.6"/></svg>',
  ).toString("base64")}`,
  mimeType: "image/svg+xml",
  sizes: ["any"],
};

/** How results are shaped: the budget, and whether `structuredContent` is sent. */
export interface ResultShape {
  maxResultChars: number;
  structuredOutput: boolean;
}

/**
 * How a tool is listed. MCP requires `outputSchema` (and so `structuredContent`) to be an object: a
 * tool whose output is an array or a scalar (`search_files`, `list_files`) is advertised as
 * `{ result: <its output> }`, the same wrap the MCP SDK applies for older protocol revisions, so
 * every revision and client sees one shape.
 */
export function describeTool(
  tool: AnyToolDefinition,
  { maxResultChars, structuredOutput }: ResultShape,
  jobTool: string | undefined,
): { listing: Tool; wrapped: boolean } {
  const outputSchema = toolOutputJSONSchema(tool);
  const wrapped = outputSchema.type !== "object";
  const { title } = tool.annotations;
  const inputSchema = toolInputJSONSchema(tool);
  const listing: Tool = {
    name: tool.name,
    description: hasInput(inputSchema, "timeout")
      ? `${tool.description}\n\n${clientTimeoutNote(jobTool)}`
      : tool.description,
    inputSchema: inputSchema as Tool["inputSchema"],
    annotations: { ...tool.annotations },
    icons: [PLEACH_ICON],
    // Results are already capped to the budget; this keeps Claude Code from spilling one of
    // them to a file when the budget is above its own default.
    _meta: { [CLAUDE_CODE_RESULT_SIZE_META_KEY]: maxResultChars },
  };
  if (structuredOutput) {
    listing.outputSchema = (
      wrapped ? wrapSchema(outputSchema) : outputSchema
    ) as Tool["outputSchema"];
  }
  if (title !== undefined) listing.title = title;
  return { listing, wrapped };
}

/** Whether a tool's input JSON Schema has the top-level property `name`. */
export function hasInput(schema: JSONSchema, name: string): boolean {
  const { properties } = schema;
  return typeof properties === "object" && properties !== null && name in properties;
}

/**
 * What a tool with a time limit of its own (a `timeout` input) says over MCP: the client may give
 * up first. Measured with Claude Code 2.1.332, Codex 0.171.0 and Gemini CLI 0.61.0 (docs/
 * mcp-clients.md), each stops a call at its own tool timeout (Codex: 60 s unless configured)
 * whatever progress is sent, and hands its model its own "timed out" text; only Copilot CLI
 * 1.0.102 restarts its timer on progress. `jobTool` is the served tool that runs background jobs
 * (the one with a `background` input), the way out.
 */
function clientTimeoutNote(jobTool: string | undefined): string {
  const wayOut =
    jobTool === undefined
      ? "split work that may take longer into shorter calls"
      : `run work that may take longer as a background job (${jobTool} with background: true, then poll its output) and go on meanwhile`;
  return `Over MCP your client may stop waiting before this time limit (its own tool timeout, often 60 s, which progress does not extend in most clients): ${wayOut}.`;
}

function wrapSchema(schema: JSONSchema): JSONSchema {
  return {
    type: "object",
    properties: { result: schema },
    required: ["result"],
    additionalProperties: false,
  };
}
