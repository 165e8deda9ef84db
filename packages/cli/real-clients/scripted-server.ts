// The plumbing both scripted models share: an HTTP server on 127.0.0.1 (a port of its own) that
// answers a handler's failure with a 500 in the API's error shape, and the recorder they hand out.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** A tool result as the CLI sent it to the model. */
export interface RecordedResult {
  tool: string;
  input: Record<string, unknown>;
  /** The text the model reads: the result's text blocks, joined. */
  text: string;
  isError: boolean;
  /** Blocks that are not text (an image, a document), by type. */
  otherBlocks: string[];
  /** The step of the script it answers, where the wire repeats earlier results. */
  index?: number;
}

/** What a scripted model returns (startScriptedAnthropic, startScriptedResponses, startScriptedGemini). */
export interface ScriptedModel {
  url: string;
  results: RecordedResult[];
  /** Requests that did not carry the script's tools (titles, quota checks), answered with text. */
  sideRequests: number;
  close(): Promise<void>;
}

/** A request's method, URL and parsed JSON body (`undefined` when it has none). */
export interface ScriptedRequest {
  method: string | undefined;
  url: URL;
  body: unknown;
}

/**
 * Serve `handle` on 127.0.0.1; `errorBody` shapes the 500 a thrown error gets. The model's
 * `results` and `sideRequests` are the ones `handle` fills through `state`.
 */
export async function serveScripted(
  handle: (request: ScriptedRequest, response: ServerResponse) => void | Promise<void>,
  state: { results: RecordedResult[]; sideRequests: number },
  errorBody: (message: string) => unknown,
): Promise<ScriptedModel> {
  const server = createServer((request, response) => {
    void readRequest(request)
      .then((parsed) => handle(parsed, response))
      .catch((error: unknown) => {
        response.writeHead(500, { "content-type": "application/json" });
        response.end(JSON.stringify(errorBody(String(error))));
      });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    results: state.results,
    get sideRequests() {
      return state.sideRequests;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function readRequest(request: IncomingMessage): Promise<ScriptedRequest> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  return {
    method: request.method,
    url: new URL(request.url ?? "/", "http://127.0.0.1"),
    body: text === "" ? undefined : JSON.parse(text),
  };
}
