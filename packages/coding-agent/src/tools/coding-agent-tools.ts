import { type AnyToolDefinition, MODEL_OUTPUT_LIMIT } from "@pleach/core";
import type { SandboxClient } from "../sandbox/index.js";
import { createApplyDiffTool } from "./apply-diff/tool.js";
import { createBashTool } from "./bash/tool.js";
import { createEditFileTool } from "./edit-file/tool.js";
import { createGitCloneTool } from "./git-clone/tool.js";
import { createGitDiffTool } from "./git-diff/tool.js";
import { offersJobs } from "./jobs/calls.js";
import { createJobInputTool } from "./jobs/input.js";
import { createJobKillTool } from "./jobs/kill.js";
import { createJobListTool } from "./jobs/list.js";
import { createJobOutputTool } from "./jobs/output.js";
import { createListFilesTool } from "./list-files/tool.js";
import { createReadFileTool } from "./read-file/tool.js";
import { createRunTestsTool } from "./run-tests/tool.js";
import { createSearchFilesTool } from "./search-files/tool.js";
import { type FileState, withFileState } from "./shared/file-state.js";
import type { TypeDiagnostics } from "./type-diagnostics/type-diagnostics.js";
import { withTypeDiagnostics } from "./type-diagnostics/with-type-diagnostics.js";
import { createWriteFileTool } from "./write-file/tool.js";

/**
 * One line of a tool registry: the tool's name (known before any client exists, for command
 * lines and listings), its factory over a client, and whether a client can serve it. What the
 * tool reads and writes it declares itself (`files` of `defineTool`), so the registry needs
 * nothing else.
 */
export interface ToolRegistration<Name extends string = string> {
  readonly name: Name;
  /** Make the tool; a tool that pages or cuts its own output sizes it to `budget`. */
  create(client: SandboxClient, budget: ToolBudget): AnyToolDefinition;
  /**
   * Whether the tool works over `client` (the job tools need a client that offers jobs). A tool
   * unavailable over a client is left out unless `only` names it; then it is made, and refuses.
   * @default always
   */
  available?(client: SandboxClient): boolean;
}

/** What a tool's own pages and cuts are sized to. */
export interface ToolBudget {
  /** The most characters of one result a model sees (see `renderToolResult`). */
  maxResultChars: number;
}

/**
 * The fourteen tools, in the order they are offered to a model: the ten that work over any
 * client, then the four job tools, offered where the client keeps jobs. A new tool is one more
 * line.
 */
const REGISTRY = [
  // A page leaves room for its continuation hint, so the cap never cuts into it.
  {
    name: "read_file",
    create: (client, { maxResultChars }) =>
      createReadFileTool(client, { maxChars: maxResultChars - 1_000 }),
  },
  { name: "list_files", create: (client) => createListFilesTool(client) },
  { name: "search_files", create: (client) => createSearchFilesTool(client) },
  { name: "edit_file", create: (client) => createEditFileTool(client) },
  { name: "apply_diff", create: (client) => createApplyDiffTool(client) },
  { name: "write_file", create: (client) => createWriteFileTool(client) },
  {
    name: "bash",
    create: (client, { maxResultChars }) =>
      createBashTool(client, { maxOutputChars: maxResultChars }),
  },
  { name: "run_tests", create: (client) => createRunTestsTool(client) },
  { name: "git_diff", create: (client) => createGitDiffTool(client) },
  { name: "git_clone", create: (client) => createGitCloneTool(client) },
  {
    name: "job_output",
    create: (client, { maxResultChars }) =>
      createJobOutputTool(client, { maxOutputBytes: maxResultChars - 1_000 }),
    available: offersJobs,
  },
  { name: "job_input", create: (client) => createJobInputTool(client), available: offersJobs },
  { name: "job_kill", create: (client) => createJobKillTool(client), available: offersJobs },
  { name: "job_list", create: (client) => createJobListTool(client), available: offersJobs },
] as const satisfies readonly ToolRegistration[];

type NamesOf<Registry extends readonly ToolRegistration[]> = {
  readonly [Index in keyof Registry]: Registry[Index]["name"];
};

/** The names of the fourteen tools, in the order they are offered to a model. */
// `map` loses the tuple's literal types, which the cast restores.
export const CODING_AGENT_TOOL_NAMES = REGISTRY.map(({ name }) => name) as unknown as NamesOf<
  typeof REGISTRY
>;

/** One of {@link CODING_AGENT_TOOL_NAMES}. */
export type CodingAgentToolName = (typeof CODING_AGENT_TOOL_NAMES)[number];

/** The tools over one client, in {@link CODING_AGENT_TOOL_NAMES} order. */
export type CodingAgentTools = AnyToolDefinition[];

/** Options of {@link createCodingAgentTools}. */
export interface CodingAgentToolsOptions {
  /**
   * Make only these tools, in this order (names of `extraTools` included), also those unavailable
   * over the client (they refuse when called).
   */
  // `string & {}` keeps the fourteen names offered by an editor while accepting the extra ones.
  only?: readonly (CodingAgentToolName | (string & {}))[];
  /**
   * The session's record of what the model has read (see {@link createFileState}): with it, the
   * tools that declare the files they write (`edit_file`, `apply_diff`, `write_file`) refuse
   * (`STALE_FILE`) to change an existing file the model has not read, or that changed on disk
   * since. Without it, no such check.
   */
  fileState?: FileState;
  /**
   * The session's type check (see {@link createTypeDiagnostics}): with it, the tools that declare
   * the files they write add the type errors each change made or fixed to their result. Without
   * it, no type check (the syntax check runs either way).
   */
  typeDiagnostics?: TypeDiagnostics;
  /**
   * More tools, made over the same client after the fourteen (a plugin's, a test's), each with
   * one registry line. They get the file state from their own declarations, as the fourteen do;
   * their names must differ from theirs.
   * @default []
   */
  extraTools?: readonly ToolRegistration[];
  /**
   * The most characters of one result the model will see: pass the same budget as the runtime's
   * `maxResultChars` or the MCP server's, so that read_file's pages (and bash's and job_output's
   * cuts) fit in it with their hints, rather than being cut in the middle by the cap.
   * @default 50_000
   */
  maxResultChars?: number;
}

/**
 * Make the tools available over `client` with their default options (all fourteen over a client
 * that offers jobs, the ten others over one that does not), or only those named in `only`.
 * The tools close over the client: after a fresh `acquire()`, make them again.
 */
export function createCodingAgentTools(
  client: SandboxClient,
  {
    only,
    fileState,
    typeDiagnostics,
    extraTools = [],
    maxResultChars = MODEL_OUTPUT_LIMIT,
  }: CodingAgentToolsOptions = {},
): CodingAgentTools {
  const registry = new Map<string, ToolRegistration>();
  for (const registration of [...REGISTRY, ...extraTools]) {
    if (registry.has(registration.name)) {
      throw new TypeError(`two tools are named ${JSON.stringify(registration.name)}`);
    }
    registry.set(registration.name, registration);
  }
  const offered = [...registry.values()]
    .filter((registration) => registration.available?.(client) ?? true)
    .map((registration) => registration.name);
  return (only ?? offered).map((name) => {
    const registration = registry.get(name);
    if (registration === undefined) {
      throw new TypeError(
        `unknown tool ${JSON.stringify(name)}; known: ${[...registry.keys()].join(", ")}`,
      );
    }
    const made = registration.create(client, { maxResultChars });
    if (made.name !== name) {
      throw new TypeError(`the tool registered as ${JSON.stringify(name)} is named ${made.name}`);
    }
    const tool = typeDiagnostics === undefined ? made : withTypeDiagnostics(made, typeDiagnostics);
    return fileState === undefined ? tool : withFileState(tool, { client, fileState });
  });
}
