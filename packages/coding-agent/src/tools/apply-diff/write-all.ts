import { randomBytes } from "node:crypto";
import path from "node:path";
import { isToolError, ToolError } from "@pleach/core";
import type { SandboxClient } from "../../sandbox/index.js";
import { shellQuote } from "../shared/shell-quote.js";

/** What {@link writeAllOrNothing} changes: files to remove, then files to write. */
export interface WorkspaceChanges {
  /** Files that exist and go away (deleted, or a moved file's old path). */
  removals: readonly string[];
  /** Files written with their new text (created, or replacing what is there). */
  writes: ReadonlyArray<{ path: string; text: string }>;
}

interface Options {
  timeoutMs: number;
  abortSignal: AbortSignal | undefined;
}

/**
 * Change the workspace as `changes` say, every file or none. What is there before is kept first:
 * the bytes of each file about to be written over, which folders a new file creates, and each
 * removed file, moved aside (`mv`, in its folder, so bytes, mode and owner stay) rather than
 * deleted. If any step fails (a protected path, a refused command, a write the client refuses),
 * every change already made is undone and the step's error is thrown, saying that nothing changed
 * (or naming what could not be put back). Once everything is written, the moved-aside files are
 * deleted.
 */
export async function writeAllOrNothing(
  client: SandboxClient,
  { removals, writes }: WorkspaceChanges,
  { timeoutMs, abortSignal }: Options,
): Promise<void> {
  // Kept before anything changes: an error here changes nothing.
  const before = new Map<string, string | undefined>();
  const newFolders: string[] = [];
  for (const { path: target } of writes) {
    const bytes = await readIfThere(client, target);
    before.set(target, bytes);
    if (bytes === undefined) newFolders.push(...(await missingFolders(client, target)));
  }
  const run = async (command: string, signal: AbortSignal | undefined) => {
    const result = await client.exec(command, { timeoutMs, abortSignal: signal });
    return result.exitCode === 0
      ? undefined
      : result.stderr.trim() || `exited with ${result.exitCode}`;
  };
  const parked: Array<{ file: string; aside: string }> = [];
  const written: string[] = [];
  try {
    for (const file of removals) {
      const aside = besideName(file);
      const failed = await run(`mv -f -- ${shellQuote(file)} ${shellQuote(aside)}`, abortSignal);
      if (failed !== undefined) {
        throw new ToolError("COMMAND_FAILED", `could not delete ${file}: ${failed}`);
      }
      parked.push({ file, aside });
    }
    for (const { path: target, text } of writes) {
      written.push(target);
      await client.writeFile(target, text);
    }
  } catch (error) {
    // Undone without the caller's signal: an aborted call still leaves the files as they were.
    const lost: string[] = [];
    for (const target of written.reverse()) {
      const bytes = before.get(target);
      try {
        if (bytes !== undefined) await client.writeFile(target, bytes, { encoding: "base64" });
        else if ((await run(`rm -f -- ${shellQuote(target)}`, undefined)) !== undefined) {
          lost.push(target);
        }
      } catch {
        lost.push(target);
      }
    }
    const folders = [...new Set(newFolders)].sort((a, b) => b.length - a.length);
    if (folders.length > 0) {
      // Only folders left empty go; one that is not empty is not this patch's alone.
      await run(`rmdir -- ${folders.map(shellQuote).join(" ")} 2>/dev/null`, undefined).catch(
        () => undefined,
      );
    }
    for (const { file, aside } of parked.reverse()) {
      const failed = await run(
        `mv -f -- ${shellQuote(aside)} ${shellQuote(file)}`,
        undefined,
      ).catch((reason: unknown) => String(reason));
      if (failed !== undefined) lost.push(`${file} (its old content is in ${aside})`);
    }
    throw undone(error, lost);
  }
  const asides = parked.map(({ aside }) => shellQuote(aside));
  if (asides.length > 0) {
    const failed = await run(`rm -f -- ${asides.join(" ")}`, undefined);
    if (failed !== undefined) {
      throw new ToolError(
        "COMMAND_FAILED",
        `the patch was applied, but the old copies of the files it deleted could not be removed (${failed}): delete ${parked.map(({ aside }) => aside).join(", ")}`,
      );
    }
  }
}

/** The error of the step that failed, saying what became of the changes made before it. */
function undone(error: unknown, lost: readonly string[]): ToolError {
  const outcome =
    lost.length === 0
      ? "Nothing was changed: apply_diff writes every file of a patch or none, and put back what it had already changed."
      : `The changes already made were undone except in ${lost.join(", ")}: check ${lost.length === 1 ? "that file" : "those files"} before anything else.`;
  if (isToolError(error)) {
    return new ToolError(error.code, `${error.message.replace(/\.?$/, ".")} ${outcome}`, {
      cause: error,
      ...(error.details === undefined ? {} : { details: error.details }),
    });
  }
  const message = error instanceof Error ? error.message : String(error);
  return new ToolError("INTERNAL", `${message.replace(/\.?$/, ".")} ${outcome}`, { cause: error });
}

/** The file's bytes (base64), `undefined` when there is none; any other refusal is thrown. */
async function readIfThere(client: SandboxClient, file: string): Promise<string | undefined> {
  try {
    return await client.readFile(file, { encoding: "base64" });
  } catch (error) {
    if (isToolError(error) && error.code === "NOT_FOUND") return undefined;
    throw error;
  }
}

/** The folders above `file` that do not exist yet, nearest first, which writing it creates. */
async function missingFolders(client: SandboxClient, file: string): Promise<string[]> {
  const missing: string[] = [];
  for (let folder = path.posix.dirname(file); folder !== "." && folder !== "/"; ) {
    if ((await readIfThere(client, folder).catch(() => "there")) !== undefined) break;
    missing.push(folder);
    folder = path.posix.dirname(folder);
  }
  return missing;
}

/** A name next to `file` that nothing else uses, for keeping it until the patch is written. */
function besideName(file: string): string {
  const base = path.posix.basename(file).slice(0, 50);
  return path.posix.join(
    path.posix.dirname(file),
    `.${base}.pleach-${randomBytes(6).toString("hex")}.deleted`,
  );
}
