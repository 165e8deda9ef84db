export type { Toolset, ToolsetOptions } from "./toolset.js";
export { createToolset } from "./toolset.js";
