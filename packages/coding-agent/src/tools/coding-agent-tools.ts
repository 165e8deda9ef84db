import type { AnyToolDefinition } from "@pleach/core";
import type { SandboxClient } from "../sandbox/index.js";
import { createApplyDiffTool } from "./apply-diff.js";
import { createBashTool } from "./bash.js";
import { createEditFileTool } from "./edit-file.js";
import { diffFileNames, type FileState, withFileState } from "./file-state.js";
import { createGitCloneTool } from "./git-clone.js";
import { createGitDiffTool } from "./git-diff.js";
import { createListFilesTool } from "./list-files.js";
import { createReadFileTool } from "./read-file.js";
import { createRunTestsTool } from "./run-tests.js";
import { createSearchFilesTool } from "./search-files.js";
import { createWriteFileTool } from "./write-file.js";

/** The names of the ten tools, in the order they are offered to a model. */
export const CODING_AGENT_TOOL_NAMES = [
  "read_file",
  "list_files",
  "search_files",
  "edit_file",
  "apply_diff",
  "write_file",
  "bash",
  "run_tests",
  "git_diff",
  "git_clone",
] as const;

/** One of {@link CODING_AGENT_TOOL_NAMES}. */
export type CodingAgentToolName = (typeof CODING_AGENT_TOOL_NAMES)[number];

/** The ten tools over one client, in {@link CODING_AGENT_TOOL_NAMES} order. */
export type CodingAgentTools = AnyToolDefinition[];

const FACTORIES: Record<CodingAgentToolName, (client: SandboxClient) => AnyToolDefinition> = {
  read_file: createReadFileTool,
  list_files: createListFilesTool,
  search_files: createSearchFilesTool,
  edit_file: createEditFileTool,
  apply_diff: createApplyDiffTool,
  write_file: createWriteFileTool,
  bash: createBashTool,
  run_tests: createRunTestsTool,
  git_diff: createGitDiffTool,
  git_clone: createGitCloneTool,
};

/** Options of {@link createCodingAgentTools}. */
export interface CodingAgentToolsOptions {
  /** Make only these tools, in this order. */
  only?: readonly CodingAgentToolName[];
  /**
   * The session's record of what the model has read (see {@link createFileState}): with it,
   * `edit_file`, `apply_diff` and `write_file` refuse (`STALE_FILE`) to change an existing file
   * the model has not read, or that changed on disk since. Without it, no such check.
   */
  fileState?: FileState;
}

/**
 * Make the ten tools over `client` with their default options, or only those named in `only`.
 * The tools close over the client: after a fresh `acquire()`, make them again.
 */
export function createCodingAgentTools(
  client: SandboxClient,
  { only, fileState }: CodingAgentToolsOptions = {},
): CodingAgentTools {
  const names = only ?? CODING_AGENT_TOOL_NAMES;
  return names.map((name) => {
    const factory = FACTORIES[name];
    if (factory === undefined) {
      throw new TypeError(
        `unknown tool ${JSON.stringify(name)}; known: ${CODING_AGENT_TOOL_NAMES.join(", ")}`,
      );
    }
    const tool = factory(client);
    return fileState === undefined ? tool : withSessionFileState(tool, { client, fileState });
  });
}

type Fields = Record<string, unknown>;
const fieldsOf = (input: unknown): Fields =>
  typeof input === "object" && input !== null ? (input as Fields) : {};
const stringField = (input: unknown, key: string): string[] => {
  const value = fieldsOf(input)[key];
  return typeof value === "string" && value !== "" ? [value] : [];
};

/** Apply {@link withFileState} to the tools that read or write whole files. */
function withSessionFileState(
  tool: AnyToolDefinition,
  { client, fileState }: { client: SandboxClient; fileState: FileState },
): AnyToolDefinition {
  switch (tool.name) {
    case "read_file":
      return withFileState(tool, {
        client,
        fileState,
        kind: "read",
        pathsOf: (input) => stringField(input, "path"),
      });
    case "write_file":
      return withFileState(tool, {
        client,
        fileState,
        kind: "write",
        pathsOf: (input) => stringField(input, "path"),
      });
    case "edit_file":
      return withFileState(tool, {
        client,
        fileState,
        kind: "write",
        pathsOf: (input) => stringField(input, "path"),
      });
    case "apply_diff":
      return withFileState(tool, {
        client,
        fileState,
        kind: "write",
        pathsOf: (input) => {
          const [target] = stringField(input, "path");
          const diff = stringField(input, "diff")[0] ?? "";
          // "." means the diff's own file names; any other path is the one file it changes.
          return target === undefined || target === "." || target === "./"
            ? diffFileNames(diff)
            : [target];
        },
      });
    default:
      return tool;
  }
}
