import { z } from "zod";

/** One matching line. */
export const searchMatchSchema = z.object({
  path: z
    .string()
    .describe("The file, relative to the workspace root (e.g. `src/index.ts`, never `./...`)."),
  line: z.number().int().min(1).describe("The 1-based line number of the match."),
  snippet: z
    .string()
    .describe("The matching line, without its line ending; a long line is cut with a marker."),
  snippetTruncated: z
    .literal(true)
    .optional()
    .describe("Present when the line was longer than the snippet limit and was cut."),
  truncatedAfter: z
    .literal(true)
    .optional()
    .describe(
      "Present on the last match only, when more matches exist than `maxMatches`: the list was cut after it.",
    ),
});

/** One entry of `search_files`' output. */
export type SearchMatch = z.output<typeof searchMatchSchema>;

/**
 * A match: `path`, `line`, and the content at `text[start, lineEnd)` less a final `\r`, cut at
 * `maxSnippetChars` with a marker.
 */
export function searchMatch(
  path: string,
  line: number,
  text: string,
  start: number,
  lineEnd: number,
  maxSnippetChars: number,
): SearchMatch {
  const end =
    text.charCodeAt(lineEnd - 1) === 0x0d /* \r */ && lineEnd > start ? lineEnd - 1 : lineEnd;
  if (end - start <= maxSnippetChars) return { path, line, snippet: text.slice(start, end) };
  let cut = start + maxSnippetChars;
  // Never split a surrogate pair.
  const last = text.charCodeAt(cut - 1);
  if (last >= 0xd800 && last <= 0xdbff) cut -= 1;
  return {
    path,
    line,
    snippet: `${text.slice(start, cut)} [... line cut at ${maxSnippetChars} characters]`,
    snippetTruncated: true,
  };
}
