import { compile, type z } from "zod";
import { compileFn } from "zod/v4/core";

/** How {@link defineTool} checks an output against the tool's output schema. */
export type OutputValidation = "parse" | "check";

/** The outcome of checking an output: the value to return, or zod's issues. */
type OutputCheckResult =
  | { success: true; data: unknown }
  | { success: false; issues: z.core.$ZodIssue[] };

/** Check an output: see {@link outputChecker}. */
export type OutputChecker = (output: unknown) => OutputCheckResult;

/** Compiled checks, per schema object: tools made again and again share one. */
const parsers = new WeakMap<z.ZodType, z.ZodType>();
const validators = new WeakMap<z.ZodType, ((output: unknown) => unknown) | null>();

/**
 * The check {@link defineTool} runs on each output of a tool, compiled on first use.
 *
 * - `"parse"`: zod's parse of the output, through `z.compile`'s generated parser (the same result
 *   and the same issues as the interpreter, several times faster): a copy of the output, with
 *   unknown keys stripped and defaults and transforms applied.
 * - `"check"`: the same validation, by zod's generated validator, but the output itself is
 *   returned rather than a copy of it. For large outputs (tens of thousands of entries) that the
 *   tool builds itself, the copy is most of the cost of the check. Only schemas of plain data
 *   qualify (see {@link isPlainDataSchema}): their parse is a copy of the output.
 *
 * Either way a drifting output fails with zod's issues: when the generated validator rejects an
 * output (or cannot tell), zod's parser decides, and reports the issues.
 */
export function outputChecker(schema: z.ZodType, validation: OutputValidation): OutputChecker {
  if (validation === "check" && !isPlainDataSchema(schema)) {
    throw new TypeError(
      'defineTool: outputValidation "check" needs an output schema of plain data (no defaults, transforms, coercions, pipes or overwriting checks); use "parse"',
    );
  }
  return (output) => {
    if (validation === "check" && validatorOf(schema)?.(output) === true) {
      return { success: true, data: output };
    }
    let parser = parsers.get(schema);
    if (parser === undefined) {
      parser = compile(schema);
      parsers.set(schema, parser);
    }
    const parsed = parser.safeParse(output);
    return parsed.success
      ? { success: true, data: parsed.data }
      : { success: false, issues: parsed.error.issues };
  };
}

/** zod's generated validator of `schema`, or null when it cannot make one. */
function validatorOf(schema: z.ZodType): ((output: unknown) => unknown) | null {
  let validator = validators.get(schema);
  if (validator === undefined) {
    try {
      validator = compileFn(schema, { assertOnly: true }) as (output: unknown) => unknown;
    } catch {
      validator = null;
    }
    validators.set(schema, validator);
  }
  return validator;
}

/** Schema kinds whose parse returns what it was given (objects: less their unknown keys). */
const PLAIN_KINDS = new Set([
  "string",
  "number",
  "boolean",
  "null",
  "literal",
  "enum",
  "optional",
  "nullable",
  "array",
  "object",
  "union",
]);

interface SchemaDefinition {
  type: string;
  coerce?: boolean;
  checks?: Array<{ _zod: { def: { check: string } } }>;
  innerType?: z.ZodType;
  element?: z.ZodType;
  options?: z.ZodType[];
  shape?: Record<string, z.ZodType>;
  catchall?: z.ZodType;
}

/**
 * Whether parsing a value with `schema` returns that same value, unknown object keys aside: the
 * schema is built of strings, numbers, booleans, null, literals, enums, arrays, objects, unions,
 * optional and nullable, with checks that only check (no `trim()` and the like), no coercion.
 */
function isPlainDataSchema(schema: z.ZodType): boolean {
  const definition = (schema as unknown as { _zod: { def: SchemaDefinition } })._zod.def;
  if (!PLAIN_KINDS.has(definition.type) || definition.coerce === true) return false;
  if (definition.checks?.some((check) => check._zod.def.check === "overwrite")) return false;
  const children: z.ZodType[] = [
    ...(definition.innerType === undefined ? [] : [definition.innerType]),
    ...(definition.element === undefined ? [] : [definition.element]),
    ...(definition.options ?? []),
    ...Object.values(definition.shape ?? {}),
  ];
  if (definition.catchall !== undefined) {
    // `.strict()` (never) rejects unknown keys; `.passthrough()` (unknown) keeps them as given.
    const catchall = (definition.catchall as unknown as { _zod: { def: SchemaDefinition } })._zod
      .def.type;
    if (catchall !== "never" && catchall !== "unknown") children.push(definition.catchall);
  }
  return children.every(isPlainDataSchema);
}
