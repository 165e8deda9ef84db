import type { ToolErrorCode } from "@pleach/core";
import type { ExecResult } from "@pleach/core/sandbox";
import { z } from "zod";

/** The path prefix of every route of the sandbox server's protocol (see PROTOCOL.md). */
export const PROTOCOL_PREFIX = "/v1";

/**
 * How a new sandbox's workspace is filled: `"empty"`; `{ folder }`, a copy of a folder of the
 * server's template root, named relative to it; or `{ git, ref? }`, a shallow clone of a git
 * repository, at `ref` (a branch or tag) when given.
 */
const sandboxTemplateSchema = z.union([
  z.literal("empty"),
  z.strictObject({ folder: z.string() }),
  z.strictObject({ git: z.string(), ref: z.string().optional() }),
]);

/** How a new sandbox's workspace is filled (see {@link sandboxTemplateSchema}). */
export type SandboxTemplate = z.infer<typeof sandboxTemplateSchema>;

/** Body of `POST /v1/sandboxes` (an empty body is `{}`). */
export const createSandboxRequestSchema = z.strictObject({
  template: sandboxTemplateSchema.optional(),
});

/** Body of `POST /v1/sandboxes`. */
export type CreateSandboxRequest = z.infer<typeof createSandboxRequestSchema>;

/** Answer of `POST /v1/sandboxes`. */
export interface CreateSandboxResponse {
  id: string;
  /** The workspace root as commands in the sandbox see it. */
  root: string;
  /** Whether it runs background jobs (the `/jobs` routes); absent from servers older than them. */
  jobs?: boolean;
}

/**
 * Body of `POST /v1/sandboxes/:id/exec`: the arguments of `SandboxClient.exec` that travel. Only
 * their types are checked here; their values (an empty command, a `cwd` that escapes, an `env`
 * name with `=`) are the sandbox's local client's to refuse, with its own codes.
 */
export const execRequestSchema = z.strictObject({
  command: z.string(),
  cwd: z.string().optional(),
  timeoutMs: z.number().optional(),
  env: z.record(z.string(), z.string()).optional(),
  stdin: z.string().optional(),
  maxOutputBytes: z.number().optional(),
  fullOutputOverBytes: z.number().optional(),
});

/** Body of `POST /v1/sandboxes/:id/exec`. */
export type ExecRequest = z.infer<typeof execRequestSchema>;

/** The error body of every failed request, and of an `error` event. */
export interface WireError {
  code: ToolErrorCode;
  message: string;
  details?: Record<string, unknown>;
}

/** One line of the NDJSON answer of `exec`. */
export type ExecEvent =
  | { type: "stdout" | "stderr"; data: string }
  | { type: "heartbeat" }
  | ({ type: "exit" } & ExecResult)
  | { type: "error"; error: WireError };

/**
 * A wire error as a client reads it: any `code` string (one it does not know is read as
 * `INTERNAL`), a message, optional details.
 */
export const wireErrorSchema = z.object({
  code: z.string().optional(),
  message: z.string(),
  details: z.record(z.string(), z.unknown()).optional(),
});

/** One line of an exec stream, as a client reads it. */
export const execEventSchema = z.discriminatedUnion("type", [
  z.object({ type: z.enum(["stdout", "stderr"]), data: z.string() }),
  z.object({ type: z.literal("heartbeat") }),
  z.object({
    type: z.literal("exit"),
    exitCode: z.number().nullable(),
    stdout: z.string(),
    stderr: z.string(),
    durationMs: z.number(),
    timedOut: z.boolean(),
    truncated: z.boolean(),
    signal: z.string().optional(),
    sandboxNotes: z.array(z.string()).optional(),
    fullOutput: z
      .object({ path: z.string(), bytes: z.number(), droppedBytes: z.number().optional() })
      .optional(),
  }),
  z.object({ type: z.literal("error"), error: wireErrorSchema }),
]);
