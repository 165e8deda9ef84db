import type http from "node:http";
import { keptOutputName } from "../session/kept-path.js";
import { badRequest, HttpError, methodNotAllowed } from "./http-errors.js";
import { strictQuery, wholeNumber } from "./query.js";
import { MAX_REQUEST_BYTES_SETTING, readRequestBody } from "./read-body.js";
import type { HostedSandbox } from "./sandbox-registry.js";

/** Options of {@link serveFile}. */
export interface ServeFileOptions {
  sandbox: () => HostedSandbox;
  url: URL;
  request: http.IncomingMessage;
  response: http.ServerResponse;
  /** The largest body a write takes. */
  maxRequestBytes: number;
}

/**
 * The file route, `/v1/sandboxes/:id/file?path=PATH`: `GET` answers the file's bytes, `PUT`
 * writes the body's bytes (see PROTOCOL.md). `sandbox` is looked up once the method is known.
 */
export async function serveFile({
  sandbox,
  url,
  request,
  response,
  maxRequestBytes,
}: ServeFileOptions): Promise<void> {
  if (request.method === "GET") {
    const { files, client } = sandbox();
    const { filePath, maxBytes } = fileQuery(url, "GET");
    // A kept output (exactly `/run/pleach-output/NAME`) lives in the session sandbox's memory,
    // outside the workspace: it is asked of the sandbox's client, which reads those; any other
    // path is a workspace file, read from the disk under the usual rules.
    const bytes =
      keptOutputName(filePath) === undefined
        ? await files.read(filePath, maxBytes)
        : Buffer.from(await client.readFile(filePath, { encoding: "base64", maxBytes }), "base64");
    response.writeHead(200, {
      "content-type": "application/octet-stream",
      "content-length": bytes.length,
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
    });
    response.end(bytes);
    return;
  }
  if (request.method === "PUT") {
    const { files } = sandbox();
    const { filePath } = fileQuery(url, "PUT");
    checkRawBody(request);
    const body = await readRequestBody(request, {
      maxBytes: maxRequestBytes,
      setting: MAX_REQUEST_BYTES_SETTING,
      whatToDo: "write big files in parts or raise --max-request-bytes",
    });
    await files.write(filePath, body);
    response.writeHead(204, { "cache-control": "no-store" }).end();
    return;
  }
  throw methodNotAllowed(request.method, url.pathname, "GET, PUT");
}

/**
 * The query of a file request: `path`, the workspace path, form-encoded; and on a read, optionally
 * `maxBytes`, the most bytes the caller wants (a larger file is refused from its size).
 */
function fileQuery(
  url: URL,
  method: "GET" | "PUT",
): { filePath: string; maxBytes: number | undefined } {
  const query = strictQuery(
    url,
    method === "GET"
      ? {
          takes: { path: "?path=FILE", maxBytes: "&maxBytes=N" },
          usage: "a file read takes only ?path=FILE and &maxBytes=N",
        }
      : { takes: { path: "?path=FILE" }, usage: "a file write takes only ?path=FILE" },
  );
  const filePath = query.get("path");
  if (filePath === undefined) {
    throw badRequest("a file request needs the query parameter ?path=FILE (URL-encoded)");
  }
  return { filePath, maxBytes: wholeNumber("maxBytes", query.get("maxBytes"), "bytes") };
}

/** A file's body is its bytes as they are: no other media type, no content coding. */
function checkRawBody(request: http.IncomingMessage): void {
  const type = request.headers["content-type"];
  if (type !== undefined && !/^application\/octet-stream\s*(?:;|$)/i.test(type)) {
    throw new HttpError(415, {
      code: "INVALID_INPUT",
      message: `the body of a file write is the file's raw bytes: send Content-Type: application/octet-stream, not ${JSON.stringify(type.slice(0, 100))}`,
    });
  }
  const coding = request.headers["content-encoding"];
  if (coding !== undefined && coding.trim().toLowerCase() !== "identity") {
    throw new HttpError(415, {
      code: "INVALID_INPUT",
      message: `the body of a file write is the file's raw bytes: Content-Encoding ${JSON.stringify(coding.slice(0, 100))} is not supported`,
    });
  }
}
