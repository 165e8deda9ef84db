import {
  createSdkMcpServer,
  type McpSdkServerConfigWithInstance,
  tool as sdkTool,
} from "@anthropic-ai/claude-agent-sdk";
import type { z } from "zod";
import type { AnyToolDefinition } from "../define-tool.js";
import { renderToolResult } from "../render.js";
import { toolImageOf } from "./image-output.js";

/** Options of {@link toClaudeAgentMcpServer}. */
export interface ToClaudeAgentMcpServerOptions {
  /**
   * The server's name: its key in `mcpServers`, and the middle of each tool's name as Claude
   * sees it (`mcp__pleach__read_file`).
   * @default "pleach"
   */
  name?: string;
  /**
   * The most characters of a result the model sees.
   * @default 50_000
   */
  maxChars?: number;
}

/**
 * Pleach tools as the Claude Agent SDK's in-process MCP server (`createSdkMcpServer`), for
 * `query({ options: { mcpServers: { [name]: server } } })`. Each result is what every face of
 * pleach shows a model: the tool's capped text (`renderToolResult`, the rendering `pleach mcp`, the
 * runtime and the other adapters use) as one text block, not JSON, with an image read as base64 (a PNG, JPEG,
 * GIF or WebP file) sent as an MCP image. `isError` marks a failed call (a refusal, bad input, a
 * crash), as `pleach mcp` does, not a command that ran and exited non-zero. The tools keep their
 * names, descriptions and annotations; their input is validated by the tool itself.
 */
export function toClaudeAgentMcpServer(
  tools: readonly AnyToolDefinition[],
  { name = "pleach", maxChars }: ToClaudeAgentMcpServerOptions = {},
): McpSdkServerConfigWithInstance {
  return createSdkMcpServer({
    name,
    tools: tools.map((tool) =>
      sdkTool(
        tool.name,
        tool.description,
        shapeOf(tool.inputSchema),
        async (input, extra) => {
          const abortSignal = (extra as { signal?: AbortSignal } | undefined)?.signal;
          try {
            const output = await tool.execute(
              input,
              abortSignal === undefined ? {} : { abortSignal },
            );
            const image = toolImageOf(output);
            if (image !== undefined) {
              return {
                content: [{ type: "image", data: image.data, mimeType: image.mediaType }],
                isError: false,
              };
            }
            const rendered = renderToolResult(
              { ok: true, result: tool.toModelOutput(output) },
              { maxChars },
            );
            return { content: [{ type: "text", text: rendered.output }], isError: false };
          } catch (error) {
            const rendered = renderToolResult({ ok: false, error }, { maxChars, abortSignal });
            return { content: [{ type: "text", text: rendered.output }], isError: true };
          }
        },
        { annotations: tool.annotations },
      ),
    ),
  });
}

/** The raw shape the SDK's `tool()` takes: the object schema's own (every pleach tool has one). */
function shapeOf(schema: z.ZodType): z.ZodRawShape {
  const shape = (schema as { shape?: z.ZodRawShape }).shape;
  if (shape === undefined) {
    throw new TypeError("toClaudeAgentMcpServer: a tool's input schema must be a z.object()");
  }
  return shape;
}
