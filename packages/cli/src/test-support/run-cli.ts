import { type CliIo, main } from "../main.js";

/** Options of {@link runCli}. */
export interface RunCliOptions {
  /** The current folder the command sees. */
  cwd?: string;
  /** Standard input, or `undefined` as for a terminal. */
  stdin?: string;
  /** The environment the command sees. */
  env?: Record<string, string | undefined>;
}

/** Run `pleach` in-process with captured output; resolves to the exit code and what it printed. */
export async function runCli(
  argv: readonly string[],
  { cwd = process.cwd(), stdin, env = {} }: RunCliOptions = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const io: CliIo = {
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
    readStdin: async () => stdin,
    cwd,
    env,
  };
  const code = await main(argv, io);
  return { code, stdout, stderr };
}
