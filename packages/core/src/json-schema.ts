import { z } from "zod";
import type { AnyToolDefinition } from "./define-tool.js";

/** A JSON Schema object, as plain data. */
export type JSONSchema = Record<string, unknown>;

/**
 * The JSON Schema (draft 2020-12) of a tool's input, what a model is shown as the tool's
 * parameters. Defaults are not required of the model; the `$schema` key is left out because most
 * model APIs reject it.
 */
export function toolInputJSONSchema(tool: AnyToolDefinition): JSONSchema {
  const { $schema: _ignored, ...schema } = z.toJSONSchema(tool.inputSchema, {
    io: "input",
    unrepresentable: "any",
  }) as JSONSchema;
  return withoutSafeIntegerBounds(schema) as JSONSchema;
}

/** The JSON Schema of a tool's output, for clients that check structured results (MCP). */
export function toolOutputJSONSchema(tool: AnyToolDefinition): JSONSchema {
  const { $schema: _ignored, ...schema } = z.toJSONSchema(tool.outputSchema, {
    io: "output",
    unrepresentable: "any",
  }) as JSONSchema;
  return schema;
}

/**
 * Zod writes `z.number().int()` with the safe-integer range as bounds; they say nothing to a
 * model and cost tokens in every request, so they are dropped.
 */
function withoutSafeIntegerBounds(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutSafeIntegerBounds);
  if (typeof value !== "object" || value === null) return value;
  const result: Record<string, unknown> = {};
  for (const [key, entry] of Object.entries(value)) {
    if (key === "maximum" && entry === Number.MAX_SAFE_INTEGER) continue;
    if (key === "minimum" && entry === Number.MIN_SAFE_INTEGER) continue;
    result[key] = withoutSafeIntegerBounds(entry);
  }
  return result;
}
