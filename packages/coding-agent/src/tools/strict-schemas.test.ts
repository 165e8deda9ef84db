import type { JSONSchema } from "@pleach/core";
import { removeStrictNulls, toolInputJSONSchema, toolStrictInputJSONSchema } from "@pleach/core";
import { describe, expect, it } from "vitest";
import { CODING_AGENT_TOOL_NAMES, createCodingAgentTools } from "./coding-agent-tools.js";

// The strict-mode transform is core's; these check it over the real tools' schemas.

const refuse = async (): Promise<never> => {
  throw new Error("not run");
};
// Named, the job tools are made over this client too, though it offers no jobs.
const tools = createCodingAgentTools(
  { exec: refuse, readFile: refuse, writeFile: refuse },
  { only: CODING_AGENT_TOOL_NAMES },
);

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

describe("the tools in OpenAI's strict mode", () => {
  it("makes every one of the fourteen tools' input schemas strict-mode clean", () => {
    expect(tools).toHaveLength(14);
    for (const tool of tools) {
      const strict = toolStrictInputJSONSchema(tool);
      expect({ tool: tool.name, problems: strictViolations(strict) }).toEqual({
        tool: tool.name,
        problems: [],
      });
    }
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
