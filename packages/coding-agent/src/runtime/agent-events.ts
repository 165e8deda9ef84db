import type { SandboxClient } from "../sandbox/index.js";
import type { FileState } from "../tools/shared/file-state.js";
import type { TypeDiagnostics } from "../tools/type-diagnostics/type-diagnostics.js";
import type { ModelMessage, ModelUsage } from "./model.js";

/** What a session's tools are made from. */
export interface ToolFactoryContext {
  client: SandboxClient;
  /** The session's file state; `undefined` when the runtime was built with `fileState: false`. */
  fileState: FileState | undefined;
  /** The session's type check; `undefined` unless the runtime was built with `diagnostics: "types"`. */
  typeDiagnostics: TypeDiagnostics | undefined;
  /**
   * The runtime's `maxResultChars`: the most of one result the model sees, for the tools to fit
   * their pages and cuts in (`createCodingAgentTools`' `maxResultChars`).
   */
  maxResultChars: number;
}

/** Why a run stopped. */
export type AgentStopReason =
  | "final-answer"
  | "max-steps"
  | "token-budget"
  | "aborted"
  | "model-error";

/** Tokens used, summed. */
export interface AgentUsage extends ModelUsage {
  totalTokens: number;
}

/** The outcome of a run. */
export interface AgentResult {
  stopReason: AgentStopReason;
  /** The model's last text (its final answer when `stopReason` is `final-answer`). */
  finalText: string;
  /** Model calls made. */
  steps: number;
  /** Tool calls the model asked for, those refused by a cap per step included. */
  toolCalls: number;
  usage: AgentUsage;
  /** The whole conversation as the model last saw it (elided results included). */
  transcript: ModelMessage[];
  /** What went wrong when `stopReason` is `model-error`. */
  error?: { kind: string; message: string };
}

/** What happens during a run, in order. */
export type AgentEvent =
  | { type: "step-start"; step: number }
  | { type: "text"; step: number; text: string }
  | { type: "tool-call"; step: number; toolCallId: string; toolName: string; input: unknown }
  | {
      type: "tool-result";
      step: number;
      toolCallId: string;
      toolName: string;
      output: string;
      error: boolean;
      code?: string;
      /** The result was answered from the file state (an unchanged re-read), not by the tool. */
      cached?: boolean;
    }
  | { type: "usage"; step: number; usage: ModelUsage; total: AgentUsage }
  /**
   * The workspace's checkpoint taken before a step's tool calls ran (`checkpoints`): restore it
   * (`checkpoints.restore(checkpointId)`, `pleach run --undo-last`) to undo the step; `error` says
   * why none was taken (the run goes on).
   */
  | { type: "checkpoint"; step: number; checkpointId?: string; error?: string }
  | { type: "done"; result: AgentResult };
