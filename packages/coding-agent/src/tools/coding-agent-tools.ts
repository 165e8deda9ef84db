import type { AnyToolDefinition } from "@pleach/core";
import type { SandboxClient } from "../sandbox/index.js";
import { createApplyDiffTool } from "./apply-diff.js";
import { createBashTool } from "./bash.js";
import { createEditFileTool } from "./edit-file.js";
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

/**
 * Make the ten tools over `client` with their default options, or only those named in `only`.
 * The tools close over the client: after a fresh `acquire()`, make them again.
 */
export function createCodingAgentTools(
  client: SandboxClient,
  { only }: { only?: readonly CodingAgentToolName[] } = {},
): CodingAgentTools {
  const names = only ?? CODING_AGENT_TOOL_NAMES;
  return names.map((name) => {
    const factory = FACTORIES[name];
    if (factory === undefined) {
      throw new TypeError(
        `unknown tool ${JSON.stringify(name)}; known: ${CODING_AGENT_TOOL_NAMES.join(", ")}`,
      );
    }
    return factory(client);
  });
}
