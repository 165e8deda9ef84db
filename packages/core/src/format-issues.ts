import type { z } from "zod";

/** One line per issue, `- field.path: message`, so a model can fix each wrong field. */
export function formatZodIssues(issues: readonly z.core.$ZodIssue[]): string {
  return issues
    .map((issue) => {
      const where = issue.path.length === 0 ? "(input)" : issue.path.map(String).join(".");
      return `- ${where}: ${issue.message}`;
    })
    .join("\n");
}
