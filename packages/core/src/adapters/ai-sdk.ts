import * as ai from "ai";
import { tool as aiTool, jsonSchema, type Tool } from "ai";
import type { AnyToolDefinition } from "../define-tool.js";
import { formatBytes } from "../format-bytes.js";
import { type JSONSchema, toolInputJSONSchema, toolOutputJSONSchema } from "../json-schema.js";
import { type ToolImage, toolImageOf } from "./image-output.js";
import { textToolOutput } from "./text-output.js";

type ToolModelOutput = Awaited<ReturnType<NonNullable<Tool<unknown, unknown>["toModelOutput"]>>>;
type ContentPart = Extract<ToolModelOutput, { type: "content" }>["value"][number];

/**
 * An image as a tool result part: ai@7's `file` part with tagged data (ai@7 deprecates
 * `file-data`), told by `uploadFile`, which came with it; ai@6's `file-data`, which it sends to
 * the model as an image.
 */
const imagePart: (image: ToolImage) => ContentPart =
  "uploadFile" in ai
    ? ({ data, mediaType }) =>
        ({ type: "file", mediaType, data: { type: "data", data } }) as unknown as ContentPart
    : ({ data, mediaType }) => ({ type: "file-data", data, mediaType });

/** Options of {@link toAISDKTool} and {@link toAISDKTools}. */
export interface ToAISDKToolOptions {
  /**
   * The most characters of a result the model sees.
   * @default 50_000
   */
  maxChars?: number;
  /**
   * `"destructive"`: the tools whose annotations say they may change or delete data
   * (`destructiveHint`, and not `readOnlyHint`) get `needsApproval: true`, so the AI SDK stops for
   * the application's approval before each of their calls. Without it no tool asks: the sandbox
   * is what confines them.
   */
  needsApproval?: "destructive";
}

/**
 * A pleach tool as an AI SDK `tool()`, for `ai@6` and `ai@7` alike. The input schema is the
 * tool's JSON Schema with no validator of the AI SDK's own, so the tool's validation (and its
 * field-by-field `INVALID_INPUT` message) is the one a model sees; a thrown {@link ToolError}
 * becomes the AI SDK's tool error with the model-readable message. `execute` resolves to the
 * tool's structured output (described by `outputSchema`); the model reads the tool's capped text
 * rendering of it, and an image the tool returned (a PNG, JPEG, GIF or WebP file read as base64)
 * as an image part (`file` on ai@7, `file-data` on ai@6).
 */
export function toAISDKTool(
  tool: AnyToolDefinition,
  { maxChars, needsApproval }: ToAISDKToolOptions = {},
): Tool<unknown, unknown> {
  const schema: JSONSchema = toolInputJSONSchema(tool);
  const { destructiveHint = false, readOnlyHint = false, title } = tool.annotations;
  return aiTool<unknown, unknown>({
    description: tool.description,
    ...(title === undefined ? {} : { title }),
    inputSchema: jsonSchema<unknown>(schema),
    outputSchema: jsonSchema<unknown>(toolOutputJSONSchema(tool)),
    ...(needsApproval === "destructive" && destructiveHint && !readOnlyHint
      ? { needsApproval: true }
      : {}),
    execute: (input, { abortSignal, toolCallId }) =>
      tool.execute(input, { abortSignal, toolCallId }),
    toModelOutput: ({ output }) => {
      const image = toolImageOf(output);
      if (image !== undefined) {
        const bytes = formatBytes(Buffer.byteLength(image.data, "base64"));
        return {
          type: "content",
          value: [
            { type: "text", text: `${bytes} of ${image.mediaType}, shown as an image` },
            imagePart(image),
          ],
        };
      }
      return textToolOutput(tool, output, maxChars);
    },
  });
}

/** Pleach tools as an AI SDK `ToolSet`, keyed by tool name, for `generateText({ tools })`. */
export function toAISDKTools(
  tools: readonly AnyToolDefinition[],
  options: ToAISDKToolOptions = {},
): Record<string, Tool<unknown, unknown>> {
  return Object.fromEntries(tools.map((tool) => [tool.name, toAISDKTool(tool, options)]));
}

export type {
  AISDKHarnessSandboxProvider,
  AISDKHarnessSandboxSession,
  ToAISDKHarnessSandboxProviderOptions,
} from "./ai-sdk-harness.js";
export { toAISDKHarnessSandboxProvider } from "./ai-sdk-harness.js";
export type {
  AISDKSandboxProcess,
  AISDKSandboxSession,
  ToAISDKSandboxSessionOptions,
} from "./ai-sdk-sandbox.js";
export { toAISDKSandboxSession } from "./ai-sdk-sandbox.js";
