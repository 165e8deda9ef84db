import { readdirSync } from "node:fs";
import path from "node:path";
import { isInside } from "../paths.js";
import { pathState, realpathOr } from "./path-state.js";

/**
 * Folders with a role for the host: the host's programs read their configuration there, run what
 * lies there, or load code from there, whatever the files inside are named. Inside the workspace
 * each is protected whole, not file by file (see {@link hostRolePaths}).
 *
 * Each variable names one folder or file, or a `:`-separated list of them (`list`).
 */
const ROLE_VARIABLES: Readonly<Record<string, { why: string; list?: true }>> = {
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
const HOME_ROLE_NAMES: readonly string[] = [
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

/** A path protected for its role, with the rule a refusal names. */
export interface RolePath {
  path: string;
  rule: string;
}

/** Options of {@link hostRolePaths}. */
export interface HostRolePathsOptions {
  /** Real path of the workspace root. */
  root: string;
  hostEnvironment: Readonly<Record<string, string | undefined>>;
  /** Real paths of the host's home folders. */
  homeFolders: readonly string[];
}

/**
 * The paths protected in the workspace `root` for the role of the folder they are in, one rule:
 * a folder a host variable names (`PATH`, `XDG_CONFIG_HOME`, `ZDOTDIR`, `PYTHONUSERBASE`,
 * `CARGO_HOME`, ... see {@link ROLE_VARIABLES}) is protected whole, and in a home folder every
 * entry at its top whose name starts with a dot is (also the missing {@link HOME_ROLE_NAMES}).
 * Where such a folder is the workspace itself, every entry at its top is protected instead (a
 * home's dot-entries only); names made there later are protected from the next call on.
 */
export function hostRolePaths({
  root,
  hostEnvironment,
  homeFolders,
}: HostRolePathsOptions): RolePath[] {
  const found: RolePath[] = [];
  for (const home of homeFolders) {
    if (!isInside(root, home)) continue;
    const where =
      home === root ? "the workspace, a home folder" : `${relative(root, home)}, a home folder`;
    const names = new Set(HOME_ROLE_NAMES);
    for (const name of entriesOf(home)) if (name.startsWith(".")) names.add(name);
    for (const name of names) {
      const entry = path.join(home, name);
      found.push({
        path: entry,
        rule: `${relative(root, entry)} is protected: it is at the top of ${where}, where every dot-entry is the configuration of a program the host runs`,
      });
    }
  }
  for (const [variable, { why, list }] of Object.entries(ROLE_VARIABLES)) {
    const value = hostEnvironment[variable];
    if (value === undefined || value === "") continue;
    for (const named of list ? value.split(":") : [value]) {
      if (!named.startsWith("/")) continue;
      const folder = realOf(path.resolve(named));
      if (!isInside(root, folder)) continue;
      if (folder !== root) {
        found.push({
          path: folder,
          rule: `${relative(root, folder)} is protected: it is what the host's ${variable} names, and ${why}`,
        });
        continue;
      }
      for (const name of entriesOf(root)) {
        found.push({
          path: path.join(root, name),
          rule: `${name} is protected: the workspace is what the host's ${variable} names, and ${why}`,
        });
      }
    }
  }
  return found;
}

/** The names in `folder`, or none when it cannot be listed (missing, not a folder). */
function entriesOf(folder: string): string[] {
  try {
    return readdirSync(folder);
  } catch {
    return [];
  }
}

/** The real path of `target`, through its deepest existing ancestor when it is missing. */
function realOf(target: string): string {
  if (pathState(target) !== "missing") return realpathOr(target);
  const parent = path.dirname(target);
  return parent === target ? target : path.join(realOf(parent), path.basename(target));
}

function relative(root: string, target: string): string {
  return path.relative(root, target) || ".";
}
