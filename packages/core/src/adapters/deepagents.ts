import {
  BaseSandbox,
  type ExecuteResponse,
  type FileDownloadResponse,
  type FileUploadResponse,
} from "deepagents";
import type { SandboxClient } from "../sandbox/contract.js";
import { sandboxFileErrorOf } from "./sandbox-file-errors.js";

/** Options of {@link PleachDeepAgentsSandbox}. */
export interface PleachDeepAgentsSandboxOptions {
  /**
   * The backend's id.
   * @default "pleach"
   */
  id?: string;
  /**
   * Each command's time limit, in milliseconds.
   * @default 120_000
   */
  timeoutMs?: number;
  /**
   * The most bytes kept of each of a command's stdout and stderr (head and tail).
   * @default 100_000
   */
  maxOutputBytes?: number;
}

/**
 * Any pleach {@link SandboxClient} as a LangChain deepagents sandbox backend (`BaseSandbox`):
 * `createDeepAgent({ backend: new PleachDeepAgentsSandbox(client) })`. `execute` runs a command
 * through the client (stdout, then stderr and the sandbox's notes, as one output); `uploadFiles`
 * and `downloadFiles` go through its `writeFile` and `readFile`, so its confinement and protected
 * paths hold, and answer each file on its own (`file_not_found`, `permission_denied`,
 * `is_directory`, `invalid_path`). deepagents builds `ls`, `read`, `write`, `edit`, `grep`, `glob`
 * and `delete` on these three.
 */
export class PleachDeepAgentsSandbox extends BaseSandbox {
  readonly id: string;
  readonly #client: SandboxClient;
  readonly #timeoutMs: number;
  readonly #maxOutputBytes: number;

  constructor(
    client: SandboxClient,
    {
      id = "pleach",
      timeoutMs = 120_000,
      maxOutputBytes = 100_000,
    }: PleachDeepAgentsSandboxOptions = {},
  ) {
    super();
    this.id = id;
    this.#client = client;
    this.#timeoutMs = timeoutMs;
    this.#maxOutputBytes = maxOutputBytes;
  }

  async execute(command: string): Promise<ExecuteResponse> {
    const result = await this.#client.exec(command, {
      timeoutMs: this.#timeoutMs,
      maxOutputBytes: this.#maxOutputBytes,
    });
    const notes = result.sandboxNotes?.join("\n") ?? "";
    const timedOut = result.timedOut
      ? `the command ran past ${this.#timeoutMs} ms and was killed`
      : "";
    return {
      output: lines([result.stdout, result.stderr, notes, timedOut]),
      exitCode: result.exitCode,
      truncated: result.truncated,
    };
  }

  async uploadFiles(files: Array<[string, Uint8Array]>): Promise<FileUploadResponse[]> {
    const responses: FileUploadResponse[] = [];
    for (const [path, content] of files) {
      try {
        await this.#client.writeFile(path, Buffer.from(content).toString("base64"), {
          encoding: "base64",
        });
        responses.push({ path, error: null });
      } catch (error) {
        const code = sandboxFileErrorOf(error);
        if (code === undefined) throw error;
        responses.push({ path, error: code });
      }
    }
    return responses;
  }

  async downloadFiles(paths: string[]): Promise<FileDownloadResponse[]> {
    const responses: FileDownloadResponse[] = [];
    for (const path of paths) {
      try {
        const bytes = Buffer.from(
          await this.#client.readFile(path, { encoding: "base64" }),
          "base64",
        );
        responses.push({ path, content: new Uint8Array(bytes), error: null });
      } catch (error) {
        const code = sandboxFileErrorOf(error);
        if (code === undefined) throw error;
        responses.push({ path, content: null, error: code });
      }
    }
    return responses;
  }
}

/** The parts that are not empty, one after the other, each ending its line before the next. */
function lines(parts: readonly string[]): string {
  return parts
    .filter((part) => part !== "")
    .map((part, index, kept) =>
      index < kept.length - 1 && !part.endsWith("\n") ? `${part}\n` : part,
    )
    .join("");
}
