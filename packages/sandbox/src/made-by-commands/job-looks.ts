import { ToolError } from "@pleach/core";
import type { CommandWrapper, WorkspaceLook } from "../os/command-wrapper.js";

/**
 * A session's looks at what its background jobs made between calls: the look its jobs are
 * compared with (taken by the session's first command), brought forward by every look since, and
 * the notes of what was moved aside or made inert meanwhile, for the next command's result.
 */
export class JobLooks {
  #seen: WorkspaceLook | undefined;
  readonly #notes: string[] = [];

  constructor(
    private readonly wrapper: CommandWrapper,
    private readonly root: string,
    /** Whether the session's jobs may have run: it has jobs (running or ended). */
    private readonly hasJobs: () => Promise<boolean>,
  ) {}

  /** Take the look the jobs are compared with, at the session's first command (a job, maybe). */
  async start(): Promise<void> {
    this.#seen ??= await this.wrapper.look?.(this.root);
  }

  /** The last look, when jobs may have run since: the next command's `since`. */
  async since(): Promise<WorkspaceLook | undefined> {
    return this.#seen !== undefined && (await this.hasJobs()) ? this.#seen : undefined;
  }

  /**
   * Look now at what the jobs made since the last look (before a host-side call, a command).
   * `CONFLICT` when the workspace changed under the look (a job closing a folder as it looks).
   */
  async look(): Promise<void> {
    const since = await this.since();
    if (since === undefined) return;
    let found: Awaited<ReturnType<NonNullable<CommandWrapper["madeSince"]>>> | undefined;
    try {
      found = await this.wrapper.madeSince?.(this.root, since);
    } catch (error) {
      if (error instanceof ToolError) throw error;
      throw new ToolError(
        "CONFLICT",
        `pleach could not look at what the session's jobs made: the workspace changed while it looked (${(error as Error).message}). A job may be changing it: end the jobs that change permissions or move folders (job_kill), then try again.`,
        { cause: error },
      );
    }
    if (found === undefined) return;
    this.#notes.push(...found.notes);
    this.#seen = found.look;
  }

  /** A command's own look at its end, which the next one starts from. */
  seen(look: WorkspaceLook): void {
    this.#seen = look;
  }

  /** The notes gathered since the last command, once. */
  takeNotes(): string[] {
    return this.#notes.splice(0);
  }
}
