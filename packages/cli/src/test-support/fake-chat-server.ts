import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { cleanUpAfter } from "@pleach/core/testing";

/** A reply of the fake OpenAI-compatible server: text, or tool calls. */
export interface FakeReply {
  content?: string;
  tool_calls?: Array<{ name: string; arguments: unknown }>;
}

/** What the fake server received, request by request. */
export type FakeChatRequest = { messages: Array<{ role: string; content: unknown }> };

/**
 * An OpenAI-compatible Chat Completions server on loopback answering `replies` in turn (then
 * "done"), each with 10 prompt and 5 completion tokens; closed when the current test finishes.
 */
export async function fakeChatServer(
  replies: FakeReply[],
): Promise<{ port: number; received: FakeChatRequest[] }> {
  const received: FakeChatRequest[] = [];
  const server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => {
      body += chunk;
    });
    request.on("end", () => {
      received.push(JSON.parse(body));
      const reply = replies.shift() ?? { content: "done" };
      response.writeHead(200, { "content-type": "application/json" });
      response.end(
        JSON.stringify({
          choices: [
            {
              message: {
                role: "assistant",
                content: reply.content ?? null,
                tool_calls: reply.tool_calls?.map((call, index) => ({
                  id: `call_${received.length}_${index}`,
                  type: "function",
                  function: { name: call.name, arguments: JSON.stringify(call.arguments) },
                })),
              },
              finish_reason: reply.tool_calls === undefined ? "stop" : "tool_calls",
            },
          ],
          usage: { prompt_tokens: 10, completion_tokens: 5 },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanUpAfter(server, (open) => new Promise<void>((resolve) => open.close(() => resolve())));
  const { port } = server.address() as AddressInfo;
  return { port, received };
}
