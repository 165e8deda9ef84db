import { describe, expect, it } from "vitest";
import { createCodingAgentTools } from "../../coding-agent/src/tools/index.js";
import type { JSONSchema } from "./json-schema.js";
import { toolInputJSONSchema } from "./json-schema.js";
import {
  removeStrictNulls,
  toolStrictInputJSONSchema,
  toStrictJSONSchema,
} from "./strict-schema.js";

const refuse = async (): Promise<never> => {
  throw new Error("not run");
};
const tools = createCodingAgentTools({ exec: refuse, readFile: refuse, writeFile: refuse });

/** Every rule of OpenAI's strict mode this transform promises, checked on every node. */
function strictViolations(schema: unknown, where = "(root)"): string[] {
  if (typeof schema !== "object" || schema === null) return [];
  if (Array.isArray(schema))
    return schema.flatMap((item, index) => strictViolations(item, `${where}[${index}]`));
  const node = schema as JSONSchema;
  const problems: string[] = [];
  for (const key of ["default", "minLength", "maxLength", "oneOf", "allOf", "not", "$schema"]) {
    if (key in node) problems.push(`${where}: has ${key}`);
  }
  if (node.type === "object" || node.properties !== undefined) {
    if (node.additionalProperties !== false)
      problems.push(`${where}: additionalProperties not false`);
    const keys = Object.keys((node.properties ?? {}) as object);
    if (JSON.stringify(node.required) !== JSON.stringify(keys)) {
      problems.push(`${where}: required ${JSON.stringify(node.required)} is not all of ${keys}`);
    }
  }
  for (const [key, value] of Object.entries(node)) {
    if (key === "properties" || key === "$defs") {
      for (const [name, property] of Object.entries(value as object)) {
        problems.push(...strictViolations(property, `${where}.${name}`));
      }
    } else if (key === "items" || key === "anyOf") {
      problems.push(...strictViolations(value, `${where}.${key}`));
    }
  }
  return problems;
}

describe("toStrictJSONSchema", () => {
  it("makes every one of the ten tools' input schemas strict-mode clean", () => {
    for (const tool of tools) {
      const strict = toolStrictInputJSONSchema(tool);
      expect({ tool: tool.name, problems: strictViolations(strict) }).toEqual({
        tool: tool.name,
        problems: [],
      });
    }
  });

  it("turns optionals into null unions, keeps nullables, rewrites oneOf and notes defaults", () => {
    expect(
      toStrictJSONSchema({
        type: "object",
        properties: {
          name: { type: "string", minLength: 1 },
          mode: { type: "string", enum: ["a", "b"], default: "a", description: "how" },
          tags: {
            type: "array",
            items: { type: "object", properties: { key: { type: "string" } } },
          },
          either: { oneOf: [{ type: "string" }, { type: "number" }] },
          maybe: { type: ["string", "null"] },
          when: { type: "string", format: "date-time" },
          site: { type: "string", format: "uri" },
        },
        required: ["name", "maybe"],
      }),
    ).toEqual({
      type: "object",
      properties: {
        name: { type: "string" },
        mode: {
          type: ["string", "null"],
          enum: ["a", "b", null],
          description: 'how (default: "a")',
        },
        tags: {
          type: ["array", "null"],
          items: {
            type: "object",
            properties: { key: { type: ["string", "null"] } },
            required: ["key"],
            additionalProperties: false,
          },
        },
        either: { anyOf: [{ type: "string" }, { type: "number" }, { type: "null" }] },
        maybe: { type: ["string", "null"] },
        when: { type: ["string", "null"], format: "date-time" },
        site: { type: ["string", "null"] },
      },
      required: ["name", "mode", "tags", "either", "maybe", "when", "site"],
      additionalProperties: false,
    });
  });
});

describe("removeStrictNulls", () => {
  const schema: JSONSchema = {
    type: "object",
    properties: {
      path: { type: "string" },
      limit: { type: "integer" },
      note: { type: ["string", "null"] },
      edits: {
        type: "array",
        items: {
          type: "object",
          properties: { old: { type: "string" }, hint: { type: "string" } },
          required: ["old"],
        },
      },
    },
    required: ["path"],
  };

  it("drops nulls of optional properties, at any depth, and keeps real nulls", () => {
    const value = { path: "a", limit: null, note: null, edits: [{ old: "x", hint: null }] };
    expect(removeStrictNulls({ schema, value })).toEqual({
      path: "a",
      note: null,
      edits: [{ old: "x" }],
    });
    expect(value.limit).toBeNull();
  });

  it("leaves a null of a required property for validation to refuse", () => {
    expect(removeStrictNulls({ schema, value: { path: null } })).toEqual({ path: null });
  });

  it("lets every tool accept the all-null optionals a strict model would send", async () => {
    const readFile = tools.find((tool) => tool.name === "read_file");
    if (readFile === undefined) throw new Error("no read_file");
    const args = removeStrictNulls({
      schema: toolInputJSONSchema(readFile),
      value: { path: "a.txt", encoding: null, offset: null, limit: null },
    });
    expect(readFile.inputSchema.safeParse(args).success).toBe(true);
  });
});
