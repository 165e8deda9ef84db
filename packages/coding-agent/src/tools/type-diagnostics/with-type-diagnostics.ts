import { type AnyToolDefinition, defineTool, type PluginToolDefinition } from "@pleach/core";
import { z } from "zod";
import type { TypeDiagnostic } from "./language-server.js";
import { checkedExtensions } from "./servers.js";
import type { FileTypeCheck, TypeDiagnostics } from "./type-diagnostics.js";

const diagnosticSchema = z.object({
  line: z.number().int().min(1).describe("1-based line."),
  message: z.string(),
  code: z
    .string()
    .optional()
    .describe("The checker's code: `TS2322`, `reportAttributeAccessIssue`."),
});

const countedSchema = z.object({
  count: z.number().int().nonnegative(),
  errors: z.array(diagnosticSchema).describe("The first few, by line."),
});

/** The `typeCheck` output field a change's result gets with type diagnostics on. */
export const typeCheckSchema = z
  .array(
    z.object({
      path: z.string().describe("The file, as the tool named it."),
      checker: z.string().optional().describe('"TypeScript" or "pyright"; absent when none fits.'),
      status: z
        .enum(["checked", "unavailable", "no-server"])
        .describe("`no-server`: no checker fits the file; `unavailable`: see `reason`."),
      introduced: countedSchema.optional().describe("Type errors the change made."),
      fixed: countedSchema.optional().describe("Type errors the change removed (lines before it)."),
      existing: z.number().int().nonnegative().optional().describe("Errors already there, kept."),
      reason: z.string().optional().describe("Why the check could not run, and what to do."),
    }),
  )
  .optional()
  .describe(
    "With type diagnostics on: what a language server found in each file the change wrote, compared with before the change.",
  );

/**
 * Wrap a tool that declares the files it writes (`files.writes`) so that its result says which
 * type errors the change made and fixed in them (see {@link TypeDiagnostics}), as a `typeCheck`
 * output field and one line per file after the tool's own text. Any other tool is returned as it
 * is.
 */
export function withTypeDiagnostics<Tool extends AnyToolDefinition>(
  tool: Tool,
  diagnostics: TypeDiagnostics,
): Tool {
  const { files } = tool;
  const schema: unknown = tool.outputSchema;
  if (files?.writes === undefined || !(schema instanceof z.ZodObject)) return tool;
  const wrapped: PluginToolDefinition = defineTool({
    name: tool.name,
    description: `${tool.description} Type errors the change makes or fixes in a TypeScript, JavaScript or Python file are listed in the result too, from a language server.`,
    inputSchema: tool.inputSchema,
    outputSchema: schema.extend({ typeCheck: typeCheckSchema }),
    annotations: tool.annotations,
    files,
    async execute(input, context) {
      const run = await diagnostics.begin(files.writes?.(input) ?? []);
      const output = await tool.execute(input, context);
      const typeCheck = await run.finish();
      return typeCheck.length === 0 ? output : { ...output, typeCheck };
    },
    toModelOutput(output) {
      const result = tool.toModelOutput(output);
      const { typeCheck } = output as { typeCheck?: FileTypeCheck[] };
      if (typeCheck === undefined || typeCheck.length === 0) return result;
      return { ...result, output: [result.output, ...typeCheck.map(typeCheckNote)].join("\n") };
    },
  });
  return wrapped as Tool;
}

/** The line a model reads about one file's type check. */
function typeCheckNote(check: FileTypeCheck): string {
  const { path, checker, status } = check;
  if (status === "no-server") {
    return `Type check: no language server fits ${path} (checked: ${checkedExtensions()}).`;
  }
  if (status === "unavailable") {
    return `Type check of ${path} unavailable: ${check.reason ?? "unknown reason"}.`;
  }
  const introduced = check.introduced ?? { count: 0, errors: [] };
  const fixed = check.fixed ?? { count: 0, errors: [] };
  const existing = check.existing ?? 0;
  const head = `Type check (${checker}):`;
  const parts: string[] = [];
  if (introduced.count > 0) {
    const them = introduced.count === 1 ? "it" : "them";
    parts.push(
      `the change introduced ${errors(introduced.count)} in ${path}: ${listed(introduced)}; fix ${them} before running the code.`,
    );
  }
  if (fixed.count > 0) {
    parts.push(`the change fixed ${errors(fixed.count)} in ${path} (before it: ${listed(fixed)}).`);
  }
  if (parts.length === 0) parts.push(`no new type errors in ${path}.`);
  const already = existing === 0 ? "" : ` ${errors(existing)} already there remain.`;
  return `${head} ${parts.join(" ")}${already}`;
}

function errors(count: number): string {
  return count === 1 ? "1 type error" : `${count} type errors`;
}

/** `line 4: Type 'number' is not … (TS2322); line 9: …`, and how many more. */
function listed({ count, errors: shown }: { count: number; errors: TypeDiagnostic[] }): string {
  const text = shown
    .map(({ line, message, code }) => {
      // Pyright adds indented detail lines; the first says what is wrong.
      const first = (message.split("\n")[0] ?? "").trim();
      const short = first.length > 200 ? `${first.slice(0, 199)}…` : first;
      return `line ${line}: ${short}${code === undefined ? "" : ` (${code})`}`;
    })
    .join("; ");
  return count > shown.length ? `${text}; and ${count - shown.length} more` : text;
}
