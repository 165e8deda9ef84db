import type { ModelMessage } from "./model.js";
import { elisionMarker, transcriptChars } from "./transcript.js";

/**
 * Past the budget, replace the oldest tool results with a marker saying how to get them back.
 * The results of the latest step are kept: the model has not seen them yet. Each replaced
 * message and its replacement join `elided`, so that nothing points the model at them.
 */
export function elideOldResults({
  system,
  transcript,
  elided,
  contextBudgetChars,
}: {
  system: string;
  transcript: ModelMessage[];
  elided: Set<ModelMessage>;
  contextBudgetChars: number;
}): void {
  let total = transcriptChars(system, transcript);
  if (total <= contextBudgetChars) return;
  let lastAssistant = transcript.length - 1;
  while (lastAssistant >= 0 && transcript[lastAssistant]?.role !== "assistant") lastAssistant -= 1;
  for (let index = 0; index < lastAssistant && total > contextBudgetChars; index += 1) {
    const message = transcript[index];
    if (message === undefined || message.role !== "tool" || elided.has(message)) continue;
    const marker = elisionMarker(message.toolName);
    if (message.content.length <= marker.length) continue;
    const replacement: ModelMessage = { ...message, content: marker };
    total -= message.content.length - marker.length;
    transcript[index] = replacement;
    elided.add(message);
    elided.add(replacement);
  }
}
