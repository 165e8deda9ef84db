import { Buffer } from "node:buffer";
import path from "node:path";
import { capText, defineTool, type PluginToolDefinition, ToolError } from "@pleach/core";
import { z } from "zod";
import type { ExecResult, SandboxClient } from "../../sandbox/index.js";
import { isInsideGitDir, resolveWorkspacePath } from "../shared/relative-path.js";
import { fullOutputNoteLines, keptOutputSchema } from "../shared/sandbox-hints.js";
import { shellJoin } from "../shared/shell-quote.js";

/** The input of `git_diff`. */
export const gitDiffInputSchema = z
  .object({
    cwd: z
      .string()
      .describe(
        'The repository folder (or a folder inside it), relative to the workspace root; "." for the root. An absolute path inside the workspace works too.',
      ),
    paths: z
      .array(
        z
          .string()
          .min(1)
          .refine((item) => !item.includes("\0"), { message: "a path cannot contain a NUL byte" }),
      )
      .optional()
      .describe(
        "Limit the diff to these files or folders (git pathspecs, relative to `cwd`, or absolute paths inside the workspace). Default: every changed file.",
      ),
    staged: z
      .boolean()
      .optional()
      .describe(
        "Diff the staged changes (index against HEAD) instead of the unstaged ones (working tree against index). Default false.",
      ),
  })
  .strict();

/** One changed file of a diff. */
const diffFileSchema = z.object({
  path: z
    .string()
    .describe("The file, relative to the repository's top folder; the new path of a rename."),
  additions: z.number().int().min(-1).describe("Lines added; -1 for a binary file."),
  deletions: z.number().int().min(-1).describe("Lines deleted; -1 for a binary file."),
  oldPath: z.string().optional().describe("Renames only: the path the file had before."),
});

/** The output of `git_diff`. */
export const gitDiffOutputSchema = z.object({
  diff: z
    .string()
    .describe("The unified diff text; a very large diff is cut in the middle with a marker."),
  files: z
    .array(diffFileSchema)
    .describe("Every changed file with its line counts (never cut, however large the diff)."),
  diffTruncated: z.boolean().describe("Whether `diff` was cut to fit the limit."),
  fullOutput: keptOutputSchema
    .optional()
    .describe("Where the whole diff text was kept when it was cut (a client that keeps output)."),
});

/** What `git_diff` accepts. */
export type GitDiffInput = z.input<typeof gitDiffInputSchema>;
/** What `git_diff` returns. */
export type GitDiffOutput = z.output<typeof gitDiffOutputSchema>;
/** One changed file, as {@link parseNumstat} returns it. */
export type DiffFile = z.output<typeof diffFileSchema>;

/** Options of {@link createGitDiffTool}. */
export interface GitDiffToolOptions {
  /**
   * The most characters of diff text returned; a longer diff keeps its head and tail.
   * @default 200_000
   */
  maxDiffChars?: number;
  /**
   * Time limit of each git call, in milliseconds.
   * @default 60_000
   */
  timeoutMs?: number;
}

/**
 * Settings that make the output independent of the user's git configuration: no pager, colour,
 * external diff driver or textconv filter; `a/` `b/` prefixes; paths from the top folder, unquoted
 * (`-z` keeps them parseable); renames detected.
 */
const DIFF_FLAGS = [
  "--no-pager",
  "-c",
  "core.pager=cat",
  "-c",
  "core.quotePath=false",
  "-c",
  "diff.noprefix=false",
  "-c",
  "diff.mnemonicPrefix=false",
  "-c",
  "diff.relative=false",
  "-c",
  "diff.renames=true",
  "diff",
  "--no-color",
  "--no-ext-diff",
  "--no-textconv",
];

/**
 * `git_diff`: `git diff [--staged] [--numstat] [-- <paths>]` run twice in parallel, once
 * for per-file counts (`--numstat -z`) and once for the diff text. Binary files count -1/-1.
 */
export function createGitDiffTool(
  client: SandboxClient,
  { maxDiffChars = 200_000, timeoutMs = 60_000 }: GitDiffToolOptions = {},
): PluginToolDefinition<typeof gitDiffInputSchema, typeof gitDiffOutputSchema> {
  return defineTool({
    name: "git_diff",
    description: [
      "Show uncommitted changes of a git repository: the unified diff and, per file, lines added and deleted (binary files count -1).",
      "By default the unstaged changes (working tree against the index); `staged: true` shows what is staged for the next commit. Untracked files are not included (see `git status`).",
      `Paths are relative to the repository's top folder. The diff text is cut at ${maxDiffChars.toLocaleString("en-US")} characters; the file list never is, so narrow a large diff with \`paths\`.`,
    ].join(" "),
    inputSchema: gitDiffInputSchema,
    outputSchema: gitDiffOutputSchema,
    annotations: { title: "Git diff", readOnlyHint: true, idempotentHint: true },
    async execute({ cwd, paths: given = [], staged = false }, { abortSignal }) {
      const folder = await resolveWorkspacePath(client, cwd, {
        field: "cwd",
        kind: "folder",
        abortSignal,
      });
      if (isInsideGitDir(folder)) {
        throw new ToolError(
          "INVALID_INPUT",
          `cwd ${JSON.stringify(cwd)} lies inside a .git folder. Give the repository's working-tree folder.`,
        );
      }
      const paths: string[] = [];
      for (const [index, item] of given.entries()) {
        const resolved = await resolveWorkspacePath(client, item, {
          field: `paths[${index}]`,
          base: folder,
          kind: "file",
          abortSignal,
        });
        // A relative pathspec goes to git as given; an absolute one relative to cwd.
        paths.push(
          path.posix.isAbsolute(item) ? path.posix.relative(folder, resolved) || "." : item,
        );
      }
      const base = ["git", ...DIFF_FLAGS, ...(staged ? ["--staged"] : [])];
      // Outside a work tree `git diff` silently turns into `git diff --no-index` between paths.
      const requireWorkTree = "git rev-parse --show-toplevel >/dev/null && ";
      const run = (argv: string[], maxOutputBytes: number, fullOutputOverBytes?: number) =>
        client.exec(`${requireWorkTree}${shellJoin(argv)}`, {
          cwd: folder,
          timeoutMs,
          abortSignal,
          maxOutputBytes,
          ...(fullOutputOverBytes === undefined ? {} : { fullOutputOverBytes }),
        });
      const [numstat, raw] = await Promise.all([
        run([...base, "--numstat", "-z", "--", ...paths], 64 * 1024 * 1024),
        // The diff text is kept whole where the client can, so a cut one can be read on.
        run([...base, "--", ...paths], 32 * 1024 * 1024, maxDiffChars),
      ]);
      for (const result of [numstat, raw]) checkGitResult(result, { cwd, timeoutMs });
      if (numstat.truncated) {
        throw new ToolError(
          "TOO_LARGE",
          "git diff --numstat printed more than git_diff can hold. Narrow the diff with paths.",
        );
      }
      const capped = capText(raw.stdout, { maxChars: maxDiffChars });
      const diffTruncated = capped.cutChars > 0 || raw.truncated;
      return {
        diff: capped.text,
        files: parseNumstat(numstat.stdout),
        diffTruncated,
        ...(diffTruncated && raw.fullOutput !== undefined ? { fullOutput: raw.fullOutput } : {}),
      };
    },
    toModelOutput(output) {
      if (output.files.length === 0 && output.diff === "") {
        return {
          output: "No changes. (Untracked files are not shown; check `git status`.)",
          error: false,
        };
      }
      const summary = output.files.map((file) => {
        const name = file.oldPath === undefined ? file.path : `${file.oldPath} => ${file.path}`;
        const counts = file.additions < 0 ? "binary" : `+${file.additions} -${file.deletions}`;
        return `  ${name}  ${counts}`;
      });
      const count = `${output.files.length} file${output.files.length === 1 ? "" : "s"} changed:`;
      const cut = output.diffTruncated
        ? [
            "",
            `[the diff text was cut; to see the rest, call git_diff again with \`paths\` naming some of the ${output.files.length} files above]`,
            ...fullOutputNoteLines({ cut: true, fullOutput: output.fullOutput }),
          ]
        : [];
      return { output: [count, ...summary, "", output.diff, ...cut].join("\n"), error: false };
    },
  });
}

function checkGitResult(
  result: ExecResult,
  { cwd, timeoutMs }: { cwd: string; timeoutMs: number },
) {
  if (result.timedOut) {
    throw new ToolError(
      "TIMEOUT",
      `git diff ran past ${timeoutMs} ms and was stopped. Narrow it with paths.`,
    );
  }
  if (result.exitCode !== 0) {
    const message = (result.stderr.trim() || "no message").slice(-4_000);
    throw new ToolError(
      "COMMAND_FAILED",
      `git diff failed in ${JSON.stringify(cwd)} (exit ${result.exitCode}):\n${message}\nCheck that cwd is inside a git repository and that paths name files in it.`,
      { details: { exitCode: result.exitCode, stderr: result.stderr } },
    );
  }
}

/**
 * Parse `git diff --numstat` output into per-file counts. Reads both forms:
 * - `-z` (what `git_diff` runs): `added\tdeleted\tpath\0`, and for a rename
 *   `added\tdeleted\t\0old\0new\0`; any file name parses.
 * - plain lines: `added\tdeleted\tpath`, with renames as `old => new` or `dir/{old => new}/file`,
 *   and C-quoted names (`"caf\303\251.txt"`). A file whose plain name contains ` => ` reads as a
 *   rename; use `-z` to be exact.
 *
 * Binary files (`-\t-`) count -1/-1.
 */
export function parseNumstat(stdout: string): DiffFile[] {
  return stdout.includes("\0") ? parseNulNumstat(stdout) : parseLineNumstat(stdout);
}

function parseNulNumstat(stdout: string): DiffFile[] {
  const files: DiffFile[] = [];
  const fields = stdout.split("\0");
  let index = 0;
  while (index < fields.length) {
    const field = fields[index++] ?? "";
    // Between records git may leave a newline; a record's counts start at the next digit or `-`.
    const record = field.replace(/^\n+/, "");
    if (record === "") continue;
    const counts = parseCounts(record);
    if (counts === undefined) continue;
    if (counts.rest !== "") {
      files.push({ path: counts.rest, additions: counts.additions, deletions: counts.deletions });
      continue;
    }
    const oldPath = fields[index++] ?? "";
    const path = fields[index++] ?? "";
    files.push({ path, additions: counts.additions, deletions: counts.deletions, oldPath });
  }
  return files;
}

function parseLineNumstat(stdout: string): DiffFile[] {
  const files: DiffFile[] = [];
  for (const line of stdout.split("\n")) {
    const counts = parseCounts(line.endsWith("\r") ? line.slice(0, -1) : line);
    if (counts === undefined || counts.rest === "") continue;
    const { additions, deletions } = counts;
    const names = parseDisplayedName(counts.rest);
    files.push(
      names.oldPath === undefined
        ? { path: names.path, additions, deletions }
        : { path: names.path, additions, deletions, oldPath: names.oldPath },
    );
  }
  return files;
}

const COUNTS = /^(\d+|-)\t(\d+|-)\t/;

function parseCounts(
  record: string,
): { additions: number; deletions: number; rest: string } | undefined {
  const match = COUNTS.exec(record);
  if (match === null) return undefined;
  const [whole, added = "-", deleted = "-"] = match;
  return {
    additions: added === "-" ? -1 : Number(added),
    deletions: deleted === "-" ? -1 : Number(deleted),
    rest: record.slice(whole.length),
  };
}

/** A plain numstat name: `path`, `"quoted"`, `old => new`, `"old" => "new"` or `pfx{old => new}sfx`. */
function parseDisplayedName(name: string): { path: string; oldPath?: string } {
  if (name.startsWith('"')) {
    const first = readQuoted(name, 0);
    const rest = name.slice(first.end);
    if (rest === "") return { path: first.value };
    if (rest.startsWith(" => ")) {
      return { oldPath: first.value, path: unquoteWhole(rest.slice(4)) };
    }
    return { path: name };
  }
  const arrow = name.indexOf(" => ");
  if (arrow === -1) return { path: name };
  const open = name.lastIndexOf("{", arrow);
  const close = name.indexOf("}", arrow);
  if (open !== -1 && close !== -1) {
    const prefix = name.slice(0, open);
    const suffix = name.slice(close + 1);
    return {
      oldPath: joinRenamePart(prefix, name.slice(open + 1, arrow), suffix),
      path: joinRenamePart(prefix, name.slice(arrow + 4, close), suffix),
    };
  }
  return { oldPath: name.slice(0, arrow), path: unquoteWhole(name.slice(arrow + 4)) };
}

/** `dir/{ => sub}/a` has an empty middle: `dir/` + `/a` must not double the slash. */
function joinRenamePart(prefix: string, middle: string, suffix: string): string {
  return middle === "" ? prefix + suffix.replace(/^\//, "") : prefix + middle + suffix;
}

function unquoteWhole(text: string): string {
  if (!text.startsWith('"')) return text;
  const quoted = readQuoted(text, 0);
  return quoted.end === text.length ? quoted.value : text;
}

const ESCAPES: Record<string, number> = {
  a: 7,
  b: 8,
  t: 9,
  n: 10,
  v: 11,
  f: 12,
  r: 13,
  '"': 34,
  "\\": 92,
};

/** Read git's C-style quoted name starting at `start` (a `"`): octal escapes are UTF-8 bytes. */
function readQuoted(text: string, start: number): { value: string; end: number } {
  const bytes: number[] = [];
  let index = start + 1;
  while (index < text.length) {
    const character = String.fromCodePoint(text.codePointAt(index) ?? 0);
    if (character === '"') {
      return { value: Buffer.from(bytes).toString("utf8"), end: index + 1 };
    }
    if (character === "\\") {
      const next = text[index + 1] ?? "";
      const octal = /^[0-7]{3}/.exec(text.slice(index + 1, index + 4));
      if (octal !== null) {
        bytes.push(Number.parseInt(octal[0], 8));
        index += 4;
        continue;
      }
      bytes.push(ESCAPES[next] ?? next.charCodeAt(0));
      index += 2;
      continue;
    }
    bytes.push(...Buffer.from(character, "utf8"));
    index += character.length;
  }
  // No closing quote: not a quoted name after all.
  return { value: text.slice(start), end: text.length };
}
