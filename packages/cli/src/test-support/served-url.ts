import type { ChildProcess } from "node:child_process";

/**
 * The URL a `pleach mcp --http` child says it serves at (`... at http://host:port/mcp` on stderr),
 * or a rejection with what it printed when it exits first.
 */
export function servedUrl(child: ChildProcess): Promise<URL> {
  return new Promise<URL>((resolve, reject) => {
    let stderr = "";
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
      const match = /at (http:\/\/\S+)/.exec(stderr);
      if (match?.[1] !== undefined) resolve(new URL(match[1]));
    });
    child.once("exit", (code) => reject(new Error(`pleach mcp exited ${code}: ${stderr}`)));
  });
}
