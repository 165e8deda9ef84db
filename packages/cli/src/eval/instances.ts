import { readFile } from "node:fs/promises";
import { z } from "zod";
import { UsageError } from "../cli-support.js";

const requiredString = z.string({
  error: (issue) =>
    issue.input === undefined
      ? "is missing (a string is needed)"
      : `must be a string, not ${JSON.stringify(issue.input)}`,
});

/** SWE-bench stores its test lists as JSON text; a plain array is accepted too. */
const testNames = z.preprocess(
  (value) => {
    if (typeof value !== "string") return value;
    try {
      return JSON.parse(value);
    } catch {
      return value;
    }
  },
  z.array(z.string({ error: "must be a test name (a string)" }), {
    error: "must be a list of test names (or SWE-bench's JSON text of one)",
  }),
);

/** One evaluation instance, in SWE-bench's shape (plus `test_command`); other fields are dropped. */
const evalInstanceSchema = z.object(
  {
    instance_id: requiredString,
    repo: requiredString.describe(
      "A git URL, a local path, or SWE-bench's `owner/name` (GitHub, unless a folder of that path exists).",
    ),
    base_commit: requiredString,
    problem_statement: requiredString,
    test_patch: requiredString,
    FAIL_TO_PASS: testNames,
    PASS_TO_PASS: z.preprocess((value) => value ?? [], testNames),
    version: z
      .union([z.string(), z.number().transform(String)], {
        error: 'must be a string, such as SWE-bench\'s "3.0"',
      })
      .optional()
      .describe("The repository's version, which picks SWE-bench's test command for some."),
    patch: z.string().optional().describe("The reference solution, used by `--model gold`."),
    test_command: z
      .string()
      .optional()
      .describe(
        "The command that runs the tests; its output must name each test (pytest, unittest, django, sympy, TAP).",
      ),
  },
  { error: "must be a JSON object" },
);

/** One evaluation instance. */
export type EvalInstance = z.output<typeof evalInstanceSchema>;

/**
 * Reads a JSONL file of instances, checking each has the fields the harness needs. A bad line is a
 * {@link UsageError} naming the file, the line and the field.
 */
export async function readInstances(file: string): Promise<EvalInstance[]> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    throw new UsageError(`cannot read ${file}: ${(error as Error).message}`, { command: "eval" });
  }
  const instances: EvalInstance[] = [];
  text.split("\n").forEach((line, index) => {
    if (line.trim() === "") return;
    const where = `${file} line ${index + 1}`;
    let record: unknown;
    try {
      record = JSON.parse(line);
    } catch (error) {
      throw new UsageError(`${where} is not JSON: ${(error as Error).message}`, {
        command: "eval",
      });
    }
    const parsed = evalInstanceSchema.safeParse(record);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const field = (issue?.path ?? [])
        .map((key, at) =>
          typeof key === "number" ? `[${key}]` : `${at > 0 ? "." : ""}${String(key)}`,
        )
        .join("");
      throw new UsageError(
        `${where}${field === "" ? "" : `: ${field}`} ${issue?.message ?? "is not an instance"}`,
        { command: "eval" },
      );
    }
    instances.push(parsed.data);
  });
  if (instances.length === 0) {
    throw new UsageError(`${file} holds no instances`, { command: "eval" });
  }
  return instances;
}
