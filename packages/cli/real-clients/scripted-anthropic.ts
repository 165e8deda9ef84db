// A scripted model behind the Anthropic Messages API on 127.0.0.1, for driving a real agent CLI
// (Claude Code) headless: each response asks for the next tool call of the script, and every
// tool_result the CLI sends back is recorded as the text its model would read.
import type { ServerResponse } from "node:http";
import {
  type RecordedResult,
  type ScriptedModel,
  type ScriptedRequest,
  serveScripted,
} from "./scripted-server.js";

export type { RecordedResult, ScriptedModel };

/** One step of the script: a tool to call (its name as the CLI offers it) and its input. */
export interface ScriptedCall {
  tool: string;
  input: Record<string, unknown>;
}

interface ContentBlock {
  type: string;
  text?: string;
  tool_use_id?: string;
  content?: string | ContentBlock[];
  is_error?: boolean;
}
interface MessagesRequest {
  stream?: boolean;
  tools?: Array<{ name: string }>;
  messages: Array<{ role: string; content: string | ContentBlock[] }>;
}

/** Serve the script on 127.0.0.1 (a port of its own); the CLI's base URL is `url`. */
export async function startScriptedAnthropic(script: ScriptedCall[]): Promise<ScriptedModel> {
  const state = { results: [] as RecordedResult[], sideRequests: 0 };
  const { results } = state;

  function handle({ method, url, body: parsed }: ScriptedRequest, response: ServerResponse) {
    if (method !== "POST" || !url.pathname.endsWith("/messages")) {
      // count_tokens and anything else: a small answer that ends the side path.
      response.writeHead(url.pathname.endsWith("/count_tokens") ? 200 : 404, {
        "content-type": "application/json",
      });
      response.end(JSON.stringify({ input_tokens: 100 }));
      return;
    }
    const body = parsed as MessagesRequest;
    const offered = new Set((body.tools ?? []).map((tool) => tool.name));
    if (!script.every((call) => offered.has(call.tool))) {
      state.sideRequests++;
      return reply(response, body.stream === true, { text: "ok" });
    }
    // The conversation so far: the calls made are the tool_use ids this server gave out.
    const toolResults = body.messages
      .flatMap((message) => (typeof message.content === "string" ? [] : message.content))
      .filter((block) => block.type === "tool_result");
    const last = body.messages.at(-1);
    const fresh = typeof last?.content === "string" ? [] : (last?.content ?? []);
    for (const block of fresh) {
      if (block.type !== "tool_result") continue;
      const index = Number(/^toolu_script_(\d+)$/.exec(block.tool_use_id ?? "")?.[1]);
      const call = script[index];
      if (call === undefined) continue;
      const blocks =
        typeof block.content === "string"
          ? [{ type: "text", text: block.content }]
          : (block.content ?? []);
      results.push({
        ...call,
        text: blocks.map((part) => (part.type === "text" ? (part.text ?? "") : "")).join(""),
        isError: block.is_error === true,
        otherBlocks: blocks.filter((part) => part.type !== "text").map((part) => part.type),
      });
    }
    const next = toolResults.length;
    const call = script[next];
    if (call === undefined) return reply(response, body.stream === true, { text: "done" });
    return reply(response, body.stream === true, {
      toolUse: { id: `toolu_script_${next}`, name: call.tool, input: call.input },
    });
  }

  return serveScripted(handle, state, (message) => ({ type: "error", error: { message } }));
}

type Turn =
  | { text: string }
  | { toolUse: { id: string; name: string; input: Record<string, unknown> } };

function reply(response: ServerResponse, stream: boolean, turn: Turn) {
  const block =
    "text" in turn ? { type: "text", text: turn.text } : { type: "tool_use", ...turn.toolUse };
  const stopReason = "text" in turn ? "end_turn" : "tool_use";
  const usage = { input_tokens: 100, output_tokens: 10 };
  const message = {
    id: `msg_${Math.random().toString(36).slice(2)}`,
    type: "message",
    role: "assistant",
    model: "scripted",
    stop_sequence: null,
  };
  if (!stream) {
    response.writeHead(200, { "content-type": "application/json" });
    response.end(JSON.stringify({ ...message, content: [block], stop_reason: stopReason, usage }));
    return;
  }
  response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  const send = (event: string, data: unknown) =>
    response.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  send("message_start", {
    type: "message_start",
    message: { ...message, content: [], stop_reason: null, usage },
  });
  if ("text" in turn) {
    send("content_block_start", {
      type: "content_block_start",
      index: 0,
      content_block: { type: "text", text: "" },
    });
    send("content_block_delta", {
      type: "content_block_delta",
      index: 0,
      delta: { type: "text_delta", text: turn.text },
    });
  } else {
    send("content_block_start", {
      type: "content_block_start",
      index: 0,
      content_block: { ...block, input: {} },
    });
    send("content_block_delta", {
      type: "content_block_delta",
      index: 0,
      delta: { type: "input_json_delta", partial_json: JSON.stringify(turn.toolUse.input) },
    });
  }
  send("content_block_stop", { type: "content_block_stop", index: 0 });
  send("message_delta", {
    type: "message_delta",
    delta: { stop_reason: stopReason, stop_sequence: null },
    usage: { output_tokens: 10 },
  });
  send("message_stop", { type: "message_stop" });
  response.end();
}
