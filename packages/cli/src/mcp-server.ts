import { performance } from "node:perf_hooks";
import type {
  CallToolResult,
  ListToolsResult,
  ServerCapabilities,
  ServerContext,
  Tool,
} from "@modelcontextprotocol/server";
import { ProtocolError, ProtocolErrorCode, Server } from "@modelcontextprotocol/server";
import {
  type AnyToolDefinition,
  MODEL_OUTPUT_LIMIT,
  renderToolResult,
  toolInputJSONSchema,
} from "@pleach/core";
import { createKeptOutputResources, type KeptOutputReader } from "./mcp-kept-output.js";
import { createMcpLogging, type McpLogging } from "./mcp-logging.js";
import { boundStructuredContent } from "./mcp-structured.js";
import { describeTool, hasInput, PLEACH_ICON, type ResultShape } from "./mcp-tool-listing.js";
import { startTicker } from "./progress.js";

/** The `_meta` key under which an error result carries its {@link ToolError} code. */
export const MCP_ERROR_CODE_META_KEY = "pleach/errorCode";

/**
 * The `_meta` key under which a result says its `structuredContent` was cut to the budget (only
 * with {@link CreatePleachMcpServerOptions.structuredOutput}).
 */
export const MCP_STRUCTURED_CUT_META_KEY = "pleach/structuredContentCut";

/**
 * What the server tells a client's model about itself when it connects (`instructions`): short,
 * because clients put it in the model's context beside every tool description.
 */
export const PLEACH_MCP_INSTRUCTIONS =
  "pleach's tools read, search and change the files of one workspace and run commands there in a sandbox. " +
  "Every result is bounded (50,000 characters by default): a longer one keeps its head and tail and says what it left out. " +
  "read_file pages a long file: its result ends with the offset to call it again with. " +
  "A command's cut output is kept whole under /run/pleach-output/ (the result names the file, and links it as a resource): read it with read_file offset/limit or search it with grep in bash. " +
  "Run work that may outlast the client's tool timeout as a background job (bash background: true, then job_output).";

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
  /**
   * While a call runs, how often its elapsed time is reported: as `notifications/progress` when
   * the request carries a `progressToken`, and as a `debug` log message. The first report comes
   * after one interval, so quick calls send none.
   * @default 2000
   */
  progressIntervalMs?: number;
  /**
   * The most characters of a result's text (and, with `structuredOutput`, of its
   * `structuredContent` as JSON), cut with the head and tail kept as everywhere in pleach. The
   * tools' own pages (read_file's) are sized by whoever makes the tools: make them with the same
   * budget (`createCodingAgentTools(client, { maxResultChars })`) so that their hints stay true.
   * @default 50_000
   */
  maxResultChars?: number;
  /**
   * List each tool's `outputSchema` and send its output as `structuredContent` beside the text,
   * for programs that read the JSON. Off by default because the agent CLIs hand their model the
   * JSON instead of the text when it is there (Claude Code, Codex), or both (Copilot CLI).
   * @default false
   */
  structuredOutput?: boolean;
  /**
   * The `instructions` the server gives clients for their model.
   * @default PLEACH_MCP_INSTRUCTIONS
   */
  instructions?: string;
  /**
   * Reads a kept full output (`/run/pleach-output/NAME`, as a tool's result names it) the way
   * read_file reads it: one bounded page, with its hint. When given, a result whose output was
   * kept whole also carries a `resource_link` to it, and `resources/read` answers for the link.
   */
  readKeptOutput?: KeptOutputReader;
  /**
   * Where a server-side failure of a call (a crash, not a tool's own refusal) is written, one line
   * each: stderr in `pleach mcp`. MCP 2026-07-28 deprecates log notifications for this; they are
   * still sent to a client that asked for them.
   */
  logError?: (line: string) => void;
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
 * Make an MCP server (the v2 SDK's low-level `Server`) that lists `tools` with their input JSON
 * Schemas and annotations, and answers `tools/call` by running the tool: a success returns, as
 * text, what the runtime shows a model (the tool's `toModelOutput`, capped), and with
 * `structuredOutput` also `structuredContent` (the output as JSON, bounded; the output schemas
 * are then listed too); a {@link ToolError} or any other failure returns an `isError` result
 * whose text is the model-readable message (code in `_meta`). Input is validated
 * by the tool itself, so a model gets pleach's field-by-field `INVALID_INPUT` message. Long calls
 * report their elapsed time (progress notifications, log messages), and `logging/setLevel` is
 * answered.
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
  progressIntervalMs = 2000,
  maxResultChars = MODEL_OUTPUT_LIMIT,
  structuredOutput = false,
  instructions = PLEACH_MCP_INSTRUCTIONS,
  readKeptOutput,
  logError,
}: CreatePleachMcpServerOptions): PleachMcpServerFactory {
  if (!Number.isSafeInteger(maxResultChars) || maxResultChars < 1_000) {
    throw new RangeError(
      `maxResultChars must be an integer of at least 1000, got ${maxResultChars}`,
    );
  }
  const shape: ResultShape = { maxResultChars, structuredOutput };
  const served = new Map<string, ServedTool>();
  const jobTool = tools.find((tool) => hasInput(toolInputJSONSchema(tool), "background"))?.name;
  for (const tool of tools) {
    if (served.has(tool.name))
      throw new TypeError(`two tools are named ${JSON.stringify(tool.name)}`);
    served.set(tool.name, { tool, ...describeTool(tool, shape, jobTool) });
  }
  const listResult: ListToolsResult = { tools: [...served.values()].map(({ listing }) => listing) };

  const running = new Set<Promise<unknown>>();
  const logging = createMcpLogging();
  const kept = readKeptOutput === undefined ? undefined : createKeptOutputResources(readKeptOutput);
  const capabilities: ServerCapabilities = { tools: {}, logging: {} };
  if (kept !== undefined) capabilities.resources = {};
  const factory = () => {
    const server = new Server(
      { ...serverInfo, icons: [PLEACH_ICON] },
      { capabilities, instructions },
    );
    logging.handleSetLevel(server);
    kept?.handle(server, () => abortSignal);
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
      const report = reportCall({
        name,
        ctx: handlerContext,
        logging,
        progressIntervalMs,
        ...(logError === undefined ? {} : { logError }),
      });
      // A cancelled call gets no answer, so no more progress either, however long the tool takes
      // to stop.
      handlerContext.mcpReq.signal.addEventListener("abort", () => report.stop(), { once: true });
      const call = callTool({ entry, args, abortSignal: AbortSignal.any(signals), shape });
      running.add(call);
      try {
        const { result, output } = await call;
        report.finished(result);
        kept?.link(result, output);
        return server.projectCallToolResult(result, entry.listing.outputSchema);
      } finally {
        report.stop();
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

/**
 * Report a running call to the client: its elapsed seconds every `progressIntervalMs` (progress
 * notifications when the request asked for them, `debug` log messages), its start and end as
 * `debug` messages, and a server-side failure (not a tool's own refusal) as an `error` message.
 */
function reportCall({
  name,
  ctx,
  logging,
  progressIntervalMs,
  logError,
}: {
  name: string;
  ctx: ServerContext;
  logging: McpLogging;
  progressIntervalMs: number;
  logError?: (line: string) => void;
}): { finished(result: CallToolResult): void; stop(): void } {
  const progressToken = ctx.mcpReq._meta?.progressToken;
  let lastProgress = 0;
  logging.log(ctx, "debug", `${name} started`);
  const ticker = startTicker({
    delayMs: progressIntervalMs,
    intervalMs: progressIntervalMs,
    onTick: (elapsedMs) => {
      const message = `${name} running… ${Math.floor(elapsedMs / 1000)}s`;
      logging.log(ctx, "debug", message);
      if (progressToken === undefined) return;
      // Seconds to the millisecond, growing with every notification as MCP asks (even if the
      // clock were set back).
      const progress = Math.max(Math.round(elapsedMs) / 1000, lastProgress + 0.001);
      lastProgress = progress;
      ctx.mcpReq
        .notify({ method: "notifications/progress", params: { progressToken, progress, message } })
        .catch(() => {});
    },
  });
  const started = performance.now();
  return {
    finished(result) {
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      const code = result._meta?.[MCP_ERROR_CODE_META_KEY];
      if (code === "INTERNAL") {
        const [block] = result.content;
        const line = `${name} failed: ${block?.type === "text" ? block.text : code}`;
        logError?.(line);
        logging.log(ctx, "error", line);
      }
      const outcome = result.isError ? `failed${code === undefined ? "" : ` (${code})`}` : "done";
      logging.log(ctx, "debug", `${name} ${outcome} in ${seconds}s`);
    },
    stop: () => ticker.stop(),
  };
}

/**
 * Run a tool. `content` is the text the runtime gives a model, rendered and capped by the same
 * `renderToolResult`: the tool's `toModelOutput` (hints such as read_file's "continue at offset
 * N" kept, test failures first). With `structuredOutput`, `structuredContent` is the output as
 * JSON, bounded to the same budget. `isError` says the call failed (a {@link ToolError}, bad
 * input, a crash; its message is the text, its code in `_meta`), not that the tool reported a
 * failure it was asked to find: a failing test run or a command that exits non-zero is a call
 * that did its job, and its text says so first ("exit code 1", "1 failed"). The runtime and the
 * adapters keep `error` set for those, as the Anthropic and AI SDK wires mean it; MCP clients
 * show an `isError` result differently (Gemini CLI sends the model the whole result as JSON).
 */
async function callTool({
  entry: { tool, wrapped },
  args,
  abortSignal,
  shape: { maxResultChars, structuredOutput },
}: {
  entry: ServedTool;
  args: unknown;
  abortSignal: AbortSignal;
  shape: ResultShape;
}): Promise<{ result: CallToolResult; output?: unknown }> {
  try {
    const output = await tool.execute(args, { abortSignal });
    const rendered = renderToolResult(
      { ok: true, result: tool.toModelOutput(output) },
      { maxChars: maxResultChars },
    );
    const result: CallToolResult = {
      content: [{ type: "text", text: rendered.output }],
      isError: false,
    };
    if (structuredOutput) {
      const whole = (wrapped ? { result: output } : output) as Record<string, unknown>;
      const bounded = boundStructuredContent(whole, maxResultChars);
      // A cut that no longer matches the advertised schema would be refused by the client (a
      // string with a pattern, a list with a minimum): then the output goes whole.
      const valid =
        bounded.cut &&
        tool.outputSchema.safeParse(wrapped ? bounded.value.result : bounded.value).success;
      result.structuredContent = valid ? bounded.value : whole;
      if (valid) result._meta = { [MCP_STRUCTURED_CUT_META_KEY]: true };
    }
    return { result, output };
  } catch (error) {
    const rendered = renderToolResult(
      { ok: false, error },
      { abortSignal, maxChars: maxResultChars },
    );
    return {
      result: {
        content: [{ type: "text", text: rendered.output }],
        isError: true,
        _meta: { [MCP_ERROR_CODE_META_KEY]: rendered.code ?? "INTERNAL" },
      },
    };
  }
}
