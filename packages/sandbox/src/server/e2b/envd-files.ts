import type http from "node:http";
import path from "node:path";
import { answerOf, HttpError, sendJson } from "../http-errors.js";
import { MAX_REQUEST_BYTES_SETTING, readRequestBody } from "../read-body.js";
import type { HostedSandbox } from "../sandbox-registry.js";

/** Options of {@link serveEnvdFiles}. */
export interface ServeEnvdFilesOptions {
  sandbox: HostedSandbox;
  url: URL;
  request: http.IncomingMessage;
  response: http.ServerResponse;
  maxRequestBytes: number;
}

/**
 * envd's `/files`: `GET ?path=` answers the file's bytes, `POST ?path=` writes the body (one file
 * as `application/octet-stream`, or `multipart/form-data` parts named by `path` or their file
 * names) and answers the entries written. Both go through the sandbox's file route (the local
 * client's race-free walk, mode, protection policy and limits). Errors are envd's
 * `{ code, message }` with the status of their pleach code.
 */
export async function serveEnvdFiles(options: ServeEnvdFilesOptions): Promise<void> {
  try {
    await serve(options);
  } catch (error) {
    const { status, wire } = answerOf(error);
    sendJson(options.response, status, {
      code: status,
      message: wire.message,
      pleachCode: wire.code,
    });
  }
}

async function serve({ sandbox, url, request, response, maxRequestBytes }: ServeEnvdFilesOptions) {
  const given = url.searchParams.get("path") ?? undefined;
  if (request.method === "GET") {
    if (given === undefined) throw unsupported("GET /files needs ?path=: the file to read");
    const bytes = await sandbox.files.read(given);
    response.writeHead(200, {
      "content-type": "application/octet-stream",
      "content-length": bytes.length,
      "cache-control": "no-store",
    });
    response.end(bytes);
    return;
  }
  if (request.method !== "POST")
    throw new HttpError(405, {
      code: "UNSUPPORTED",
      message: `${request.method} is not allowed on /files (only GET and POST)`,
    });
  if (request.headers["content-encoding"] !== undefined) {
    throw unsupported(
      `a /files upload with Content-Encoding ${request.headers["content-encoding"]} is not supported by pleach's E2B face; upload it uncompressed (no gzip: true)`,
    );
  }
  const body = await readRequestBody(request, {
    maxBytes: maxRequestBytes,
    setting: MAX_REQUEST_BYTES_SETTING,
    whatToDo: "write big files in parts",
  });
  const type = request.headers["content-type"] ?? "";
  const files: { filePath: string; bytes: Buffer }[] = [];
  if (type.startsWith("multipart/form-data")) {
    // The platform's own multipart parser, over a body already read within the limit.
    const form = await new Response(body, { headers: { "content-type": type } })
      .formData()
      .catch(() => {
        throw unsupported(
          "the multipart body could not be read; send multipart/form-data with one part per file",
        );
      });
    for (const part of form.getAll("file")) {
      if (typeof part === "string") continue;
      const filePath = given ?? part.name;
      files.push({ filePath, bytes: Buffer.from(await part.arrayBuffer()) });
    }
  } else {
    if (given === undefined)
      throw unsupported("POST /files with a raw body needs ?path=: the file to write");
    files.push({ filePath: given, bytes: body });
  }
  if (files.length === 0)
    throw unsupported("POST /files carried no file; send a part named `file`");
  const written = [];
  for (const { filePath, bytes } of files) {
    await sandbox.files.write(filePath, bytes);
    const absolute = path.resolve(sandbox.client.root, filePath);
    written.push({ name: path.basename(absolute), type: "file", path: absolute });
  }
  sendJson(response, 200, written);
}

function unsupported(message: string): HttpError {
  return new HttpError(400, { code: "INVALID_INPUT", message });
}
