// A scripted model behind the OpenAI Responses API on 127.0.0.1, for driving Codex and Copilot
// CLI headless: each response asks for the next tool call of the script, and every
// function_call_output the CLI sends back is recorded as the text its model would read.
import type { ServerResponse } from "node:http";
import type { ScriptedCall } from "./scripted-anthropic.js";
import {
  type RecordedResult,
  type ScriptedModel,
  type ScriptedRequest,
  serveScripted,
} from "./scripted-server.js";

interface InputItem {
  type?: string;
  call_id?: string;
  output?: string | Array<{ type: string; text?: string }>;
}
interface OfferedTool {
  name?: string;
  type?: string;
  /** A namespace's tools (Codex offers an MCP server's tools as the namespace `mcp__<server>`). */
  tools?: OfferedTool[];
}
interface ResponsesRequest {
  tools?: OfferedTool[];
  input?: InputItem[];
}

/**
 * Serve the script on 127.0.0.1; the CLI's base URL is `${url}/v1`. A step's `tool` is the
 * pleach tool's name: the offered tool whose name ends with it is called, whatever prefix the
 * CLI gives MCP tools.
 */
export async function startScriptedResponses(script: ScriptedCall[]): Promise<ScriptedModel> {
  const state = { results: [] as RecordedResult[], sideRequests: 0 };
  const { results } = state;

  function handle({ method, url, body: parsed }: ScriptedRequest, response: ServerResponse) {
    if (method !== "POST" || !url.pathname.endsWith("/responses")) {
      response.writeHead(404, { "content-type": "application/json" });
      response.end(JSON.stringify({ error: { message: "not scripted" } }));
      return;
    }
    const body = parsed as ResponsesRequest;
    const offered = (body.tools ?? []).flatMap((tool) =>
      tool.type === "namespace"
        ? (tool.tools ?? []).map((inner) => ({ namespace: tool.name, name: inner.name ?? "" }))
        : [{ namespace: undefined, name: tool.name ?? "" }],
    );
    const nameOf = (tool: string) =>
      offered.find(({ namespace, name }) =>
        // Codex offers `mcp__pleach__read_file` (or a namespace), Copilot CLI `pleach-read_file`.
        namespace === undefined
          ? name.endsWith(`__${tool}`) || name === `pleach-${tool}`
          : name === tool,
      );
    if (!script.every((call) => nameOf(call.tool) !== undefined)) {
      state.sideRequests++;
      return reply(response, { text: "ok" });
    }
    const outputs = (body.input ?? []).filter((item) => item.type === "function_call_output");
    for (const item of outputs) {
      const index = Number(/^call_script_(\d+)$/.exec(item.call_id ?? "")?.[1]);
      const call = script[index];
      if (call === undefined || results.some((result) => result.index === index)) continue;
      const parts =
        typeof item.output === "string"
          ? [{ type: "input_text", text: item.output }]
          : (item.output ?? []);
      results.push({
        ...call,
        index,
        text: parts.map((part) => part.text ?? "").join(""),
        isError: false,
        otherBlocks: parts
          .filter((part) => part.type !== "input_text" && part.type !== "output_text")
          .map((part) => part.type),
      });
    }
    const next = outputs.length;
    const call = script[next];
    if (call === undefined) return reply(response, { text: "done" });
    const { namespace, name } = nameOf(call.tool) ?? { name: call.tool };
    return reply(response, {
      call: {
        call_id: `call_script_${next}`,
        name,
        ...(namespace === undefined ? {} : { namespace }),
        arguments: JSON.stringify(call.input),
      },
    });
  }

  return serveScripted(handle, state, (message) => ({ error: { message } }));
}

type Turn =
  | { text: string }
  | { call: { call_id: string; name: string; namespace?: string; arguments: string } };

let counter = 0;

function reply(response: ServerResponse, turn: Turn) {
  const id = `resp_${++counter}`;
  const item =
    "text" in turn
      ? {
          type: "message",
          id: `msg_${counter}`,
          role: "assistant",
          status: "completed",
          content: [{ type: "output_text", text: turn.text, annotations: [] }],
        }
      : { type: "function_call", id: `fc_${counter}`, status: "completed", ...turn.call };
  response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  const send = (data: { type: string } & Record<string, unknown>) =>
    response.write(`event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`);
  send({ type: "response.created", response: { id, object: "response", status: "in_progress" } });
  send({ type: "response.output_item.added", output_index: 0, item });
  send({ type: "response.output_item.done", output_index: 0, item });
  send({
    type: "response.completed",
    response: {
      id,
      object: "response",
      status: "completed",
      output: [item],
      usage: {
        input_tokens: 100,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: 10,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: 110,
      },
    },
  });
  response.end();
}
