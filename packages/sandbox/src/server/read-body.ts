import type http from "node:http";
import type { z } from "zod";
import { badRequest, HttpError } from "./http-errors.js";

/** Options of {@link readRequestBody}. */
export interface ReadRequestBodyOptions {
  /** The most bytes taken; a larger body is refused with a 413. */
  maxBytes: number;
  /** What the 413's message tells the sender to do, e.g. "write big files in parts". */
  whatToDo?: string;
}

/**
 * Read a request's body whole, for both HTTP servers. A declared `Content-Length` over `maxBytes`
 * is refused (`HttpError` 413 `TOO_LARGE`) before a byte is read; a chunked body as soon as it
 * passes the limit; a body cut short by its sender is a 400. The rest of a refused body is left
 * unread: the caller answers, then drains or closes the connection. (The stream is not destroyed
 * here, as an async iterator would, since that would cut the connection before the answer.)
 */
export function readRequestBody(
  request: http.IncomingMessage,
  { maxBytes, whatToDo = "send less" }: ReadRequestBodyOptions,
): Promise<Buffer> {
  const tooLarge = () =>
    new HttpError(413, {
      code: "TOO_LARGE",
      message: `the request body is larger than this server's limit of ${maxBytes} bytes; ${whatToDo}`,
    });
  // Node's parser has already refused a Content-Length that is not a number.
  const declared = request.headers["content-length"];
  if (declared !== undefined && Number(declared) > maxBytes) return Promise.reject(tooLarge());
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (error?: Error) => {
      request.off("data", onData);
      request.off("end", onEnd);
      request.off("error", finish);
      request.off("close", onClose);
      if (error !== undefined) reject(error);
      else resolve(Buffer.concat(chunks, size));
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) finish(tooLarge());
      else chunks.push(chunk);
    };
    const onEnd = () => finish();
    // The peer went away before the end of its body: nobody is left to answer.
    const onClose = () => finish(badRequest("the connection closed before the end of the body"));
    request.on("data", onData);
    request.on("end", onEnd);
    request.on("error", finish);
    request.on("close", onClose);
  });
}

/** Options of {@link readJsonBody}. */
export interface ReadJsonBodyOptions<Schema extends z.ZodType> {
  /** What the body must be. */
  schema: Schema;
  /** The most bytes taken; a larger body is refused with a 413. */
  maxBytes: number;
  /** The form of a good body, named in a 400, e.g. `{ "command": STRING, "cwd"?: STRING }`. */
  expected: string;
}

/**
 * Read a JSON body and check it with `schema`; an empty body is `{}`. A body that is not JSON, or
 * not what the schema takes, is a 400 `INVALID_INPUT` that says what was wrong and what to send.
 */
export async function readJsonBody<Schema extends z.ZodType>(
  request: http.IncomingMessage,
  { schema, maxBytes, expected }: ReadJsonBodyOptions<Schema>,
): Promise<z.infer<Schema>> {
  const body = await readRequestBody(request, { maxBytes });
  let value: unknown = {};
  if (body.length > 0) {
    try {
      value = JSON.parse(body.toString("utf8"));
    } catch (error) {
      throw badRequest(
        `the request body is not valid JSON (${(error as Error).message}); send ${expected}`,
      );
    }
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issues = parsed.error.issues
      .map(
        (issue) =>
          `${issue.path.length === 0 ? "the body" : issue.path.join(".")}: ${issue.message}`,
      )
      .join("; ");
    throw badRequest(`the request body is not valid (${issues}); send ${expected}`);
  }
  return parsed.data;
}
