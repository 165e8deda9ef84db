import type { AnyToolDefinition } from "./define-tool.js";
import { type JSONSchema, toolInputJSONSchema } from "./json-schema.js";

/**
 * The keywords OpenAI's strict mode (Structured Outputs, `strict: true` function calling)
 * accepts; any other keyword is dropped, since one unknown keyword fails the whole request.
 * Dropped constraints (`minLength`, say) are still enforced when the tool validates its input.
 */
const STRICT_KEYWORDS = new Set([
  "type",
  "description",
  "title",
  "properties",
  "required",
  "additionalProperties",
  "items",
  "anyOf",
  "enum",
  "const",
  "$ref",
  "$defs",
  "definitions",
  "pattern",
  "format",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "multipleOf",
  "minItems",
  "maxItems",
]);

/** The string formats strict mode knows; others are dropped. */
const STRICT_FORMATS = new Set([
  "date-time",
  "time",
  "date",
  "duration",
  "email",
  "hostname",
  "ipv4",
  "ipv6",
  "uuid",
]);

/**
 * Rewrite a JSON Schema into the subset OpenAI's strict mode accepts: every object lists all its
 * properties as `required` and sets `additionalProperties: false`; a property that was optional
 * becomes nullable (`type: [X, "null"]`, or `anyOf: [X, { type: "null" }]`), so the model sends
 * `null` where it would have left the property out; `oneOf` becomes `anyOf`; a `default` moves
 * into the description (null now means "use the default"); keywords strict mode rejects are
 * dropped. Pair it with {@link removeStrictNulls} on the arguments the model sends back.
 */
export function toStrictJSONSchema(schema: JSONSchema): JSONSchema {
  return strictNode(schema);
}

/** {@link toStrictJSONSchema} of a tool's input schema. */
export function toolStrictInputJSONSchema(tool: AnyToolDefinition): JSONSchema {
  return toStrictJSONSchema(toolInputJSONSchema(tool));
}

function strictNode(schema: JSONSchema): JSONSchema {
  const result: JSONSchema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === "oneOf" && Array.isArray(value)) {
      result.anyOf = value.map((branch) => strictNode(branch as JSONSchema));
    } else if (key === "format" && !STRICT_FORMATS.has(String(value))) {
      // Strict mode rejects formats it does not know.
    } else if (!STRICT_KEYWORDS.has(key)) {
      // Dropped: unsupported by strict mode.
    } else if (key === "properties" || key === "$defs" || key === "definitions") {
      result[key] = mapValues(value as Record<string, JSONSchema>, strictNode);
    } else if (key === "items" && isSchema(value)) {
      result.items = strictNode(value);
    } else if (key === "anyOf" && Array.isArray(value)) {
      result.anyOf = value.map((branch) => strictNode(branch as JSONSchema));
    } else {
      result[key] = value;
    }
  }
  if ("default" in schema) {
    const note = `(default: ${JSON.stringify(schema.default)})`;
    result.description =
      typeof result.description === "string" ? `${result.description} ${note}` : note;
  }
  if (result.type === "object" || result.properties !== undefined) {
    const properties = (result.properties ?? {}) as Record<string, JSONSchema>;
    const required = new Set((schema.required as string[] | undefined) ?? []);
    result.properties = mapValues(properties, (property, name) =>
      required.has(name) ? property : nullable(property),
    );
    result.required = Object.keys(properties);
    result.additionalProperties = false;
  }
  return result;
}

function nullable(schema: JSONSchema): JSONSchema {
  if (acceptsNull(schema)) return schema;
  const { type } = schema;
  if (typeof type === "string" && schema.anyOf === undefined && schema.$ref === undefined) {
    const widened: JSONSchema = { ...schema, type: [type, "null"] };
    if (Array.isArray(schema.enum)) widened.enum = [...schema.enum, null];
    return widened;
  }
  if (Array.isArray(schema.anyOf)) return { ...schema, anyOf: [...schema.anyOf, { type: "null" }] };
  if (Array.isArray(type) && schema.enum === undefined)
    return { ...schema, type: [...type, "null"] };
  const { description, ...rest } = schema;
  const wrapped: JSONSchema = { anyOf: [rest, { type: "null" }] };
  if (description !== undefined) wrapped.description = description;
  return wrapped;
}

/**
 * Undo {@link toStrictJSONSchema}'s nullable optionals on the arguments a model sent: every
 * `null` given for a property that the ORIGINAL schema (`schema`, before the strict transform)
 * does not require and does not itself allow to be null is removed, so the tool sees the property
 * as absent and applies its default. Run it before validation; `value` is not modified.
 */
export function removeStrictNulls({
  schema,
  value,
}: {
  schema: JSONSchema;
  value: unknown;
}): unknown {
  if (Array.isArray(value)) {
    const items = schema.items;
    return isSchema(items)
      ? value.map((item) => removeStrictNulls({ schema: items, value: item }))
      : value;
  }
  if (typeof value !== "object" || value === null) return value;
  const objectSchema = objectBranch(schema);
  if (objectSchema === undefined) return value;
  const properties = (objectSchema.properties ?? {}) as Record<string, JSONSchema>;
  const required = new Set((objectSchema.required as string[] | undefined) ?? []);
  const result: Record<string, unknown> = {};
  for (const [key, entry] of Object.entries(value)) {
    const property = properties[key];
    if (entry === null && property !== undefined && !required.has(key) && !acceptsNull(property)) {
      continue;
    }
    result[key] =
      property === undefined ? entry : removeStrictNulls({ schema: property, value: entry });
  }
  return result;
}

/** The schema itself when it describes an object, else its first `anyOf`/`oneOf` branch that does. */
function objectBranch(schema: JSONSchema): JSONSchema | undefined {
  if (schema.type === "object" || schema.properties !== undefined) return schema;
  const branches = (schema.anyOf ?? schema.oneOf) as JSONSchema[] | undefined;
  return branches?.find((branch) => objectBranch(branch) !== undefined);
}

function acceptsNull(schema: JSONSchema): boolean {
  const { type } = schema;
  if (type === "null" || (Array.isArray(type) && type.includes("null"))) return true;
  if (Array.isArray(schema.enum) && schema.enum.includes(null)) return true;
  if (schema.const === null) return true;
  const branches = (schema.anyOf ?? schema.oneOf) as JSONSchema[] | undefined;
  return branches?.some(acceptsNull) ?? false;
}

function isSchema(value: unknown): value is JSONSchema {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function mapValues<Value, Result>(
  record: Record<string, Value>,
  map: (value: Value, key: string) => Result,
): Record<string, Result> {
  return Object.fromEntries(Object.entries(record).map(([key, value]) => [key, map(value, key)]));
}
