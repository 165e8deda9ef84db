import { readdir, readFile, rm, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { checkPrivateFolder } from "../private-folder.js";
import { type ProcessKey, parseProcessKey, processState } from "../process-key.js";
import type { DockerCommand } from "./docker-cli.js";

/** The labels every sandbox container carries. */
export const DOCKER_LABELS = {
  /** Marks a pleach sandbox container. */
  sandbox: "dev.pleach.sandbox",
  /** The host name of the machine whose provider started it. */
  host: "dev.pleach.host",
  /** Its owner process: `boot-id.pid-namespace.pid.start-time` (see `process-key.ts`). */
  owner: "dev.pleach.owner",
} as const;

/** A folder without an owner file this old is a leftover (owner files are written first). */
const OWNERLESS_GRACE_MS = 60_000;

/**
 * This machine's name as a label value: a provider reaps only containers of its own machine, so
 * that those of other machines sharing an engine are left alone.
 */
export function dockerHostLabel(): string {
  return os.hostname().replace(/[^A-Za-z0-9_.-]/g, "_") || "unknown";
}

/** Options of {@link reapOrphans}. */
export interface ReapOrphansOptions {
  run: DockerCommand;
  /** This process's key; without one nothing can be told dead, so nothing is removed. */
  ownKey: ProcessKey | undefined;
  /** This machine's label ({@link dockerHostLabel}). */
  host: string;
  /** The provider's private folder of socket folders (`pleach-docker-<uid>`). */
  stateFolder: string;
  ownUid: number;
}

/**
 * Remove the containers (by label) and socket folders of providers of this machine whose process
 * is gone (killed, say); returns the names removed.
 */
export async function reapOrphans({
  run,
  ownKey,
  host,
  stateFolder,
  ownUid,
}: ReapOrphansOptions): Promise<{ containers: string[]; folders: string[] }> {
  const removed = { containers: [] as string[], folders: [] as string[] };
  if (ownKey === undefined) return removed;
  const isDead = (text: string | undefined) => {
    const key = text === undefined ? undefined : parseProcessKey(text);
    return key !== undefined && processState(key, ownKey) === "dead";
  };
  const listing = await run([
    "ps",
    "--all",
    "--filter",
    `label=${DOCKER_LABELS.sandbox}=1`,
    "--filter",
    `label=${DOCKER_LABELS.host}=${host}`,
    "--format",
    `{{.Names}}\t{{.Label "${DOCKER_LABELS.owner}"}}`,
  ]);
  const orphans = listing
    .split("\n")
    .map((line) => line.split("\t"))
    .filter(([name, owner]) => name !== undefined && name !== "" && isDead(owner))
    .map(([name]) => name as string);
  if (orphans.length > 0) {
    // Stopped first, so that each server ends its commands and looks at what they made.
    await run(["stop", "--time", "5", ...orphans], 120_000).catch(() => "");
    await run(["rm", "--force", ...orphans]).catch(() => "");
    removed.containers.push(...orphans);
  }
  let names: string[];
  try {
    await checkPrivateFolder(stateFolder, ownUid);
    names = await readdir(stateFolder);
  } catch {
    return removed;
  }
  const now = Date.now();
  for (const name of names) {
    if (!/^[0-9a-f]{16}$/.test(name)) continue;
    const folder = path.join(stateFolder, name);
    const ownerFile = `${folder}.owner`;
    const owner = await readFile(ownerFile, "utf8").catch(() => undefined);
    if (owner === undefined) {
      const info = await stat(folder).catch(() => undefined);
      if (info === undefined || now - info.mtimeMs < OWNERLESS_GRACE_MS) continue;
    } else if (!isDead(owner)) {
      continue;
    }
    await rm(folder, { recursive: true, force: true }).catch(() => {});
    await rm(ownerFile, { force: true }).catch(() => {});
    removed.folders.push(folder);
  }
  for (const name of names) {
    // Owner files whose folder is gone (a reap cut short).
    const match = /^([0-9a-f]{16})\.owner$/.exec(name);
    if (match === null || names.includes(match[1] as string)) continue;
    const owner = await readFile(path.join(stateFolder, name), "utf8").catch(() => "");
    if (isDead(owner)) await rm(path.join(stateFolder, name), { force: true }).catch(() => {});
  }
  return removed;
}
