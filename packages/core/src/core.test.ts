import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool } from "./define-tool.js";
import { isToolError, ToolError } from "./errors.js";
import { toolInputJSONSchema, toolOutputJSONSchema } from "./json-schema.js";
import { renderToolResult } from "./render.js";
import { runToolCall } from "./run-tool-call.js";
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

  it("applies the output schema's defaults and transforms, and strips unknown keys", async () => {
    const shaped = defineTool({
      name: "shaped",
      description: "returns an output the schema reshapes",
      inputSchema: z.object({}),
      outputSchema: z.object({
        name: z.string().trim(),
        tags: z.array(z.string()).default([]),
      }),
      execute: async () => ({ name: "  x  ", extra: 1 }) as unknown as { name: string },
    });
    expect(await shaped.execute({})).toEqual({ name: "x", tags: [] });
  });

  describe('with outputValidation "check"', () => {
    const entry = z.object({
      path: z.string(),
      line: z.number().int().min(1),
      kind: z.enum(["file", "dir"]),
      cut: z.literal(true).optional(),
    });
    type Entry = z.output<typeof entry>;
    const listing = (entries: () => Entry[], outputValidation: "parse" | "check" = "check") =>
      defineTool({
        name: "listing",
        description: "returns many entries",
        inputSchema: z.object({}),
        outputSchema: z.array(entry),
        outputValidation,
        execute: async () => entries(),
      });
    const many = (count: number): Entry[] =>
      Array.from({ length: count }, (_, index) => ({
        path: `f${index}`,
        line: index + 1,
        kind: "file",
      }));

    it("returns the output the tool built, not a copy", async () => {
      const built = many(50_000);
      const returned = await listing(() => built).execute({});
      expect(returned).toBe(built);
      expect(returned).toEqual(many(50_000));
    });

    it("still throws INVALID_OUTPUT, with zod's issues, when one entry of many drifts", async () => {
      const drifted = (): Entry[] => {
        const entries = many(50_000);
        (entries[40_000] as { line: number }).line = 0;
        (entries[45_000] as { kind: string }).kind = "link";
        return entries;
      };
      const failure = await listing(drifted)
        .execute({})
        .catch((error: unknown) => error);
      expect(failure).toMatchObject({ code: "INVALID_OUTPUT" });
      expect((failure as ToolError).message).toMatchInlineSnapshot(`
        "listing produced output that does not match its schema:
        - 40000.line: Too small: expected number to be >=1
        - 45000.kind: Invalid option: expected one of "file"|"dir""
      `);
      // The same issues as zod's parse gives.
      const parsed = await listing(drifted, "parse")
        .execute({})
        .catch((error: unknown) => error);
      expect((parsed as ToolError).details).toEqual((failure as ToolError).details);
    });

    it("is refused for a schema whose parse would change the output", () => {
      for (const outputSchema of [
        z.object({ name: z.string().trim() }),
        z.object({ tags: z.array(z.string()).default([]) }),
        z.object({ count: z.coerce.number() }),
        z.array(z.string().transform((text) => text.length)),
        z.object({ inner: z.object({ at: z.string().pipe(z.string()) }) }),
      ]) {
        expect(() =>
          defineTool({ ...echoSpec(), outputSchema, outputValidation: "check" }),
        ).toThrow(/plain data/);
      }
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

  it("renders a failure while the call's signal is aborted as aborted, but a ToolError as itself", () => {
    const abortSignal = AbortSignal.abort();
    expect(
      renderToolResult({ ok: false, error: new Error("socket closed") }, { abortSignal }),
    ).toEqual({ output: "aborted", error: true, code: "ABORTED" });
    expect(
      renderToolResult({ ok: false, error: new ToolError("TIMEOUT", "too slow") }, { abortSignal }),
    ).toEqual({ output: "too slow", error: true, code: "TIMEOUT" });
    expect(
      renderToolResult(
        { ok: false, error: new Error("socket closed") },
        { abortSignal: new AbortController().signal },
      ).code,
    ).toBe("INTERNAL");
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

describe("runToolCall", () => {
  it("runs parsed input or the wire's JSON text, and names the tools for an unknown one", async () => {
    const tools = [echo];
    expect(await runToolCall({ tools, name: "echo", input: { message: "a", times: 2 } })).toEqual({
      output: '{\n  "text": "aa"\n}',
      error: false,
    });
    expect(await runToolCall({ tools, name: "echo", inputText: '{"message":"b"}' })).toEqual({
      output: '{\n  "text": "b"\n}',
      error: false,
    });
    // Parsed input is never parsed again: a string is input of the wrong type, not JSON text.
    expect(await runToolCall({ tools, name: "echo", input: '{"message":"b"}' })).toMatchObject({
      error: true,
      code: "INVALID_INPUT",
    });
    expect(await runToolCall({ tools, name: "echo", inputText: "{oops" })).toMatchObject({
      output: expect.stringMatching(/^the arguments of echo are not valid JSON \(.+\); send one/),
      error: true,
      code: "INVALID_INPUT",
    });
    expect(await runToolCall({ tools, name: "ehco", input: {} })).toEqual({
      output: 'there is no tool named "ehco"; the tools are: echo',
      error: true,
      code: "INVALID_INPUT",
    });
  });

  it("reads a failure caused by an abort as aborted, and caps what the model sees", async () => {
    const controller = new AbortController();
    const stuck = defineTool({
      ...echoSpec(),
      execute: async () => {
        controller.abort();
        throw new Error("socket closed");
      },
    });
    const context = { abortSignal: controller.signal };
    expect(await runToolCall({ tools: [stuck], name: "echo", input: {}, context })).toEqual({
      output: "aborted",
      error: true,
      code: "ABORTED",
    });
    // Without an abort the same failure is an internal error.
    const failing = defineTool({
      ...echoSpec(),
      execute: async () => {
        throw new Error("socket closed");
      },
    });
    expect(await runToolCall({ tools: [failing], name: "echo", input: {} })).toEqual({
      output: "internal error: socket closed",
      error: true,
      code: "INTERNAL",
    });
    const long = await runToolCall({
      tools: [echo],
      name: "echo",
      input: { message: "x", times: 500 },
      maxChars: 100,
    });
    expect(long.output.length).toBeLessThanOrEqual(100);
  });
});

describe("toToolDef (the ToolDef contract)", () => {
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
