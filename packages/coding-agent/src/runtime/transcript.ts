import type { ModelMessage } from "./model.js";

/**
 * Delimit a tool's output as data: `<tool_output tool="read_file">...</tool_output>`. A closing
 * tag inside the output is escaped so the output cannot end the block early and pass for the
 * runtime's own words.
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
  const escaped = output.replace(/<(\/?)tool_output/gi, "&lt;$1tool_output");
  const attributes = [`tool="${toolName}"`];
  if (error) attributes.push('error="true"');
  if (code !== undefined) attributes.push(`code="${code}"`);
  return `<tool_output ${attributes.join(" ")}>\n${escaped}\n</tool_output>`;
}

/** The marker an elided tool result is replaced with. */
export function elisionMarker(toolName: string): string {
  return `[tool result elided to save context; call ${toolName} again to see it]`;
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
