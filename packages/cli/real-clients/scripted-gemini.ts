// A scripted model behind the Gemini API on 127.0.0.1, for driving Gemini CLI headless
// (GOOGLE_GEMINI_BASE_URL): each generateContent or streamGenerateContent answer asks for the
// next tool call of the script, and every functionResponse the CLI sends back is recorded as the
// text its model would read.
import type { ServerResponse } from "node:http";
import type { ScriptedCall } from "./scripted-anthropic.js";
import {
  type RecordedResult,
  type ScriptedModel,
  type ScriptedRequest,
  serveScripted,
} from "./scripted-server.js";

interface Part {
  text?: string;
  functionCall?: { id?: string; name: string; args?: unknown };
  functionResponse?: {
    id?: string;
    name?: string;
    response?: Record<string, unknown>;
    parts?: Part[];
  };
  inlineData?: unknown;
}
interface GenerateRequest {
  contents?: Array<{ role?: string; parts?: Part[] }>;
  tools?: Array<{ functionDeclarations?: Array<{ name?: string }> }>;
}

/**
 * The text a functionResponse hands the model: Gemini CLI puts a tool's text under
 * `response.output` (the error under `response.error`); anything else is recorded as JSON, so a
 * dump shows as one.
 */
function responseText(response: Record<string, unknown> | undefined): string {
  if (response === undefined) return "";
  const keys = Object.keys(response);
  if (keys.length === 1 && typeof response.output === "string") return response.output;
  if (keys.length === 1 && typeof response.error === "string") return response.error;
  return JSON.stringify(response);
}

/**
 * Serve the script on 127.0.0.1; the CLI's base URL is `url`. A step's `tool` is the pleach
 * tool's name: the offered tool of the `pleach` server that ends with it is called, whatever
 * prefix the CLI gives MCP tools (its own read_file is not pleach's).
 */
export async function startScriptedGemini(script: ScriptedCall[]): Promise<ScriptedModel> {
  const state = { results: [] as RecordedResult[], sideRequests: 0 };
  const { results } = state;

  function handle({ method, url, body: parsed }: ScriptedRequest, response: ServerResponse) {
    const stream = url.pathname.endsWith(":streamGenerateContent");
    if (method !== "POST" || !(stream || url.pathname.endsWith(":generateContent"))) {
      // countTokens and anything else: a small answer that ends the side path.
      response.writeHead(url.pathname.endsWith(":countTokens") ? 200 : 404, {
        "content-type": "application/json",
      });
      response.end(JSON.stringify({ totalTokens: 100 }));
      return;
    }
    const body = parsed as GenerateRequest;
    const offered = (body.tools ?? []).flatMap((tool) =>
      (tool.functionDeclarations ?? []).map((declaration) => declaration.name ?? ""),
    );
    const nameOf = (tool: string) =>
      offered.find((name) => name.includes("pleach") && name.endsWith(tool));
    if (!script.every((call) => nameOf(call.tool) !== undefined)) {
      state.sideRequests++;
      return reply(response, stream, { text: "ok" });
    }
    const answers = (body.contents ?? [])
      .flatMap((content) => content.parts ?? [])
      .flatMap((part) => (part.functionResponse ? [part.functionResponse] : []));
    for (const answer of answers) {
      const index = Number(/^call_script_(\d+)$/.exec(answer.id ?? "")?.[1]);
      const call = script[index];
      if (call === undefined || results.some((result) => result.index === index)) continue;
      results.push({
        ...call,
        index,
        text: responseText(answer.response),
        isError: answer.response !== undefined && "error" in answer.response,
        otherBlocks: (answer.parts ?? []).map((part) => Object.keys(part).join("+")),
      });
    }
    const next = answers.length;
    const call = script[next];
    if (call === undefined) return reply(response, stream, { text: "done" });
    return reply(response, stream, {
      functionCall: {
        id: `call_script_${next}`,
        name: nameOf(call.tool) ?? call.tool,
        args: call.input,
      },
    });
  }

  return serveScripted(handle, state, (message) => ({
    error: { code: 500, message, status: "INTERNAL" },
  }));
}

function reply(response: ServerResponse, stream: boolean, part: Part) {
  const chunk = {
    candidates: [{ content: { role: "model", parts: [part] }, finishReason: "STOP", index: 0 }],
    usageMetadata: { promptTokenCount: 100, candidatesTokenCount: 10, totalTokenCount: 110 },
    modelVersion: "scripted",
  };
  if (!stream) {
    response.writeHead(200, { "content-type": "application/json" });
    response.end(JSON.stringify(chunk));
    return;
  }
  response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  response.write(`data: ${JSON.stringify(chunk)}\r\n\r\n`);
  response.end();
}
