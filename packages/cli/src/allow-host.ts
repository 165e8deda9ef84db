import { parseAllowedHost } from "@pleach/sandbox";
import { UsageError } from "./cli-support.js";

/** The `--allow-host` option of the commands that serve HTTP (`mcp --http`, `sandbox serve`). */
export const ALLOW_HOST_OPTION = { "allow-host": { type: "string", multiple: true } } as const;

/** The help lines of `--allow-host`, indented to `column`. */
export function allowHostHelp(column: number): string {
  const pad = " ".repeat(column);
  return `  ${"--allow-host NAME".padEnd(column - 2)}also accept requests whose Host or Origin is NAME (any port;
${pad}.example.com for a domain); repeatable. Loopback (localhost,
${pad}127.0.0.0/8, [::1]) and the --listen/--http address are accepted
${pad}without it (for 0.0.0.0 or ::, every address of this machine and its
${pad}host name); other Hosts and browser Origins get 403`;
}

/** Check each `--allow-host` value, naming the wrong one in a {@link UsageError}. */
export function parseAllowHosts({
  values,
  command,
}: {
  values: readonly string[] | undefined;
  command: string;
}): string[] {
  return (values ?? []).map((value) => {
    try {
      return parseAllowedHost(value);
    } catch (error) {
      throw new UsageError(`--allow-host: ${(error as Error).message}`, { command });
    }
  });
}
