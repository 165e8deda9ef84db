export type {
  ApplyDiffHunkReport,
  ApplyDiffInput,
  ApplyDiffOutput,
  ApplyDiffToolOptions,
} from "./apply-diff.js";
export {
  APPLY_DIFF_PATCH_FILE,
  applyDiffInputSchema,
  applyDiffOutputSchema,
  createApplyDiffTool,
} from "./apply-diff.js";
export type { BashInput, BashOutput, BashToolOptions } from "./bash.js";
export { bashInputSchema, bashOutputSchema, createBashTool } from "./bash.js";
export type {
  CodingAgentToolName,
  CodingAgentTools,
  CodingAgentToolsOptions,
  ToolBudget,
  ToolRegistration,
} from "./coding-agent-tools.js";
export { CODING_AGENT_TOOL_NAMES, createCodingAgentTools } from "./coding-agent-tools.js";
export { showControlCharacters } from "./control-characters.js";
export type { ApplyFilePatchOptions, ApplyFilePatchResult, HunkReport } from "./diff/apply.js";
export { applyFilePatch } from "./diff/apply.js";
export type { TolerantMatch } from "./diff/locate-text.js";
export { locateTolerantly } from "./diff/locate-text.js";
export type { FilePatch } from "./diff/parse.js";
export { parseUnifiedDiff } from "./diff/parse.js";
export type { EditFileInput, EditFileOutput, EditFileToolOptions } from "./edit-file.js";
export { createEditFileTool, editFileInputSchema, editFileOutputSchema } from "./edit-file.js";
export type { FileRecord, FileState, WithFileStateOptions } from "./file-state.js";
export { createFileState, diffFileNames, withFileState } from "./file-state.js";
export type { GitCloneInput, GitCloneOutput, GitCloneToolOptions } from "./git-clone.js";
export { createGitCloneTool, gitCloneInputSchema, gitCloneOutputSchema } from "./git-clone.js";
export type { GitDiffInput, GitDiffOutput, GitDiffToolOptions } from "./git-diff.js";
export {
  createGitDiffTool,
  gitDiffInputSchema,
  gitDiffOutputSchema,
  parseNumstat,
} from "./git-diff.js";
export type { JobInputInput, JobInputOutput } from "./job-input.js";
export { createJobInputTool, jobInputInputSchema, jobInputOutputSchema } from "./job-input.js";
export type { JobKillInput, JobKillOutput } from "./job-kill.js";
export { createJobKillTool, jobKillInputSchema, jobKillOutputSchema } from "./job-kill.js";
export type { JobListInput, JobListOutput } from "./job-list.js";
export { createJobListTool, jobListInputSchema, jobListOutputSchema } from "./job-list.js";
export type { JobOutputInput, JobOutputOutput, JobOutputToolOptions } from "./job-output.js";
export {
  createJobOutputTool,
  jobOutputInputSchema,
  jobOutputOutputSchema,
} from "./job-output.js";
export type { ListFilesInput, ListFilesOutput, ListFilesToolOptions } from "./list-files.js";
export { createListFilesTool, listFilesInputSchema, listFilesOutputSchema } from "./list-files.js";
export type {
  TestOutputReading,
  TestRunnerCounts,
  TestStatus,
  TestVerdict,
} from "./parse-test-output.js";
export { latestStatuses, parseTestRunnerOutput, readTestOutput } from "./parse-test-output.js";
export type { ReadFileInput, ReadFileOutput, ReadFileToolOptions } from "./read-file.js";
export { createReadFileTool, readFileInputSchema, readFileOutputSchema } from "./read-file.js";
export type { RunTestsInput, RunTestsOutput, RunTestsToolOptions } from "./run-tests.js";
export { createRunTestsTool, runTestsInputSchema, runTestsOutputSchema } from "./run-tests.js";
export type {
  SearchFilesInput,
  SearchFilesOutput,
  SearchFilesToolOptions,
} from "./search-files.js";
export {
  createSearchFilesTool,
  searchFilesInputSchema,
  searchFilesOutputSchema,
} from "./search-files.js";
export { shellJoin, shellQuote } from "./shell-quote.js";
export type { WriteFileInput, WriteFileOutput, WriteFileToolOptions } from "./write-file.js";
export { createWriteFileTool, writeFileInputSchema, writeFileOutputSchema } from "./write-file.js";
