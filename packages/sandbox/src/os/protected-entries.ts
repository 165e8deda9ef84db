/**
 * Names at the top of a workspace that a confined command may never create, change, rename or
 * delete, because the host runs what they say: git's own machinery, shell start-up files, direnv,
 * and the configuration folders of editors and coding agents (tasks, hooks, MCP servers).
 *
 * Whole folders are protected rather than single files inside them, so that a command cannot
 * rename the folder away and plant a new one in its place.
 */
export const PROTECTED_WORKSPACE_ENTRIES: readonly string[] = [
  ".git",
  ".bashrc",
  ".bash_profile",
  ".bash_login",
  ".profile",
  ".zshrc",
  ".zprofile",
  ".zshenv",
  ".zlogin",
  ".envrc",
  ".gitconfig",
  ".mcp.json",
  ".vscode",
  ".idea",
  ".claude",
  ".cursor",
  ".codex",
  ".gemini",
];

/**
 * Whether a variable name looks like it holds a secret (`*KEY*`, `*TOKEN*`, `*SECRET*`,
 * `*PASSWORD*`, `*PASSWD*`, `*CREDENTIAL*`, any case). Such variables never reach a confined
 * command, not even when the caller names them explicitly.
 */
export function isSecretLookingName(name: string): boolean {
  return /KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL/i.test(name);
}

/** Host variables a confined command inherits: locale, terminal, identity and `PATH`; nothing else. */
const INHERITED_VARIABLES = new Set([
  "PATH",
  "HOME",
  "LANG",
  "LANGUAGE",
  "TERM",
  "TZ",
  "USER",
  "LOGNAME",
]);

/** Options of {@link inheritedEnvironment}. */
export interface InheritedEnvironmentOptions {
  /** The host's environment, usually `process.env`. */
  hostEnvironment: Readonly<Record<string, string | undefined>>;
}

/**
 * The part of a confined command's environment taken from the host, built from an allow-list
 * rather than by removing what looks dangerous, so that a variable nobody thought of (a cloud
 * session, an agent socket, `LD_PRELOAD`) does not leak. `TMPDIR` points at the private `/tmp`.
 */
export function inheritedEnvironment({
  hostEnvironment,
}: InheritedEnvironmentOptions): Record<string, string> {
  const environment: Record<string, string> = {};
  // Names first: reading a value of `process.env` is a call into the runtime, so only the kept
  // ones are read.
  for (const name of Object.keys(hostEnvironment)) {
    if (!(INHERITED_VARIABLES.has(name) || name.startsWith("LC_")) || isSecretLookingName(name)) {
      continue;
    }
    const value = hostEnvironment[name];
    if (value !== undefined) environment[name] = value;
  }
  environment.PATH ??= "/usr/local/bin:/usr/bin:/bin";
  environment.TMPDIR = "/tmp";
  return environment;
}

/**
 * The caller's explicit variables that may reach a confined command: all but the secret-looking
 * ones. They are handed to the command inside the sandbox, never to the sandbox launcher itself,
 * because a launcher started with a caller's `LD_PRELOAD` would run the caller's code unconfined.
 */
export function requestedEnvironment(
  requested: Readonly<Record<string, string>>,
): Record<string, string> {
  const environment: Record<string, string> = {};
  for (const [name, value] of Object.entries(requested)) {
    if (!isSecretLookingName(name)) environment[name] = value;
  }
  return environment;
}
