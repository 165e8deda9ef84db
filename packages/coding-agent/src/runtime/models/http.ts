import {
  ModelError,
  type ModelErrorKind,
  type ModelResponse,
  type ModelToolCall,
} from "../model.js";

/** A `fetch` function, injectable for tests and proxies. */
export type FetchFunction = typeof globalThis.fetch;

/** Retry settings shared by the HTTP adapters. */
export interface RetryOptions {
  /**
   * Retries after a 429, a 5xx or a network failure (so at most this plus one requests).
   * @default 4
   */
  maxRetries?: number;
  /**
   * The first backoff in milliseconds; doubled each retry, with jitter, capped at 30 s. A
   * `retry-after` header wins when present.
   * @default 1_000
   */
  initialBackoffMs?: number;
}

/** What {@link postJSON} needs besides retries. */
export interface PostJSONOptions extends RetryOptions {
  url: string;
  headers: Record<string, string>;
  body: unknown;
  fetch: FetchFunction;
  abortSignal: AbortSignal | undefined;
  /** `openai`, `anthropic`: named in error messages. */
  provider: string;
  model: string;
  /** The environment variable the key comes from, named when the key is refused. */
  keyVariable: string;
  /**
   * Pull the provider's own error message out of an error body.
   * @default reads `error.message`, the shape OpenAI, Anthropic and compatible servers answer with
   */
  errorMessageOf?(body: unknown): string | undefined;
}

/** The URL of `path` (`/responses`, `/v1/messages`) below a provider's base URL. */
export function endpoint(baseURL: string, path: string): string {
  return `${baseURL.replace(/\/+$/, "")}${path}`;
}

/** A provider's answer as the runtime takes it: text, tool calls, token counts, stop reason. */
export function modelResponse(
  text: string,
  toolCalls: ModelToolCall[],
  tokens: { input?: number | undefined; output?: number | undefined } | undefined,
  stopReason: string | undefined,
): ModelResponse {
  return {
    text,
    toolCalls,
    usage: { inputTokens: tokens?.input ?? 0, outputTokens: tokens?.output ?? 0 },
    ...(stopReason === undefined ? {} : { stopReason }),
  };
}

/** The error for an answer without the part every answer has (`content`, `output`, a message). */
export function invalidResponse(provider: string, missing: string, answer: unknown): ModelError {
  return new ModelError(
    "invalid-response",
    `${provider} answered without ${missing}: ${JSON.stringify(answer).slice(0, 200)}`,
  );
}

const MAX_BACKOFF_MS = 30_000;

/**
 * POST a JSON body and return the parsed JSON answer, retrying 429s, 5xx and network failures
 * with exponential backoff; other failures become a {@link ModelError} whose message says what
 * to do (check the key, the model name).
 */
export async function postJSON({
  url,
  headers,
  body,
  fetch,
  abortSignal,
  provider,
  model,
  keyVariable,
  errorMessageOf = nestedErrorMessage,
  maxRetries = 4,
  initialBackoffMs = 1_000,
}: PostJSONOptions): Promise<unknown> {
  for (let attempt = 0; ; attempt += 1) {
    let response: Response;
    try {
      response = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify(body),
        signal: abortSignal,
      });
    } catch (error) {
      if (abortSignal?.aborted) {
        throw new ModelError("aborted", `the ${provider} request was aborted`, { cause: error });
      }
      if (attempt < maxRetries) {
        await sleep(backoff(attempt, initialBackoffMs, undefined), abortSignal);
        continue;
      }
      throw new ModelError(
        "network",
        `could not reach ${provider} at ${url}: ${(error as Error).message}. Check the URL and your connection.`,
        { cause: error },
      );
    }
    const text = await response.text();
    if (response.ok) {
      try {
        return JSON.parse(text);
      } catch {
        throw new ModelError(
          "invalid-response",
          `${provider} answered with something that is not JSON: ${text.slice(0, 200)}`,
          { status: response.status },
        );
      }
    }
    const retryable = response.status === 429 || response.status >= 500;
    if (retryable && attempt < maxRetries) {
      const wait = backoff(attempt, initialBackoffMs, response.headers.get("retry-after"));
      await sleep(wait, abortSignal);
      continue;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    const detail = errorMessageOf(parsed) ?? (text.slice(0, 300) || response.statusText);
    throw new ModelError(
      kindOf(response.status),
      describeFailure({
        status: response.status,
        provider,
        model,
        keyVariable,
        detail,
        attempts: attempt + 1,
      }),
      { status: response.status },
    );
  }
}

function kindOf(status: number): ModelErrorKind {
  if (status === 401 || status === 403) return "authentication";
  if (status === 404) return "unknown-model";
  if (status === 429) return "rate-limited";
  if (status >= 500) return "server";
  return "bad-request";
}

function describeFailure({
  status,
  provider,
  model,
  keyVariable,
  detail,
  attempts,
}: {
  status: number;
  provider: string;
  model: string;
  keyVariable: string;
  detail: string;
  attempts: number;
}): string {
  if (status === 401 || status === 403) {
    return `${provider} refused the API key (HTTP ${status}: ${detail}). Check ${keyVariable}.`;
  }
  if (status === 404) {
    return `${provider} does not know the model ${JSON.stringify(model)} (HTTP 404: ${detail}). Check the model name, or the base URL.`;
  }
  if (status === 429 || status >= 500) {
    return `${provider} failed with HTTP ${status} after ${attempts} attempts: ${detail}. Try again later.`;
  }
  return `${provider} rejected the request (HTTP ${status}): ${detail}`;
}

function backoff(
  attempt: number,
  initialMs: number,
  retryAfter: string | null | undefined,
): number {
  if (retryAfter !== null && retryAfter !== undefined) {
    const seconds = Number(retryAfter);
    if (Number.isFinite(seconds) && seconds >= 0) return Math.min(seconds * 1000, MAX_BACKOFF_MS);
  }
  const base = Math.min(initialMs * 2 ** attempt, MAX_BACKOFF_MS);
  return base / 2 + Math.random() * (base / 2);
}

function sleep(milliseconds: number, abortSignal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (abortSignal?.aborted) {
      reject(new ModelError("aborted", "the request was aborted"));
      return;
    }
    const timer = setTimeout(() => {
      abortSignal?.removeEventListener("abort", onAbort);
      resolve();
    }, milliseconds);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new ModelError("aborted", "the request was aborted"));
    };
    abortSignal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** Parse a tool call's JSON arguments; a failure is kept for the runtime to report. */
export function parseArguments(text: string): { input: unknown; inputError?: string } {
  if (text.trim() === "") return { input: {} };
  try {
    return { input: JSON.parse(text) };
  } catch (error) {
    return { input: text, inputError: (error as Error).message };
  }
}

/** A JSON Schema without the `$schema` key, which some providers reject in tool parameters. */
export function withoutSchemaKey(schema: Record<string, unknown>): Record<string, unknown> {
  const { $schema: _schema, ...rest } = schema;
  return rest;
}

/** `error.message` of an error body, as OpenAI and Anthropic both answer. */
function nestedErrorMessage(body: unknown): string | undefined {
  const message = (body as { error?: { message?: unknown } } | undefined)?.error?.message;
  return typeof message === "string" ? message : undefined;
}
