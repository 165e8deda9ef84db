import type http from "node:http";
import { formatBytes } from "@pleach/core";
import type { z } from "zod";
import { badRequest, HttpError } from "./http-errors.js";

/** Why {@link readBody} gave up. */
export type BodyFailure = "too-large" | "incomplete" | "aborted" | "timeout";

/** A body that could not be read whole (see {@link BodyFailure}). */
export class BodyReadError extends Error {
  readonly reason: BodyFailure;
  constructor(reason: BodyFailure, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.reason = reason;
  }
}

/** Options of {@link readBody}. */
export interface ReadBodyOptions {
  /** The most bytes taken. @default Infinity */
  maxBytes?: number;
  /** Stops reading (the message is destroyed). */
  abortSignal?: AbortSignal;
  /** Past this `performance.now()` time, reading stops (the message is destroyed). */
  deadline?: number;
}

/**
 * Read an HTTP message's body whole: a request's on both servers, an answer's in the client. A
 * declared `Content-Length` over `maxBytes` is refused before a byte is read, any other body as
 * soon as it passes the limit; the rest of it is left unread (not destroyed, as an async iterator
 * would, which would cut the connection before the caller can answer). A body cut short is
 * `"incomplete"`; aborting or passing the deadline destroys the message.
 */
export function readBody(
  message: http.IncomingMessage,
  { maxBytes = Number.POSITIVE_INFINITY, abortSignal, deadline }: ReadBodyOptions = {},
): Promise<Buffer> {
  const tooLarge = () => new BodyReadError("too-large", `the body is over ${maxBytes} bytes`);
  // Node's parser has already refused a Content-Length that is not a number.
  const declared = message.headers["content-length"];
  if (declared !== undefined && Number(declared) > maxBytes) return Promise.reject(tooLarge());
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const finish = (error?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      abortSignal?.removeEventListener("abort", onAbort);
      message.off("data", onData);
      message.off("end", onEnd);
      message.off("error", onError);
      message.off("close", onEnd);
      if (error !== undefined) reject(error);
      else if (!message.complete) {
        reject(new BodyReadError("incomplete", "the connection closed before the end of the body"));
      } else resolve(Buffer.concat(chunks, size));
    };
    const stop = (error: BodyReadError) => {
      finish(error);
      message.destroy();
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) finish(tooLarge());
      else chunks.push(chunk);
    };
    // A message whose connection closes before its end is not `complete`, which says so.
    const onEnd = () => finish();
    const onError = (error: Error) =>
      finish(new BodyReadError("incomplete", error.message, { cause: error }));
    const onAbort = () => stop(new BodyReadError("aborted", "the call was aborted"));
    const timer =
      deadline === undefined
        ? undefined
        : setTimeout(
            () => stop(new BodyReadError("timeout", "the body did not arrive in time")),
            Math.max(0, deadline - performance.now()),
          );
    abortSignal?.addEventListener("abort", onAbort, { once: true });
    message.on("data", onData);
    message.on("end", onEnd);
    message.on("error", onError);
    message.on("close", onEnd);
    if (abortSignal?.aborted) onAbort();
  });
}

/** How the sandbox server's request body limit is set, as its 413 names it. */
export const MAX_REQUEST_BYTES_SETTING = "--max-request-bytes (maxRequestBytes)";

/** Options of {@link readRequestBody}. */
export interface ReadRequestBodyOptions {
  /** The most bytes taken; a larger body is refused with a 413. */
  maxBytes: number;
  /** How the limit is set, named in the 413, e.g. `"--max-request-bytes"`; none for a fixed limit. */
  setting?: string;
  /**
   * What the 413's message tells the sender to do, e.g. "write big files in parts".
   * @default "send less in one request (large content in several smaller writes)"
   */
  whatToDo?: string;
}

/**
 * Read a request's body whole, for both HTTP servers ({@link readBody}): a body over `maxBytes`
 * is an `HttpError` 413 `TOO_LARGE` whose message names the limit passed (the request body
 * limit), its size and the body's declared size, with `details: { limit: "request-body",
 * maxBytes, bytes?, setting? }`; one cut short by its sender a 400. The rest of a refused body
 * is left unread: the caller answers, then drains or closes the connection.
 */
export async function readRequestBody(
  request: http.IncomingMessage,
  {
    maxBytes,
    setting,
    whatToDo = "send less in one request (large content in several smaller writes)",
  }: ReadRequestBodyOptions,
): Promise<Buffer> {
  try {
    return await readBody(request, { maxBytes });
  } catch (error) {
    if ((error as BodyReadError).reason === "too-large") {
      // Node's parser has already refused a Content-Length that is not a number.
      const declared = request.headers["content-length"];
      const bytes = declared === undefined ? undefined : Number(declared);
      const body =
        bytes === undefined ? "the request body" : `the request body (${formatBytes(bytes)})`;
      const setBy = setting === undefined ? "" : `, set by ${setting}`;
      throw new HttpError(413, {
        code: "TOO_LARGE",
        message: `${body} is larger than this server's limit of ${formatBytes(maxBytes)} on request bodies${setBy}; ${whatToDo}`,
        details: {
          limit: "request-body",
          maxBytes,
          ...(bytes === undefined ? {} : { bytes }),
          ...(setting === undefined ? {} : { setting }),
        },
      });
    }
    // The peer went away before the end of its body: nobody is left to answer.
    throw badRequest("the connection closed before the end of the body");
  }
}

/** Options of {@link readJsonBody}. */
export interface ReadJsonBodyOptions<Schema extends z.ZodType> {
  /** What the body must be. */
  schema: Schema;
  /** The most bytes taken; a larger body is refused with a 413. */
  maxBytes: number;
  /** How the limit is set, named in the 413 (see {@link ReadRequestBodyOptions.setting}). */
  setting?: string;
  /** The form of a good body, named in a 400, e.g. `{ "command": STRING, "cwd"?: STRING }`. */
  expected: string;
}

/**
 * Read a JSON body and check it with `schema`; an empty body is `{}`. A body that is not JSON, or
 * not what the schema takes, is a 400 `INVALID_INPUT` that says what was wrong and what to send.
 */
export async function readJsonBody<Schema extends z.ZodType>(
  request: http.IncomingMessage,
  { schema, maxBytes, setting, expected }: ReadJsonBodyOptions<Schema>,
): Promise<z.infer<Schema>> {
  const body = await readRequestBody(request, {
    maxBytes,
    ...(setting === undefined ? {} : { setting }),
  });
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

/**
 * Before answering a request whose body was left unread (refused as too large, say): the rest of
 * the body is read and dropped until it ends, the connection closes or `ms` pass, so that a client
 * still sending has finished when the answer (with `connection: close`) arrives and reads it
 * rather than a write error. Both servers answer such requests this way.
 */
export function drainUnreadBody(request: http.IncomingMessage, ms = 1_000): Promise<void> {
  if (request.complete || request.destroyed) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      request.off("end", done);
      request.off("close", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    request.once("end", done);
    request.once("close", done);
    request.resume();
  });
}
