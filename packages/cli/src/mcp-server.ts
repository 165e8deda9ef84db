import type { CallToolResult, ListToolsResult, Tool } from "@modelcontextprotocol/server";
import { ProtocolError, ProtocolErrorCode, Server } from "@modelcontextprotocol/server";
import {
  type AnyToolDefinition,
  capText,
  type JSONSchema,
  renderToolResult,
  toolInputJSONSchema,
  toolOutputJSONSchema,
} from "@pleach/core";

/** The `_meta` key under which an error result carries its {@link ToolError} code. */
export const MCP_ERROR_CODE_META_KEY = "pleach/errorCode";

/** Options of {@link createPleachMcpServer}. */
export interface CreatePleachMcpServerOptions {
  /** The tools to serve, under their own names. */
  tools: readonly AnyToolDefinition[];
  /**
   * The name and version the server gives clients.
   * @default { name: "pleach", version: "0.1.0" }
   */
  serverInfo?: { name: string; version: string };
  /**
   * Aborts every tool call, beside each request's own signal: a server that is stopping aborts
   * it, then waits for {@link PleachMcpServerFactory.settled}.
   */
  abortSignal?: AbortSignal;
}

/** Makes one server per connection (stdio) or per request (HTTP), over the same tools. */
export interface PleachMcpServerFactory {
  (): Server;
  /** Settles once no tool call of any server it made is running. */
  settled(): Promise<void>;
}

/** A tool as MCP lists it, with the schema it advertises for `structuredContent`. */
interface ServedTool {
  tool: AnyToolDefinition;
  listing: Tool;
  /** Whether the output is not an object and travels as `{ result: output }`. */
  wrapped: boolean;
}

/**
 * How a tool is listed. MCP requires `outputSchema` (and so `structuredContent`) to be an object: a
 * tool whose output is an array or a scalar (`search_files`, `list_files`) is advertised as
 * `{ result: <its output> }`, the same wrap the MCP SDK applies for older protocol revisions, so
 * every revision and client sees one shape.
 */
function describeTool(tool: AnyToolDefinition): { listing: Tool; wrapped: boolean } {
  const outputSchema = toolOutputJSONSchema(tool);
  const wrapped = outputSchema.type !== "object";
  const { title } = tool.annotations;
  const listing: Tool = {
    name: tool.name,
    description: tool.description,
    inputSchema: toolInputJSONSchema(tool) as Tool["inputSchema"],
    outputSchema: (wrapped ? wrapSchema(outputSchema) : outputSchema) as Tool["outputSchema"],
    annotations: { ...tool.annotations },
  };
  if (title !== undefined) listing.title = title;
  return { listing, wrapped };
}

function wrapSchema(schema: JSONSchema): JSONSchema {
  return {
    type: "object",
    properties: { result: schema },
    required: ["result"],
    additionalProperties: false,
  };
}

/**
 * Make an MCP server (the v2 SDK's low-level `Server`) that lists `tools` with their input and
 * output JSON Schemas and annotations, and answers `tools/call` by running the tool: a success
 * returns `structuredContent` plus the same JSON as text; a {@link ToolError} or any other failure
 * returns an `isError` result whose text is the model-readable message (code in `_meta`). Input is
 * validated by the tool itself, so a model gets pleach's field-by-field `INVALID_INPUT` message.
 *
 * The low-level server is used rather than `McpServer` because the tools already carry their
 * schemas and validation; `McpServer` would validate a second time with its own messages.
 * Nothing is served until the caller connects it (`serveStdio`, `createMcpHandler`).
 */
export function createPleachMcpServer(options: CreatePleachMcpServerOptions): Server {
  return createPleachMcpServerFactory(options)();
}

/**
 * Like {@link createPleachMcpServer}, but returns a factory that makes one server per connection
 * (stdio) or per request (HTTP), with the tool listings computed once.
 */
export function createPleachMcpServerFactory({
  tools,
  serverInfo = { name: "pleach", version: "0.1.0" },
  abortSignal,
}: CreatePleachMcpServerOptions): PleachMcpServerFactory {
  const served = new Map<string, ServedTool>();
  for (const tool of tools) {
    if (served.has(tool.name))
      throw new TypeError(`two tools are named ${JSON.stringify(tool.name)}`);
    served.set(tool.name, { tool, ...describeTool(tool) });
  }
  const listResult: ListToolsResult = { tools: [...served.values()].map(({ listing }) => listing) };

  const running = new Set<Promise<unknown>>();
  const factory = () => {
    const server = new Server(serverInfo, { capabilities: { tools: {} } });
    server.setRequestHandler("tools/list", () => listResult);
    server.setRequestHandler("tools/call", async (request, handlerContext) => {
      const { name, arguments: args = {} } = request.params;
      const entry = served.get(name);
      if (entry === undefined) {
        throw new ProtocolError(
          ProtocolErrorCode.InvalidParams,
          `there is no tool named ${JSON.stringify(name)}; the tools are: ${[...served.keys()].join(", ")}`,
        );
      }
      const signals = [handlerContext.mcpReq.signal, ...(abortSignal ? [abortSignal] : [])];
      const call = callTool({ entry, args, abortSignal: AbortSignal.any(signals) });
      running.add(call);
      try {
        return server.projectCallToolResult(await call, entry.listing.outputSchema);
      } finally {
        running.delete(call);
      }
    });
    return server;
  };
  return Object.assign(factory, {
    async settled() {
      while (running.size > 0) await Promise.allSettled(running);
    },
  });
}

async function callTool({
  entry: { tool, wrapped },
  args,
  abortSignal,
}: {
  entry: ServedTool;
  args: unknown;
  abortSignal: AbortSignal;
}): Promise<CallToolResult> {
  try {
    const output = await tool.execute(args, { abortSignal });
    const structuredContent = (wrapped ? { result: output } : output) as Record<string, unknown>;
    // The text is the same JSON, for clients that only read `content`; capped like any result a
    // model sees (only a diff of hundreds of kilobytes gets near the cap).
    const text = capText(JSON.stringify(structuredContent)).text;
    // A command that exits non-zero is data, but the model should see the failure flag.
    const isError = tool.toModelOutput(output).error;
    return { content: [{ type: "text", text }], structuredContent, isError };
  } catch (error) {
    const rendered = renderToolResult({ ok: false, error });
    return {
      content: [{ type: "text", text: rendered.output }],
      isError: true,
      _meta: { [MCP_ERROR_CODE_META_KEY]: rendered.code ?? "INTERNAL" },
    };
  }
}
