/** A path that a confined command, and every writing tool, may never change, and why. */
export interface ProtectedEntry {
  /** The path relative to the folder it is protected in (`/`-separated). */
  name: string;
  /** What the host does with it: the reason a refusal gives. */
  why: string;
}

/**
 * Entries at the top of a workspace that a confined command may never create, change, rename or
 * delete, and that the file tools refuse to write, because the host runs what they say or trusts
 * what they hold: git's own machinery, shell start-up and logout files, direnv and mise, editor
 * and dev-container configuration, coding agents' configuration (hooks, MCP servers), and hook
 * managers' configuration.
 *
 * Whole folders are protected rather than single files inside them, so that a command cannot
 * rename the folder away and plant a new one in its place.
 */
export const PROTECTED_ENTRIES: readonly ProtectedEntry[] = [
  { name: ".git", why: "git runs its hooks and the commands its config names (core.fsmonitor)" },
  { name: ".gitconfig", why: "git reads it as configuration when it is a home folder's" },
  { name: ".gitmodules", why: "git submodule commands fetch and check out what it names" },
  { name: ".bashrc", why: "bash runs it at start-up" },
  { name: ".bash_profile", why: "bash runs it at login" },
  { name: ".bash_login", why: "bash runs it at login" },
  { name: ".bash_logout", why: "bash runs it at logout" },
  { name: ".profile", why: "login shells run it" },
  { name: ".zshrc", why: "zsh runs it at start-up" },
  { name: ".zprofile", why: "zsh runs it at login" },
  { name: ".zshenv", why: "zsh runs it for every shell" },
  { name: ".zlogin", why: "zsh runs it at login" },
  { name: ".zlogout", why: "zsh runs it at logout" },
  { name: ".envrc", why: "direnv runs it on entering the folder" },
  { name: "mise.toml", why: "mise runs its hooks and tasks on entering the folder" },
  { name: ".mise.toml", why: "mise runs its hooks and tasks on entering the folder" },
  { name: "mise.local.toml", why: "mise runs its hooks and tasks on entering the folder" },
  { name: ".mise.local.toml", why: "mise runs its hooks and tasks on entering the folder" },
  { name: ".mise", why: "mise reads its configuration there" },
  { name: ".ripgreprc", why: "ripgrep reads it through RIPGREP_CONFIG_PATH (--pre runs programs)" },
  { name: ".exrc", why: "vim runs it on start with the exrc option" },
  { name: ".nvimrc", why: "neovim runs it on start with the exrc option" },
  { name: ".nvim.lua", why: "neovim runs it on start with the exrc option" },
  { name: ".vscode", why: "VS Code runs its tasks (runOn: folderOpen) and reads its settings" },
  { name: ".idea", why: "JetBrains IDEs run its run configurations and startup tasks" },
  { name: ".zed", why: "Zed runs its tasks and reads its settings" },
  { name: ".devcontainer", why: "dev containers run its initializeCommand on the host" },
  { name: ".mcp.json", why: "MCP clients start the servers it names" },
  { name: ".claude", why: "Claude Code runs its hooks and MCP servers" },
  { name: ".cursor", why: "Cursor runs its hooks and MCP servers" },
  { name: ".codex", why: "Codex reads its configuration and MCP servers there" },
  { name: ".gemini", why: "Gemini CLI reads its settings and MCP servers there" },
  { name: ".windsurf", why: "Windsurf reads its MCP servers and rules there" },
  { name: ".continue", why: "Continue reads its MCP servers and configuration there" },
  { name: ".amazonq", why: "Amazon Q reads its MCP servers there" },
  { name: ".kiro", why: "Kiro runs its hooks and MCP servers" },
  { name: "opencode.json", why: "opencode starts the MCP servers and commands it names" },
  { name: ".opencode", why: "opencode reads its configuration, plugins and commands there" },
  { name: ".aider.conf.yml", why: "aider runs the lint and test commands it names" },
  { name: ".husky", why: "husky's git hooks run the scripts there" },
  { name: ".pre-commit-config.yaml", why: "pre-commit's git hook runs the commands it names" },
  { name: "lefthook.yml", why: "lefthook's git hooks run the commands it names" },
  { name: ".lefthook.yml", why: "lefthook's git hooks run the commands it names" },
];

/**
 * The entries of a git directory that git reads or runs, protected where the workspace root is
 * itself one (a folder below it that is one is protected whole).
 */
export const GIT_DIRECTORY_ENTRIES: readonly string[] = [
  "HEAD",
  "config",
  "config.worktree",
  "commondir",
  "gitdir",
  "hooks",
  "objects",
  "refs",
  "packed-refs",
  "info",
  "worktrees",
  "modules",
  "logs",
  "branches",
  "remotes",
  "index",
  "shallow",
];

/**
 * The entries of a git directory through which git runs programs or finds other git directories:
 * what stays protected in every `.git` folder of the workspace when commands may write git's
 * objects, refs, index and logs (`allowGitWrites`). Config and its worktree part name programs
 * (`core.fsmonitor`, `core.sshCommand`, filters); hooks are programs; `commondir` and `gitdir`
 * lead git to another git directory, whose config it then runs; `worktrees` and `modules` hold
 * git directories of their own; `branches` and `remotes` name URLs (`ext::` runs a command);
 * attributes pick drivers and the alternates pick object stores.
 */
export const GIT_RUN_ENTRIES: readonly string[] = [
  "config",
  "config.worktree",
  "commondir",
  "gitdir",
  "hooks",
  "info/attributes",
  "objects/info/alternates",
  "objects/info/http-alternates",
  "worktrees",
  "modules",
  "branches",
  "remotes",
];

/**
 * Entries protected at the top of a home folder inside the workspace (the workspace itself when it
 * is one), beside {@link PROTECTED_ENTRIES}: what the user's session, ssh and git read from a home.
 */
export const HOME_FOLDER_ENTRIES: readonly ProtectedEntry[] = [
  { name: ".ssh", why: "ssh trusts its authorized_keys and runs its config's ProxyCommand" },
  { name: ".gnupg", why: "gpg trusts its keys and runs the programs gpg.conf names" },
  { name: ".config/git", why: "git reads its config there like ~/.gitconfig (core.fsmonitor)" },
  { name: ".config/fish", why: "fish runs its config.fish at start-up" },
  { name: ".config/autostart", why: "desktop sessions start its programs at login" },
  { name: ".config/systemd", why: "systemd --user starts its units" },
  { name: ".config/environment.d", why: "systemd --user sets its variables for every program" },
  { name: ".pam_environment", why: "PAM sets its variables at login" },
  { name: ".xprofile", why: "X sessions run it at login" },
  { name: ".xsessionrc", why: "X sessions run it at login" },
  { name: ".xinitrc", why: "startx runs it" },
  { name: ".npmrc", why: "npm runs the script-shell and hooks it names for every project" },
  { name: ".aws", why: "the AWS CLI runs its config's credential_process and its aliases" },
  { name: ".kube", why: "kubectl runs the exec credential plugins its config names" },
  {
    name: ".docker",
    why: "docker runs its cli-plugins and the credential helpers its config names",
  },
  { name: ".cargo/config.toml", why: "cargo runs the rustc wrapper and runners it names" },
  { name: ".cargo/config", why: "cargo runs the rustc wrapper and runners it names" },
  { name: ".yarnrc.yml", why: "Yarn runs the yarnPath and plugins it names" },
];

/**
 * Folders with a role for the host: the host's programs read their configuration there, run what
 * lies there, or load code from there, whatever the files inside are named. Inside the workspace
 * each is protected whole, not file by file (see `hostRolePaths` in `protection.ts`).
 *
 * Each variable names one folder or file, or a `:`-separated list of them (`list`).
 */
export const ROLE_VARIABLES: Readonly<Record<string, { why: string; list?: true }>> = {
  PATH: { why: "the host runs the programs there by name", list: true },
  XDG_CONFIG_HOME: { why: "programs read their configuration there (git's global config too)" },
  XDG_CONFIG_DIRS: { why: "programs read their configuration there", list: true },
  XDG_DATA_HOME: { why: "programs load plugins, completions and desktop entries from there" },
  XDG_DATA_DIRS: {
    why: "programs load plugins, completions and desktop entries from there",
    list: true,
  },
  ZDOTDIR: { why: "zsh runs its start-up files from there" },
  BASH_ENV: { why: "bash runs it before every script" },
  ENV: { why: "sh runs it at start-up" },
  PYTHONUSERBASE: { why: "Python runs the .pth files of its user site-packages there" },
  PYTHONSTARTUP: { why: "interactive Python runs it at start-up" },
  PYTHONPATH: { why: "Python imports modules from there first", list: true },
  IPYTHONDIR: { why: "IPython runs its start-up files from there" },
  JUPYTER_CONFIG_DIR: { why: "Jupyter runs its configuration files" },
  CARGO_HOME: { why: "cargo reads its config (rustc wrappers) and installs programs there" },
  RUSTUP_HOME: { why: "rustup keeps the toolchains the host runs there" },
  GOPATH: { why: "go installs programs in its bin", list: true },
  GOBIN: { why: "go installs programs there" },
  npm_config_prefix: { why: "npm installs global programs there" },
  NPM_CONFIG_PREFIX: { why: "npm installs global programs there" },
  npm_config_userconfig: { why: "npm reads it as the user's configuration" },
  NPM_CONFIG_USERCONFIG: { why: "npm reads it as the user's configuration" },
  PNPM_HOME: { why: "pnpm installs global programs there" },
  BUN_INSTALL: { why: "bun installs global programs there" },
  DENO_INSTALL: { why: "deno installs programs there" },
  VOLTA_HOME: { why: "Volta's shims run the tools there" },
  NVM_DIR: { why: "nvm's shell functions run from there" },
  PYENV_ROOT: { why: "pyenv's shims run the interpreters there" },
  RBENV_ROOT: { why: "rbenv's shims run the interpreters there" },
  ASDF_DATA_DIR: { why: "asdf's shims run the tools there" },
  SDKMAN_DIR: { why: "SDKMAN's start-up script runs from there" },
  GIT_CONFIG_GLOBAL: { why: "git reads it as the global configuration (core.fsmonitor)" },
  GIT_CONFIG_SYSTEM: { why: "git reads it as the system configuration (core.fsmonitor)" },
  GNUPGHOME: { why: "gpg trusts its keys and runs the programs gpg.conf names" },
  DOCKER_CONFIG: { why: "docker runs its cli-plugins and the credential helpers its config names" },
  KUBECONFIG: { why: "kubectl runs the exec credential plugins it names", list: true },
  MYVIMRC: { why: "vim runs it at start-up" },
};

/**
 * Names at the top of a home folder that the host runs or reads even while they are missing now:
 * kept from being made, beside the dot-entries there already (each protected whole).
 */
export const HOME_ROLE_NAMES: readonly string[] = [
  ".config",
  ".local",
  ".vim",
  ".vimrc",
  ".gvimrc",
  ".tmux.conf",
  ".bashrc.d",
  ".oh-my-zsh",
  ".hgrc",
  ".vscode-server",
  ".inputrc",
  ".emacs",
  ".emacs.d",
  ".wgetrc",
  ".curlrc",
];

/**
 * The credential stores in the home of the user running pleach that commands in `read-only` and
 * `workspace-write` cannot read (see `hiddenReads`): reading one fails with "Permission denied".
 * Each `why` says what the store holds.
 */
export const CREDENTIAL_STORES: readonly ProtectedEntry[] = [
  { name: ".ssh", why: "ssh's private keys" },
  { name: ".aws", why: "AWS access keys and SSO tokens" },
  { name: ".azure", why: "Azure CLI tokens" },
  { name: ".config/gcloud", why: "Google Cloud credentials" },
  { name: ".kube", why: "Kubernetes cluster credentials" },
  { name: ".docker/config.json", why: "container registry logins" },
  { name: ".dockercfg", why: "container registry logins (the older file)" },
  { name: ".config/containers/auth.json", why: "podman and buildah registry logins" },
  { name: ".netrc", why: "passwords that curl, git and ftp send" },
  { name: ".git-credentials", why: "git's stored passwords and tokens" },
  { name: ".config/git/credentials", why: "git's stored passwords and tokens" },
  { name: ".npmrc", why: "npm registry tokens" },
  { name: ".yarnrc.yml", why: "Yarn registry tokens (npmAuthToken)" },
  { name: ".pypirc", why: "PyPI upload tokens" },
  { name: ".gem/credentials", why: "the RubyGems API key" },
  { name: ".cargo/credentials", why: "crates.io tokens" },
  { name: ".cargo/credentials.toml", why: "crates.io tokens" },
  { name: ".gnupg", why: "GnuPG private keys" },
  { name: ".password-store", why: "pass's passwords" },
  { name: ".local/share/keyrings", why: "the GNOME keyring's passwords" },
  { name: ".config/gh", why: "GitHub CLI tokens" },
  { name: ".config/hub", why: "hub's GitHub token" },
  { name: ".config/glab-cli", why: "GitLab CLI tokens" },
  { name: ".terraform.d/credentials.tfrc.json", why: "Terraform Cloud tokens" },
  { name: ".vault-token", why: "a HashiCorp Vault token" },
  { name: ".config/rclone/rclone.conf", why: "rclone's cloud storage keys" },
  { name: ".s3cfg", why: "s3cmd's AWS keys" },
  { name: ".oci", why: "Oracle Cloud API keys" },
  { name: ".pgpass", why: "PostgreSQL passwords" },
  { name: ".my.cnf", why: "MySQL passwords" },
  { name: ".claude/.credentials.json", why: "Claude Code's login (an Anthropic token)" },
  { name: ".codex/auth.json", why: "Codex's OpenAI API key or ChatGPT login" },
  { name: ".gemini/oauth_creds.json", why: "Gemini CLI's Google login" },
  { name: ".config/github-copilot", why: "GitHub Copilot's tokens" },
  { name: ".local/share/opencode/auth.json", why: "opencode's model provider keys" },
  { name: ".cache/huggingface/token", why: "the Hugging Face token" },
  { name: ".huggingface/token", why: "the Hugging Face token (the older place)" },
];

/** The names of {@link PROTECTED_ENTRIES}: what is protected at the top of every workspace. */
export const PROTECTED_WORKSPACE_ENTRIES: readonly string[] = PROTECTED_ENTRIES.map(
  (entry) => entry.name,
);

/**
 * Whether a variable name looks like it holds a secret (`*KEY*`, `*TOKEN*`, `*SECRET*`,
 * `*PASSWORD*`, `*PASSWD*`, `*CREDENTIAL*`, any case). Such variables never reach a confined
 * command, not even when the caller names them explicitly.
 */
function isSecretLookingName(name: string): boolean {
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

/**
 * Variables every command gets, in every mode, so that nothing waits for a person who is not
 * there: a prompt or an editor would hold the command until its timeout, and a pager is useless
 * to a reader of the output. The caller's `env` overrides each; the host's own values do not
 * (a user's `EDITOR=vim` would hang an agent's `git commit`). Each says why; docs/sandbox.md lists them.
 */
export const NON_INTERACTIVE_ENVIRONMENT: Readonly<Record<string, { value: string; why: string }>> =
  {
    GIT_TERMINAL_PROMPT: {
      value: "0",
      why: "git fails instead of asking for a username or password",
    },
    GIT_EDITOR: {
      value: "true",
      why: "git commit, merge and rebase -i take their prepared message or todo list instead of opening an editor",
    },
    EDITOR: {
      value: "true",
      why: "other tools that open an editor (crontab -e, hg) go on unchanged",
    },
    VISUAL: { value: "true", why: "as EDITOR, for the tools that read VISUAL first" },
    PAGER: { value: "cat", why: "man, psql and others print instead of opening less" },
    GIT_PAGER: {
      value: "cat",
      why: "git prints instead of opening a pager, whatever its config says",
    },
    npm_config_yes: {
      value: "true",
      why: "npx and npm init install what they need without asking",
    },
    DEBIAN_FRONTEND: { value: "noninteractive", why: "apt and dpkg take the default answers" },
    PIP_NO_INPUT: { value: "1", why: "pip fails instead of asking for credentials" },
  };

/**
 * Variables a confined command (`read-only`, `workspace-write`) gets because its home is read-only:
 * tools that would fail writing their cache there write it in the private `/tmp` instead. The
 * workspace's kept caches (`cacheEnvironment`) override them where they can be had, the caller's
 * `env` overrides both; `danger-full-access` leaves the host's home as it is.
 */
export const CONFINED_ENVIRONMENT: Readonly<Record<string, { value: string; why: string }>> = {
  npm_config_cache: {
    value: "/tmp/.npm",
    why: "npm keeps its cache and logs in the private /tmp (emptied after each command) instead of failing with EROFS on ~/.npm",
  },
};

/** {@link NON_INTERACTIVE_ENVIRONMENT}'s values, by name. */
export function nonInteractiveEnvironment(): Record<string, string> {
  const environment: Record<string, string> = {};
  for (const [name, { value }] of Object.entries(NON_INTERACTIVE_ENVIRONMENT)) {
    environment[name] = value;
  }
  return environment;
}

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
 * The variables set for a confined command inside the sandbox, over what it inherits:
 * {@link NON_INTERACTIVE_ENVIRONMENT} and {@link CONFINED_ENVIRONMENT}, then `defaults` (the domain
 * proxy's variables), then the caller's explicit variables but the secret-looking ones. They are
 * handed to the command inside the sandbox, never to the sandbox launcher itself, because a
 * launcher started with a caller's `LD_PRELOAD` would run the caller's code unconfined.
 */
export function requestedEnvironment(
  requested: Readonly<Record<string, string>>,
  defaults: Readonly<Record<string, string>> = {},
): Record<string, string> {
  const environment = nonInteractiveEnvironment();
  for (const [name, { value }] of Object.entries(CONFINED_ENVIRONMENT)) environment[name] = value;
  Object.assign(environment, defaults);
  for (const [name, value] of Object.entries(requested)) {
    if (!isSecretLookingName(name)) environment[name] = value;
  }
  return environment;
}

/** The protected entries for names: their reasons from {@link PROTECTED_ENTRIES}, or a generic one. */
export function entriesNamed(names: readonly string[]): ProtectedEntry[] {
  return names.map(
    (name) =>
      PROTECTED_ENTRIES.find((entry) => entry.name === name) ?? {
        name,
        why: "it is on this sandbox's protected list",
      },
  );
}
