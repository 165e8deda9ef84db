import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool } from "./define-tool.js";
import { isToolError, ToolError } from "./errors.js";
import { toolInputJSONSchema, toolOutputJSONSchema } from "./json-schema.js";
import { renderToolResult } from "./render.js";
import { toToolDef } from "./tool-def.js";
import { capText, MODEL_OUTPUT_LIMIT } from "./truncate.js";

const echo = defineTool({
  name: "echo",
  description: "Echo a message a number of times.",
  inputSchema: z.strictObject({
    message: z.string().describe("what to echo"),
    times: z.number().int().min(1).default(1),
  }),
  outputSchema: z.object({ text: z.string() }),
  annotations: { readOnlyHint: true },
  execute: async ({ message, times }) => ({ text: message.repeat(times) }),
});

describe("defineTool", () => {
  it("validates input before running and applies defaults", async () => {
    expect(await echo.execute({ message: "ab" })).toEqual({ text: "ab" });
    expect(await echo.execute({ message: "ab", times: 2 })).toEqual({ text: "abab" });
  });

  it("names each wrong field in a model-readable INVALID_INPUT error", async () => {
    const failure = await echo
      .execute({ message: 3, times: 0, extra: true })
      .catch((error) => error);
    expect(failure).toBeInstanceOf(ToolError);
    expect(failure.code).toBe("INVALID_INPUT");
    expect(failure.message).toMatchInlineSnapshot(`
      "echo got invalid input:
      - message: Invalid input: expected string, received number
      - times: Too small: expected number to be >=1
      - (input): Unrecognized key: "extra""
    `);
  });

  it("refuses input that is not an object", async () => {
    await expect(echo.execute("hello")).rejects.toMatchObject({ code: "INVALID_INPUT" });
    await expect(echo.execute(null)).rejects.toMatchObject({ code: "INVALID_INPUT" });
  });

  it("throws INVALID_OUTPUT when the tool's output drifts from its schema", async () => {
    const drifting = defineTool({
      name: "drift",
      description: "returns the wrong shape",
      inputSchema: z.object({}),
      outputSchema: z.object({ count: z.number() }),
      execute: async () => ({ count: "three" }) as unknown as { count: number },
    });
    await expect(drifting.execute({})).rejects.toMatchObject({
      code: "INVALID_OUTPUT",
      message: expect.stringContaining("count: Invalid input: expected number, received string"),
    });
  });

  it("does not start when the signal is already aborted", async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(
      echo.execute({ message: "x" }, { abortSignal: controller.signal }),
    ).rejects.toMatchObject({
      code: "ABORTED",
    });
  });

  it("rejects names a model API would not accept", () => {
    expect(() => defineTool({ ...echoSpec(), name: "has space" })).toThrow(/invalid tool name/);
  });
});

function echoSpec() {
  return {
    name: "echo",
    description: "d",
    inputSchema: z.object({}),
    outputSchema: z.object({}),
    execute: async () => ({}),
  };
}

describe("capText", () => {
  it("leaves short text alone", () => {
    expect(capText("short")).toEqual({ text: "short", cutChars: 0 });
  });

  it("keeps the head and the tail and says how much was cut", () => {
    const text = `${"h".repeat(60_000)}${"t".repeat(60_000)}`;
    const { text: capped, cutChars } = capText(text);
    expect(capped.length).toBeLessThanOrEqual(MODEL_OUTPUT_LIMIT);
    expect(capped.startsWith("hhhh")).toBe(true);
    expect(capped.endsWith("tttt")).toBe(true);
    expect(capped).toContain(`[... ${cutChars.toLocaleString("en-US")} characters cut`);
    expect(cutChars + capped.length).toBeGreaterThan(text.length - 200);
  });

  it("never exceeds the limit nor splits a surrogate pair", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: "grapheme", maxLength: 3000 }),
        fc.integer({ min: 130, max: 2000 }),
        (text, maxChars) => {
          const { text: capped, cutChars } = capText(text, { maxChars });
          expect(capped.length).toBeLessThanOrEqual(maxChars);
          if (cutChars === 0) expect(capped).toBe(text);
          // A lone surrogate would mean a character was split.
          expect(
            /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(capped),
          ).toBe(false);
        },
      ),
    );
  });
});

describe("renderToolResult", () => {
  it("renders a ToolError as its message with the error flag and code", () => {
    expect(
      renderToolResult({
        ok: false,
        error: new ToolError("PATH_ESCAPE", "path escapes the workspace: ../x"),
      }),
    ).toEqual({ output: "path escapes the workspace: ../x", error: true, code: "PATH_ESCAPE" });
  });

  it("renders anything else thrown as an internal error", () => {
    expect(renderToolResult({ ok: false, error: new RangeError("boom") })).toEqual({
      output: "internal error: boom",
      error: true,
      code: "INTERNAL",
    });
    expect(renderToolResult({ ok: false, error: "a string" }).output).toBe(
      "internal error: a string",
    );
  });

  it("caps long output at 50,000 characters", () => {
    const rendered = renderToolResult({
      ok: true,
      result: { output: "x".repeat(200_000), error: false },
    });
    expect(rendered.output.length).toBeLessThanOrEqual(50_000);
    expect(rendered.error).toBe(false);
  });
});

describe("JSON Schema", () => {
  it("describes the input with defaults optional and no $schema key", () => {
    expect(toolInputJSONSchema(echo)).toMatchInlineSnapshot(`
      {
        "additionalProperties": false,
        "properties": {
          "message": {
            "description": "what to echo",
            "type": "string",
          },
          "times": {
            "default": 1,
            "minimum": 1,
            "type": "integer",
          },
        },
        "required": [
          "message",
        ],
        "type": "object",
      }
    `);
    expect(toolOutputJSONSchema(echo)).toMatchObject({ type: "object", required: ["text"] });
  });
});

describe("toToolDef (seed 002's ToolDef)", () => {
  const context = { cwd: "/work", sandbox: "read-only" as const };

  it("runs the tool and renders { output, error }", async () => {
    const toolDef = toToolDef(echo);
    expect(toolDef.name).toBe("echo");
    expect(toolDef.parameters).toMatchObject({ type: "object", required: ["message"] });
    expect(await toolDef.run({ message: "hi" }, context)).toEqual({
      output: '{\n  "text": "hi"\n}',
      error: false,
    });
  });

  it("never throws: bad input and thrown errors become error results", async () => {
    const toolDef = toToolDef(echo);
    const bad = await toolDef.run({ message: 1 }, context);
    expect(bad).toMatchObject({ error: true, code: "INVALID_INPUT" });
    const throwing = toToolDef(
      defineTool({
        ...echoSpec(),
        execute: async () => {
          throw new ToolError("NOT_FOUND", "no such file: a");
        },
      }),
    );
    expect(await throwing.run({}, context)).toEqual({
      output: "no such file: a",
      error: true,
      code: "NOT_FOUND",
    });
  });

  it("uses the tool's own model rendering", async () => {
    const custom = defineTool({
      ...echoSpec(),
      outputSchema: z.object({ text: z.string(), failed: z.boolean() }),
      execute: async () => ({ text: "plain text", failed: true }),
      toModelOutput: (output) => ({ output: output.text, error: output.failed }),
    });
    expect(await toToolDef(custom).run({}, context)).toEqual({ output: "plain text", error: true });
  });
});

describe("isToolError", () => {
  it("recognises ToolErrors, also from another copy of the package", () => {
    expect(isToolError(new ToolError("INTERNAL", "x"))).toBe(true);
    const foreign = Object.assign(new Error("x"), { name: "ToolError", code: "NOT_FOUND" });
    expect(isToolError(foreign)).toBe(true);
    expect(isToolError(new Error("x"))).toBe(false);
  });
});
