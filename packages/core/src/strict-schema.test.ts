import { describe, expect, it } from "vitest";
import type { JSONSchema } from "./json-schema.js";
import { removeStrictNulls, toStrictJSONSchema } from "./strict-schema.js";

describe("toStrictJSONSchema", () => {
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
});
