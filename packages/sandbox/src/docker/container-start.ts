import { ToolError } from "@pleach/core";
import { sandboxUnavailableError } from "@pleach/core/sandbox";
import type { createHttpStreamSandboxProvider } from "../http-provider.js";
import { socketFolderState } from "../private-folder.js";

/** `promise`'s value, or `undefined` if it takes longer than `ms`. */
export async function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Wait until the sandbox server in container `name` answers on `socketPath`: a socket of
 * `socketOwner` (the token goes to no other), polled every 25 ms. Rejects with
 * `SANDBOX_UNAVAILABLE` when the container stops first or `startTimeoutMs` passes, with the end of
 * its log; with `ABORTED` when aborted.
 */
export async function waitUntilAnswering({
  http,
  name,
  socketPath,
  socketOwner,
  exited,
  stderr,
  startTimeoutMs,
  abortSignal,
}: {
  http: ReturnType<typeof createHttpStreamSandboxProvider>;
  name: string;
  socketPath: string;
  socketOwner: number;
  exited: Promise<number | null>;
  stderr: () => string;
  startTimeoutMs: number;
  abortSignal: AbortSignal | undefined;
}): Promise<void> {
  const deadline = Date.now() + startTimeoutMs;
  let gone: number | null | undefined;
  void exited.then((code) => {
    gone = code;
  });
  for (;;) {
    if (abortSignal?.aborted) throw new ToolError("ABORTED", "acquire was aborted");
    if (gone !== undefined) {
      throw sandboxUnavailableError({
        message: `the sandbox container ${name} stopped as it started (exit code ${gone}): ${stderr().trim()}`,
        details: { reason: "start" },
      });
    }
    // The token goes only to a socket the container's user made in our private folder.
    const state = await socketFolderState(socketPath, socketOwner);
    if (state === "foreign") {
      throw sandboxUnavailableError({
        message: `${socketPath} is not a socket of uid ${socketOwner}; refusing to send the token there`,
        details: { reason: "start" },
      });
    }
    let failure: unknown;
    if (state === "ready") {
      try {
        await http.health();
        return;
      } catch (error) {
        failure = error;
      }
    }
    if (Date.now() > deadline) {
      throw sandboxUnavailableError({
        message: `the sandbox container ${name} did not answer within ${startTimeoutMs} ms${stderr() === "" ? "" : `; its log ends: ${stderr().trim()}`}`,
        cause: failure,
        details: { reason: "start" },
      });
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
