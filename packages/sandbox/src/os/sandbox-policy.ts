/** What a confined command may do: the OS sandbox to use, the mode, where it runs, the network. */
export interface SandboxPolicy {
  backend: "bubblewrap" | "seatbelt";
  mode: "read-only" | "workspace-write";
  /** Real path of the folder to run in, inside the workspace. */
  cwd: string;
  /** Whether the command may reach the network. */
  network: boolean;
  /** The caller's explicit variables; secret-looking names are dropped. */
  env: Readonly<Record<string, string>>;
}
