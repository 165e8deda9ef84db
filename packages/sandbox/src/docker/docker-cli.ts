import { execFile } from "node:child_process";
import { sandboxUnavailableError } from "@pleach/core/sandbox";

/** Runs one `docker` command and settles with its trimmed stdout. */
export type DockerCommand = (args: string[], timeoutMs?: number) => Promise<string>;

/**
 * A {@link DockerCommand} for the `docker` client at `docker`: a failure rejects with the
 * `SANDBOX_UNAVAILABLE` error naming the subcommand and what the client said.
 */
export function dockerCommand(docker: string): DockerCommand {
  return (args, timeoutMs = 60_000) =>
    new Promise<string>((resolve, reject) => {
      execFile(
        docker,
        args,
        { timeout: timeoutMs, maxBuffer: 4 * 1024 * 1024 },
        (error, stdout, stderr) => {
          if (error === null) resolve(stdout.trim());
          else {
            reject(
              sandboxUnavailableError({
                message: `docker ${args[0]} failed: ${String(stderr).trim() || error.message}`,
                cause: error,
                details: { reason: "docker" },
              }),
            );
          }
        },
      );
    });
}
