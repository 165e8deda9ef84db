import { createTool } from "@mastra/core/tools";
import type {
  CommandResult,
  ExecuteCommandOptions,
  SandboxFileInput,
  WorkspaceSandbox,
} from "@mastra/core/workspace";
import type { AnyToolDefinition } from "../define-tool.js";
import type { SandboxClient } from "../sandbox/contract.js";
import { shellJoin } from "../shell-quote.js";
import { textToolOutput } from "./text-output.js";

/** Options of {@link toMastraWorkspaceSandbox}. */
export interface ToMastraWorkspaceSandboxOptions {
  /**
   * The sandbox's id and name.
   * @default "pleach"
   */
  id?: string;
  /**
   * What the agent's instructions are told of the sandbox.
   * @default "A pleach sandbox: commands and files confined to the workspace; relative paths start at its root."
   */
  instructions?: string;
}

/**
 * Any pleach {@link SandboxClient} as a Mastra `WorkspaceSandbox`, for `new Workspace({ sandbox })`:
 * the workspace's command tool runs each command through the client (its arguments quoted for
 * the shell), and `writeFiles` writes through its `writeFile`, so the client's confinement and
 * protected paths hold. A command's output reaches `onStdout` and `onStderr` when it ends (a
 * `SandboxClient` does not stream). File modes and snapshots are refused: a pleach client has
 * neither.
 */
export function toMastraWorkspaceSandbox(
  client: SandboxClient,
  {
    id = "pleach",
    instructions = "A pleach sandbox: commands and files confined to the workspace; relative paths start at its root.",
  }: ToMastraWorkspaceSandboxOptions = {},
): WorkspaceSandbox {
  return {
    id,
    name: id,
    provider: "pleach",
    status: "running",
    supportsCheckpoints: false,
    getInstructions: () => instructions,
    snapshot: async () => {
      throw new Error("a pleach sandbox takes no snapshots");
    },
    async executeCommand(
      command: string,
      args: string[] = [],
      options: ExecuteCommandOptions = {},
    ): Promise<CommandResult> {
      const line = args.length === 0 ? command : shellJoin([command, ...args]);
      const env = Object.fromEntries(
        Object.entries(options.env ?? {}).filter(
          (entry): entry is [string, string] => entry[1] !== undefined,
        ),
      );
      const result = await client.exec(line, {
        ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
        ...(options.timeout === undefined ? {} : { timeoutMs: options.timeout }),
        ...(options.abortSignal === undefined ? {} : { abortSignal: options.abortSignal }),
        ...(options.maxRetainedBytes === undefined
          ? {}
          : { maxOutputBytes: options.maxRetainedBytes }),
        env,
      });
      const notes = result.sandboxNotes?.map((note) => `${note}\n`).join("") ?? "";
      if (result.stdout !== "") options.onStdout?.(result.stdout);
      if (result.stderr + notes !== "") options.onStderr?.(result.stderr + notes);
      return {
        command,
        args,
        success: result.exitCode === 0,
        exitCode: result.exitCode ?? (result.timedOut ? 124 : 137),
        stdout: result.stdout,
        stderr: result.stderr + notes,
        executionTimeMs: result.durationMs,
        timedOut: result.timedOut,
        killed: result.signal !== undefined,
        stdoutTruncated: result.truncated,
        stderrTruncated: result.truncated,
      };
    },
    async writeFiles(files: SandboxFileInput[]): Promise<void> {
      for (const { path, content, mode } of files) {
        if (mode !== undefined) throw new Error(`${path}: a pleach sandbox sets no file modes`);
        await (typeof content === "string"
          ? client.writeFile(path, content)
          : client.writeFile(path, content.toString("base64"), { encoding: "base64" }));
      }
    },
  };
}

/**
 * Pleach tools as Mastra tools (`createTool`), keyed by name, for `new Agent({ tools })`: each
 * validates its input with the tool's own schema, resolves to the tool's structured output, and
 * shows the model the text every face of pleach shows.
 */
export function toMastraTools(
  tools: readonly AnyToolDefinition[],
  { maxChars }: { maxChars?: number } = {},
): Record<string, ReturnType<typeof createTool>> {
  return Object.fromEntries(
    tools.map((tool) => [
      tool.name,
      createTool({
        id: tool.name,
        description: tool.description,
        inputSchema: tool.inputSchema,
        outputSchema: tool.outputSchema,
        toModelOutput: (output: unknown) => textToolOutput(tool, output, maxChars),
        execute: (input, context) =>
          tool.execute(
            input,
            context?.abortSignal === undefined ? {} : { abortSignal: context.abortSignal },
          ),
      }),
    ]),
  );
}
