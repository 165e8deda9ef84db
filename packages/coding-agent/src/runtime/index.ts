export type {
  AgentEvent,
  AgentResult,
  AgentRun,
  AgentRunOptions,
  AgentStopReason,
  AgentUsage,
  CodingAgentRuntime,
  CodingAgentRuntimeOptions,
  ToolFactoryContext,
} from "./agent-runtime.js";
export { createCodingAgentRuntime, DEFAULT_SYSTEM_PROMPT } from "./agent-runtime.js";
export type {
  ModelAdapter,
  ModelErrorKind,
  ModelErrorOptions,
  ModelMessage,
  ModelRequest,
  ModelResponse,
  ModelToolCall,
  ModelToolDefinition,
  ModelUsage,
} from "./model.js";
export { ModelError } from "./model.js";
export type { AISDKLanguageModel, AISDKModelOptions } from "./models/ai-sdk.js";
export { createAISDKModel } from "./models/ai-sdk.js";
export type { AnthropicModelOptions } from "./models/anthropic.js";
export { createAnthropicModel } from "./models/anthropic.js";
export type { FetchFunction, RetryOptions } from "./models/http.js";
export type { OpenAIChatModelOptions } from "./models/openai-chat.js";
export { createOpenAIChatModel } from "./models/openai-chat.js";
export type { OpenAIResponsesModelOptions } from "./models/openai-responses.js";
export { createOpenAIResponsesModel } from "./models/openai-responses.js";
export type { ScriptedModel, ScriptedModelOptions, ScriptedStep } from "./models/scripted.js";
export { createScriptedModel } from "./models/scripted.js";
export type { Toolset, ToolsetOptions } from "./toolset.js";
export { createToolset } from "./toolset.js";
export { checkpointStep, stepCheckpointLabel } from "./undo-step-tool.js";
