export type {
  ApplyDiffHunkReport,
  ApplyDiffInput,
  ApplyDiffOutput,
  ApplyDiffToolOptions,
} from "./apply-diff/tool.js";
export {
  APPLY_DIFF_PATCH_FILE,
  applyDiffInputSchema,
  applyDiffOutputSchema,
  createApplyDiffTool,
} from "./apply-diff/tool.js";
export type { BashInput, BashOutput } from "./bash/schema.js";
export { bashInputSchema, bashOutputSchema } from "./bash/schema.js";
export type { BashToolOptions } from "./bash/tool.js";
export { createBashTool } from "./bash/tool.js";
export type {
  CodingAgentToolName,
  CodingAgentTools,
  CodingAgentToolsOptions,
  ToolBudget,
  ToolRegistration,
} from "./coding-agent-tools.js";
export { CODING_AGENT_TOOL_NAMES, createCodingAgentTools } from "./coding-agent-tools.js";
export type { ApplyFilePatchOptions, ApplyFilePatchResult, HunkReport } from "./diff/apply.js";
export { applyFilePatch } from "./diff/apply.js";
export type { TolerantMatch } from "./diff/locate-text.js";
export { locateTolerantly } from "./diff/locate-text.js";
export type { FilePatch } from "./diff/parse.js";
export { parseUnifiedDiff } from "./diff/parse.js";
export type { EditLocation } from "./edit-file/locate-edit.js";
export { editText, locateEdit } from "./edit-file/locate-edit.js";
export type { EditFileInput, EditFileOutput, EditFileToolOptions } from "./edit-file/tool.js";
export { createEditFileTool, editFileInputSchema, editFileOutputSchema } from "./edit-file/tool.js";
export type { GitCloneInput, GitCloneOutput, GitCloneToolOptions } from "./git-clone/tool.js";
export { createGitCloneTool, gitCloneInputSchema, gitCloneOutputSchema } from "./git-clone/tool.js";
export type { GitDiffInput, GitDiffOutput, GitDiffToolOptions } from "./git-diff/tool.js";
export {
  createGitDiffTool,
  gitDiffInputSchema,
  gitDiffOutputSchema,
  parseNumstat,
} from "./git-diff/tool.js";
export type { JobInputInput, JobInputOutput } from "./jobs/input.js";
export { createJobInputTool, jobInputInputSchema, jobInputOutputSchema } from "./jobs/input.js";
export type { JobKillInput, JobKillOutput } from "./jobs/kill.js";
export { createJobKillTool, jobKillInputSchema, jobKillOutputSchema } from "./jobs/kill.js";
export type { JobListInput, JobListOutput } from "./jobs/list.js";
export { createJobListTool, jobListInputSchema, jobListOutputSchema } from "./jobs/list.js";
export type { JobOutputInput, JobOutputOutput, JobOutputToolOptions } from "./jobs/output.js";
export {
  createJobOutputTool,
  jobOutputInputSchema,
  jobOutputOutputSchema,
} from "./jobs/output.js";
export type { ListFilesInput, ListFilesOutput, ListFilesToolOptions } from "./list-files/tool.js";
export {
  createListFilesTool,
  listFilesInputSchema,
  listFilesOutputSchema,
} from "./list-files/tool.js";
export type { ReadFileInput, ReadFileOutput, ReadFileToolOptions } from "./read-file/tool.js";
export { createReadFileTool, readFileInputSchema, readFileOutputSchema } from "./read-file/tool.js";
export type { RunTestsInput, RunTestsOutput, RunTestsToolOptions } from "./run-tests/tool.js";
export { createRunTestsTool, runTestsInputSchema, runTestsOutputSchema } from "./run-tests/tool.js";
export type {
  SearchFilesInput,
  SearchFilesOutput,
  SearchFilesToolOptions,
} from "./search-files/tool.js";
export {
  createSearchFilesTool,
  searchFilesInputSchema,
  searchFilesOutputSchema,
} from "./search-files/tool.js";
export { showControlCharacters } from "./shared/control-characters.js";
export type { FileRecord, FileState, WithFileStateOptions } from "./shared/file-state.js";
export { createFileState, diffFileNames, withFileState } from "./shared/file-state.js";
export { shellJoin, shellQuote } from "./shared/shell-quote.js";
export type {
  TestOutputReading,
  TestRunnerCounts,
  TestStatus,
  TestVerdict,
} from "./test-output/parse.js";
export { latestStatuses, parseTestRunnerOutput, readTestOutput } from "./test-output/parse.js";
export type { TypeDiagnostic } from "./type-diagnostics/language-server.js";
export type { TypeServerPaths } from "./type-diagnostics/servers.js";
export { TYPE_SERVER_VERSIONS } from "./type-diagnostics/servers.js";
export type {
  FileTypeCheck,
  TypeCheckRun,
  TypeDiagnostics,
  TypeDiagnosticsOptions,
} from "./type-diagnostics/type-diagnostics.js";
export { createTypeDiagnostics } from "./type-diagnostics/type-diagnostics.js";
export { typeCheckSchema, withTypeDiagnostics } from "./type-diagnostics/with-type-diagnostics.js";
export type { WriteFileInput, WriteFileOutput, WriteFileToolOptions } from "./write-file/tool.js";
export {
  createWriteFileTool,
  writeFileInputSchema,
  writeFileOutputSchema,
} from "./write-file/tool.js";
