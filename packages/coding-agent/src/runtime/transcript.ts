import { escapeFrameAttribute, neutralizeFrameTags } from "./frame-escape.js";
import type { ModelMessage } from "./model.js";

/**
 * Delimit a tool's output as data: `<tool_output tool="read_file">...</tool_output>`. This is the
 * one place results are framed. Attribute values are escaped ({@link escapeFrameAttribute}), so
 * a tool name the model made up cannot end the tag; anything in the output that could read as an
 * opening or closing tag, however disguised, is neutralised ({@link neutralizeFrameTags}), so the
 * output cannot end the block early and pass for the runtime's own words.
 */
export function wrapToolOutput({
  toolName,
  output,
  error,
  code,
}: {
  toolName: string;
  output: string;
  error: boolean;
  code?: string | undefined;
}): string {
  const attributes = [`tool="${escapeFrameAttribute(toolName)}"`];
  if (error) attributes.push('error="true"');
  if (code !== undefined) attributes.push(`code="${escapeFrameAttribute(code)}"`);
  return `<tool_output ${attributes.join(" ")}>\n${neutralizeFrameTags(output)}\n</tool_output>`;
}

/** The marker an elided tool result is replaced with. */
export function elisionMarker(toolName: string): string {
  // The marker stands outside any frame, so a name the model made up is not repeated in it.
  const name = /^[\w.:-]{1,64}$/.test(toolName) ? toolName : "that tool";
  return `[tool result elided to save context; call ${name} again to see it]`;
}

/** The characters a transcript takes (≈ 4 per token), tool calls' arguments included. */
export function transcriptChars(system: string, messages: readonly ModelMessage[]): number {
  let total = system.length;
  for (const message of messages) {
    total += message.content.length;
    if (message.role === "assistant") {
      for (const call of message.toolCalls) {
        total += call.name.length + JSON.stringify(call.input ?? null).length;
      }
    }
  }
  return total;
}
