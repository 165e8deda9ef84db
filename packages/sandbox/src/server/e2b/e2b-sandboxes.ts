import os from "node:os";
import { HttpError } from "../http-errors.js";
import type { SandboxTemplate } from "../protocol.js";
import type { HostedSandbox, SandboxRegistry } from "../sandbox-registry.js";
import { createProcessTable, type ProcessTable } from "./process-table.js";

/**
 * The envd version this face answers as: new enough that the SDK sends no user and uploads
 * streams as octet-stream; closing stdin and watching (which it has too) answer `Unimplemented`.
 */
export const ENVD_VERSION = "0.5.7";

/** The longest timeout a sandbox may be given (E2B's own upper bound, 24 hours). */
const MAX_TIMEOUT_MS = 86_400_000;

/** What the E2B face keeps of one of the registry's sandboxes. */
export interface E2BSandboxRecord {
  id: string;
  templateID: string;
  metadata: Record<string, string>;
  envVars: Record<string, string>;
  startedAt: Date;
  endAt: Date;
  timer: NodeJS.Timeout | undefined;
  processes: ProcessTable;
}

/** The E2B face's sandboxes: the registry's, with E2B's template, metadata and timeout. */
export interface E2BSandboxes {
  create(init: {
    templateID: string;
    metadata: Record<string, string>;
    envVars: Record<string, string>;
    timeoutMs: number;
  }): Promise<E2BSandboxRecord>;
  /** The live sandbox `id`, or a 404 (E2B's answer for one not found). */
  get(id: string): E2BSandboxRecord;
  /** The registry's sandbox of a live record (its use noted), or a 404. */
  hosted(id: string): HostedSandbox;
  list(): E2BSandboxRecord[];
  kill(record: E2BSandboxRecord, reason: string): Promise<void>;
  /** The sandbox is killed `timeoutMs` from now. */
  setTimeout(record: E2BSandboxRecord, timeoutMs: number): void;
  /** As `setTimeout`, but never sooner than it would be now (a connect). */
  extendTimeout(record: E2BSandboxRecord, timeoutMs: number): void;
  /** The E2B API's view of a sandbox (`SandboxDetail`). */
  describe(record: E2BSandboxRecord): Record<string, unknown>;
  /** Stop every timer. */
  stop(): void;
}

/** Options of {@link createE2BSandboxes}. */
export interface E2BSandboxesOptions {
  registry: SandboxRegistry;
  /** E2B template names and the pleach templates they make. */
  templates: Record<string, SandboxTemplate>;
  /** Whether the server has a template root (other names are then folders of it). */
  templateRoot: boolean;
}

export function createE2BSandboxes({
  registry,
  templates,
  templateRoot,
}: E2BSandboxesOptions): E2BSandboxes {
  const records = new Map<string, E2BSandboxRecord>();
  const live = (id: string): E2BSandboxRecord | undefined => {
    const record = records.get(id);
    if (record === undefined) return undefined;
    // Destroyed meanwhile (idle, or the server stopping): forgotten here too.
    if (!registry.has(id)) {
      clearTimeout(record.timer);
      records.delete(id);
      return undefined;
    }
    return record;
  };
  const get = (id: string): E2BSandboxRecord => {
    const record = live(id);
    if (record === undefined) {
      throw new HttpError(404, {
        code: "NOT_FOUND",
        message: `no sandbox ${id} on this server: it was killed, reached its timeout, was idle too long, or the server restarted; create a new one`,
        details: { unavailable: true, reason: "gone" },
      });
    }
    return record;
  };
  const kill = async (record: E2BSandboxRecord, reason: string) => {
    clearTimeout(record.timer);
    records.delete(record.id);
    if (registry.has(record.id)) await registry.destroy(registry.lookup(record.id), reason);
  };
  const setTimer = (record: E2BSandboxRecord, timeoutMs: number) => {
    const bounded = Math.min(Math.max(timeoutMs, 0), MAX_TIMEOUT_MS);
    clearTimeout(record.timer);
    record.endAt = new Date(Date.now() + bounded);
    record.timer = setTimeout(() => void kill(record, "the sandbox reached its timeout"), bounded);
    record.timer.unref();
  };
  return {
    async create({ templateID, metadata, envVars, timeoutMs }) {
      const template = templateOf(templateID, { templates, templateRoot });
      const { id } = await registry.create(template);
      const record: E2BSandboxRecord = {
        id,
        templateID,
        metadata,
        envVars,
        startedAt: new Date(),
        endAt: new Date(),
        timer: undefined,
        processes: createProcessTable(),
      };
      records.set(id, record);
      setTimer(record, timeoutMs);
      return record;
    },
    get,
    hosted(id) {
      get(id);
      return registry.lookup(id);
    },
    list: () => [...records.keys()].flatMap((id) => live(id) ?? []),
    kill,
    setTimeout: setTimer,
    extendTimeout(record, timeoutMs) {
      if (Date.now() + timeoutMs > record.endAt.getTime()) setTimer(record, timeoutMs);
    },
    describe(record) {
      return {
        sandboxID: record.id,
        templateID: record.templateID,
        alias: record.templateID,
        startedAt: record.startedAt.toISOString(),
        endAt: record.endAt.toISOString(),
        state: "running",
        envdVersion: ENVD_VERSION,
        metadata: record.metadata,
        // The host's: a sandbox of this server shares the machine, with no share of its own.
        cpuCount: os.availableParallelism(),
        memoryMB: Math.round(os.totalmem() / 1024 / 1024),
      };
    },
    stop() {
      for (const record of records.values()) clearTimeout(record.timer);
    },
  };
}

/** The pleach template an E2B template name stands for. */
function templateOf(
  name: string,
  {
    templates,
    templateRoot,
  }: { templates: Record<string, SandboxTemplate>; templateRoot: boolean },
): SandboxTemplate {
  // Own names only: `constructor` or `__proto__` is no template.
  const mapped = Object.hasOwn(templates, name) ? templates[name] : undefined;
  if (mapped !== undefined) return mapped;
  if (templateRoot && /^[\w.-]+$/.test(name) && !name.startsWith(".")) return { folder: name };
  throw new HttpError(400, {
    code: "INVALID_INPUT",
    message: `no template ${JSON.stringify(name)} on this server; use one of ${Object.keys(
      templates,
    )
      .map((known) => JSON.stringify(known))
      .join(", ")}${templateRoot ? " or a folder of its --template-root" : ""}`,
  });
}
