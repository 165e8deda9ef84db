import { execFile } from "node:child_process";
import { promisify } from "node:util";

const execFileAsync = promisify(execFile);

/** A fixed identity and no user or system configuration: the harness's commits are reproducible. */
const GIT_IDENTITY = {
  GIT_AUTHOR_NAME: "pleach",
  GIT_AUTHOR_EMAIL: "pleach@example.invalid",
  GIT_COMMITTER_NAME: "pleach",
  GIT_COMMITTER_EMAIL: "pleach@example.invalid",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
};

/** Runs git on the host (the harness's own setup, outside the sandbox); resolves to its stdout, trimmed. */
export async function git(
  args: string[],
  { cwd, date }: { cwd: string; date?: string },
): Promise<string> {
  const env = { ...process.env, ...GIT_IDENTITY };
  if (date !== undefined) Object.assign(env, { GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date });
  const { stdout } = await execFileAsync("git", args, { cwd, env, maxBuffer: 16 * 1024 * 1024 });
  return stdout.trim();
}
