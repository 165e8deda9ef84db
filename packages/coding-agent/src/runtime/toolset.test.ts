import { writeFile } from "node:fs/promises";
import path from "node:path";
import { makeTempDir } from "@pleach/core/testing";
import { createLocalSandbox } from "@pleach/sandbox";
import { afterEach, describe, expect, it } from "vitest";
import { CODING_AGENT_TOOL_NAMES, createCodingAgentTools } from "../tools/coding-agent-tools.js";
import { createToolset } from "./toolset.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function toolsetOver(mode: "read-only" | "workspace-write" | "danger-full-access") {
  const temp = await makeTempDir("pleach-toolset-");
  cleanups.push(temp.cleanup);
  const client = await createLocalSandbox({ root: temp.dir, mode });
  return { root: temp.dir, toolset: createToolset(createCodingAgentTools(client)) };
}

describe("createToolset", () => {
  it("offers the tools with JSON Schema parameters: the ten, and the job tools where jobs are kept", async () => {
    const { toolset } = await toolsetOver("read-only");
    // A client made without a session keeps no jobs: the four job tools are not offered.
    expect(toolset.toolDefs.map((toolDef) => toolDef.name)).toEqual(
      CODING_AGENT_TOOL_NAMES.slice(0, 10),
    );
    // The order a model is offered them in.
    expect(CODING_AGENT_TOOL_NAMES).toEqual([
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
      "job_output",
      "job_input",
      "job_kill",
      "job_list",
    ]);
    for (const toolDef of toolset.toolDefs) {
      expect(toolDef.parameters).toMatchObject({ type: "object" });
      expect(toolDef.description.length).toBeGreaterThan(20);
    }
  });

  it("dispatches by name and renders { output, error }", async () => {
    const { root, toolset } = await toolsetOver("workspace-write");
    await writeFile(path.join(root, "a.txt"), "alpha\n");
    const context = { cwd: root, sandbox: "workspace-write" as const };
    expect(await toolset.call("read_file", { path: "a.txt" }, context)).toMatchObject({
      error: false,
      output: expect.stringContaining("alpha"),
    });
    expect(await toolset.call("read_file", { path: "../x" }, context)).toMatchObject({
      error: true,
      code: "PATH_ESCAPE",
    });
    expect(await toolset.call("nope", {}, context)).toMatchObject({
      error: true,
      code: "INVALID_INPUT",
      output: expect.stringContaining('there is no tool named "nope"'),
    });
    expect(await toolset.call("read_file", "a.txt", context)).toMatchObject({
      error: true,
      code: "INVALID_INPUT",
    });
  });

  it("refuses duplicate names", async () => {
    const { toolset } = await toolsetOver("read-only");
    expect(() => createToolset([...toolset.tools, ...toolset.tools])).toThrow(
      /two tools are named/,
    );
  });
});
