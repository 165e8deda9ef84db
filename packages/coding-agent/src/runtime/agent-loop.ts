import { type AnyToolDefinition, toolInputJSONSchema } from "@pleach/core";
import { sandboxCheckpointsOf } from "@pleach/core/sandbox";
import type { SandboxProvider } from "../sandbox/index.js";
import { createFileState } from "../tools/shared/file-state.js";
import {
  createTypeDiagnostics,
  type TypeDiagnosticsOptions,
} from "../tools/type-diagnostics/type-diagnostics.js";
import type {
  AgentEvent,
  AgentResult,
  AgentStopReason,
  AgentUsage,
  ToolFactoryContext,
} from "./agent-events.js";
import {
  type ModelAdapter,
  ModelError,
  type ModelMessage,
  type ModelToolDefinition,
} from "./model.js";
import { elideOldResults } from "./prune-context.js";
import { createReadMemory } from "./read-memory.js";
import { limitStepToolCalls, type StepLimits } from "./step-limits.js";
import { runModelToolCall, toolMessage } from "./tool-call.js";
import { createUndoStepTool, stepCheckpointLabel } from "./undo-step-tool.js";

/** The runtime's options, defaults applied. */
interface LoopSettings {
  sandboxProvider: SandboxProvider;
  model: ModelAdapter;
  tools: (context: ToolFactoryContext) => readonly AnyToolDefinition[];
  system: string;
  maxSteps: number;
  maxTotalTokens: number;
  contextBudgetChars: number;
  maxResultChars: number;
  keepFileState: boolean;
  /** Set with `diagnostics: "types"`: the session's type check is made with these. */
  typeDiagnostics: TypeDiagnosticsOptions | undefined;
  stepLimits: StepLimits;
  /** Take a checkpoint before each step's tool calls, where the client offers them. */
  checkpoints: boolean;
  /** Give the model `undo_step` over those checkpoints. */
  undoTool: boolean;
}

/**
 * One run: acquire a session, then ask the model and run the tool calls it asks for until a final
 * answer, a limit or an abort; the session is released whatever happens.
 */
export async function runLoop({
  task,
  abortSignal,
  emit,
  settings,
}: {
  task: string;
  abortSignal: AbortSignal | undefined;
  emit: (event: AgentEvent) => void;
  settings: LoopSettings;
}): Promise<AgentResult> {
  const { model, system, maxSteps, maxTotalTokens, contextBudgetChars, maxResultChars } = settings;
  const transcript: ModelMessage[] = [{ role: "user", content: task }];
  const usage: AgentUsage = { inputTokens: 0, outputTokens: 0, totalTokens: 0 };
  const elided = new Set<ModelMessage>();
  let steps = 0;
  let toolCallCount = 0;
  let finalText = "";
  const finish = (
    stopReason: AgentStopReason,
    error?: { kind: string; message: string },
  ): AgentResult => ({
    stopReason,
    finalText,
    steps,
    toolCalls: toolCallCount,
    usage: { ...usage },
    transcript: [...transcript],
    ...(error === undefined ? {} : { error }),
  });
  if (abortSignal?.aborted) return finish("aborted");

  const session = await settings.sandboxProvider.acquire({ abortSignal });
  const typeDiagnostics =
    settings.typeDiagnostics === undefined
      ? undefined
      : createTypeDiagnostics(session.client, settings.typeDiagnostics);
  try {
    const fileState = settings.keepFileState ? createFileState() : undefined;
    const made = settings.tools({
      client: session.client,
      fileState,
      typeDiagnostics,
      maxResultChars,
    });
    const checkpoints = settings.checkpoints ? sandboxCheckpointsOf(session.client) : undefined;
    /** The checkpoint taken before each step's tool calls, by step. */
    const taken = new Map<number, string>();
    const undo =
      settings.undoTool && checkpoints !== undefined
        ? [createUndoStepTool(checkpoints, taken)]
        : [];
    const toolList = [...made, ...undo, ...(settings.model.extraTools?.(made) ?? [])];
    const toolDefinitions: ModelToolDefinition[] = toolList.map((tool) => ({
      name: tool.name,
      description: tool.description,
      parameters: toolInputJSONSchema(tool),
    }));
    const readMemory =
      fileState === undefined
        ? undefined
        : createReadMemory({ client: session.client, fileState, elided });

    while (true) {
      if (abortSignal?.aborted) return finish("aborted");
      if (steps >= maxSteps) return finish("max-steps");
      if (usage.totalTokens >= maxTotalTokens) return finish("token-budget");
      steps += 1;
      const step = steps;
      emit({ type: "step-start", step });
      let response: Awaited<ReturnType<ModelAdapter["generate"]>>;
      try {
        response = await model.generate({
          system,
          messages: transcript,
          tools: toolDefinitions,
          abortSignal,
        });
      } catch (error) {
        if (abortSignal?.aborted) return finish("aborted");
        const kind = error instanceof ModelError ? error.kind : "unknown";
        const message = error instanceof Error ? error.message : String(error);
        return finish("model-error", { kind, message });
      }
      if (response.usage !== undefined) {
        usage.inputTokens += response.usage.inputTokens;
        usage.outputTokens += response.usage.outputTokens;
        usage.totalTokens = usage.inputTokens + usage.outputTokens;
        emit({ type: "usage", step, usage: response.usage, total: { ...usage } });
      }
      if (response.text !== "") {
        finalText = response.text;
        emit({ type: "text", step, text: response.text });
      }
      const limited = limitStepToolCalls(response.toolCalls, settings.stepLimits);
      const toolCalls = limited.map((entry) => entry.call);
      transcript.push({ role: "assistant", content: response.text, toolCalls });
      if (toolCalls.length === 0) return finish("final-answer");
      if (checkpoints !== undefined) {
        try {
          const checkpoint = await checkpoints.take(stepCheckpointLabel(step));
          taken.set(step, checkpoint.id);
          emit({ type: "checkpoint", step, checkpointId: checkpoint.id });
        } catch (error) {
          emit({ type: "checkpoint", step, error: (error as Error).message });
        }
      }

      for (const { call, refusal } of limited) {
        if (abortSignal?.aborted) {
          // Every call needs a result for the transcript to stay well-formed for the provider.
          transcript.push(toolMessage(call, { output: "aborted", error: true }, maxResultChars));
          continue;
        }
        toolCallCount += 1;
        emit({
          type: "tool-call",
          step,
          toolCallId: call.id,
          toolName: call.name,
          input: call.input,
        });
        const { result, cached, read } =
          refusal === undefined
            ? await runModelToolCall({
                call,
                tools: toolList,
                readMemory,
                abortSignal,
                maxResultChars,
              })
            : { result: refusal, cached: false, read: undefined };
        const message = toolMessage(call, result, maxResultChars);
        transcript.push(message);
        if (read !== undefined && !result.error) readMemory?.remember(read, { step, message });
        emit({
          type: "tool-result",
          step,
          toolCallId: call.id,
          toolName: call.name,
          output: result.output,
          error: result.error,
          ...(result.code === undefined ? {} : { code: result.code }),
          ...(cached ? { cached } : {}),
        });
      }
      elideOldResults({ system, transcript, elided, contextBudgetChars });
    }
  } finally {
    await typeDiagnostics?.close();
    await session.release();
  }
}
