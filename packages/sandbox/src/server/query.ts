import { badRequest } from "./http-errors.js";

/** Options of {@link strictQuery}. */
export interface StrictQueryOptions {
  /** The parameters the route takes, each with how to write it (`"?path=FILE"`), for messages. */
  takes: Record<string, string>;
  /** What the route takes, in words, for an unknown parameter's message. */
  usage: string;
}

/**
 * The parameters of `url`'s query, form-encoded. A parameter the route does not take, one given
 * twice or without a value, or an escape that does not decode to UTF-8 is refused `400
 * INVALID_INPUT`, saying which (`URLSearchParams` would take all of these silently, and decode a
 * bad escape to U+FFFD).
 */
export function strictQuery(url: URL, { takes, usage }: StrictQueryOptions): Map<string, string> {
  const values = new Map<string, string>();
  const search = url.search.slice(1);
  for (const part of search === "" ? [] : search.split("&")) {
    const equals = part.indexOf("=");
    const name = decodeQuery(equals < 0 ? part : part.slice(0, equals));
    if (!Object.hasOwn(takes, name)) {
      throw badRequest(`unknown query parameter ${JSON.stringify(name)}: ${usage}`);
    }
    if (equals < 0) {
      throw badRequest(`the ${name} query parameter has no value: send ${takes[name]}`);
    }
    if (values.has(name)) throw badRequest(`the ${name} query parameter is given twice`);
    values.set(name, decodeQuery(part.slice(equals + 1)));
  }
  return values;
}

/**
 * A whole number in decimal digits (the query value of parameter `name`, counted in `unit`), or
 * `undefined` when there is none; anything else is refused `400 INVALID_INPUT`.
 */
export function wholeNumber(
  name: string,
  value: string | undefined,
  unit: "bytes" | "milliseconds",
): number | undefined {
  if (value === undefined) return undefined;
  const number = /^\d{1,16}$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(number)) {
    throw badRequest(
      `${name} must be a whole number of ${unit} in decimal digits, got ${JSON.stringify(value.slice(0, 100))}`,
    );
  }
  return number;
}

function decodeQuery(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, " "));
  } catch {
    throw badRequest(
      `the query ${JSON.stringify(text.slice(0, 200))} is not URL-encoded UTF-8 (a % escape is malformed)`,
    );
  }
}
