import type { SandboxClient } from "./contract.js";

/** A checkpoint of a workspace: what its files were at one moment. */
export interface Checkpoint {
  /** The checkpoint's id, for `restore`. */
  id: string;
  /** What it was taken before (`step 3`, `before restore of ...`). */
  label: string;
  /** When it was taken (epoch ms). */
  createdAt: number;
  /** Files (and symlinks) it holds. */
  files: number;
  /** What it does not hold, and why (a nested repository, a file over the size bound). */
  skipped: string[];
}

/** What a restore changed. */
export interface RestoreResult {
  /** The checkpoint restored. */
  checkpoint: string;
  /** The checkpoint taken just before, with what the restore replaced: restore it to undo. */
  undo: string;
  /** Files written back as they were (changed or deleted since). */
  written: string[];
  /** Files removed (made since). */
  removed: string[];
  /** Paths left as they are, and why (a protected path, a hidden one). */
  skipped: { path: string; reason: string }[];
}

/**
 * Checkpoints of a client's workspace, kept outside it: `take` records what its files are now
 * (costing in proportion to what changed since the last one) and `restore` brings them back,
 * files made since removed. The workspace's own git repository is never used.
 */
export interface SandboxCheckpoints {
  take(label: string): Promise<Checkpoint>;
  restore(checkpointId: string): Promise<RestoreResult>;
  /** The checkpoints kept for this workspace, newest first. */
  list(): Promise<Checkpoint[]>;
}

/** A client that offers checkpoints. */
export interface CheckpointSandboxClient extends SandboxClient {
  readonly checkpoints: SandboxCheckpoints;
}

/** The checkpoints `client` offers, or `undefined` when it offers none. */
export function sandboxCheckpointsOf(client: SandboxClient): SandboxCheckpoints | undefined {
  const checkpoints = (client as Partial<CheckpointSandboxClient>).checkpoints;
  return typeof checkpoints === "object" && checkpoints !== null ? checkpoints : undefined;
}
