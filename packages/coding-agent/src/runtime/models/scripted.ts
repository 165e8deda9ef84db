import type { ModelAdapter, ModelRequest, ModelResponse, ModelUsage } from "../model.js";

/** One scripted answer: text, tool calls (ids are made up when left out), or both. */
export interface ScriptedStep {
  text?: string;
  toolCalls?: Array<{ name: string; input: unknown; id?: string }>;
  usage?: ModelUsage;
}

/** Options of {@link createScriptedModel}. */
export interface ScriptedModelOptions {
  /**
   * The answers, in order, or a function that makes the answer to request number `index`
   * (0-based) from what the model was sent, such as the last tool result.
   */
  steps: readonly (ScriptedStep | ((request: ModelRequest, index: number) => ScriptedStep))[];
  /**
   * What to answer once the script is used up.
   * @default { text: "(the script has ended)" }
   */
  whenDone?: ScriptedStep;
  /**
   * The model's name in results.
   * @default "scripted"
   */
  name?: string;
}

/** A scripted model for tests and `pleach demo`, with the requests it was sent. */
export interface ScriptedModel extends ModelAdapter {
  readonly requests: ModelRequest[];
}

/**
 * A model that answers from a script: no network, no key. Usage is counted as a character count
 * over four unless a step gives its own.
 */
export function createScriptedModel({
  steps,
  whenDone = { text: "(the script has ended)" },
  name = "scripted",
}: ScriptedModelOptions): ScriptedModel {
  const requests: ModelRequest[] = [];
  return {
    name,
    requests,
    async generate(request): Promise<ModelResponse> {
      const index = requests.length;
      requests.push({ ...request, messages: [...request.messages] });
      const entry = steps[index];
      const step =
        entry === undefined
          ? whenDone
          : typeof entry === "function"
            ? entry(request, index)
            : entry;
      const toolCalls = (step.toolCalls ?? []).map((call, callIndex) => ({
        id: call.id ?? `call_${index + 1}_${callIndex + 1}`,
        name: call.name,
        input: call.input,
      }));
      const sent = request.system.length + JSON.stringify(request.messages).length;
      const text = step.text ?? "";
      return {
        text,
        toolCalls,
        usage: step.usage ?? {
          inputTokens: Math.ceil(sent / 4),
          outputTokens: Math.ceil((text.length + JSON.stringify(toolCalls).length) / 4),
        },
        stopReason: toolCalls.length > 0 ? "tool_calls" : "stop",
      };
    },
  };
}
