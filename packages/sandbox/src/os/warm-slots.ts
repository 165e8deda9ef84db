import { identityAt } from "./mount-points.js";
import { SessionSandbox, type SessionSandboxSpec } from "./session-sandbox.js";

/** The warm sandbox of one workspace, mode and network, and when its last command ended. */
interface WarmSlot {
  /** The key of its sandbox; `undefined` before one was asked for. */
  key: string | undefined;
  sandbox: SessionSandbox | undefined;
  running: number;
  lastEnded: number;
}

/** What {@link WarmSlots.take} gives one command. */
export interface WarmTurn {
  /** A sandbox idle and ready for this command, or `undefined` (spawn a sandbox of its own). */
  sandbox: SessionSandbox | undefined;
  /** The sandbox this command's call started (a burst began), if it did. */
  started: SessionSandbox | undefined;
  /** Call once the command has ended; safe to call twice. */
  done(): void;
}

/**
 * The warm sandboxes of one command wrapper, one per workspace, mode and network (a slot). A
 * sandbox is started when a burst begins (a command starting within `idleMs` of the last one's
 * end in the same slot), replaced when the slot's key (argv and protected paths' identities)
 * changes, and forgotten once the slot has been idle for `idleMs`.
 */
export class WarmSlots {
  readonly #idleMs: number;
  readonly #slots = new Map<string, WarmSlot>();

  constructor(idleMs: number) {
    this.#idleMs = idleMs;
  }

  /**
   * The warm sandbox for a command of slot `slotId` whose sandbox must match the key `keyOf`
   * gives, asked only when the slot holds a sandbox or a burst starts one: a command alone
   * (the first, or one after an idle time) needs no key.
   */
  take(slotId: string, keyOf: () => string, start: () => SessionSandbox): WarmTurn {
    const now = performance.now();
    for (const [id, slot] of this.#slots) {
      if (slot.sandbox === undefined && slot.running === 0 && now - slot.lastEnded > this.#idleMs) {
        this.#slots.delete(id);
      }
    }
    let slot = this.#slots.get(slotId);
    const burst = slot !== undefined && (slot.running > 0 || now - slot.lastEnded <= this.#idleMs);
    if (slot !== undefined && (slot.sandbox !== undefined || burst)) {
      const key = keyOf();
      if (slot.key !== key) {
        // The policy or a protected path changed: this sandbox no longer matches.
        slot.sandbox?.retire();
        slot.sandbox = undefined;
        slot.key = key;
      }
    }
    if (slot === undefined) {
      slot = {
        key: undefined,
        sandbox: undefined,
        running: 0,
        lastEnded: Number.NEGATIVE_INFINITY,
      };
      this.#slots.set(slotId, slot);
    }
    if (slot.sandbox !== undefined && !slot.sandbox.alive) slot.sandbox = undefined;
    const started = slot.sandbox === undefined && burst ? start() : undefined;
    if (started !== undefined) slot.sandbox = started;
    const current = slot;
    current.running += 1;
    let ended = false;
    return {
      sandbox: current.sandbox?.idle ? current.sandbox : undefined,
      started,
      done() {
        if (ended) return;
        ended = true;
        current.running -= 1;
        current.lastEnded = performance.now();
      },
    };
  }

  /** Stop every warm sandbox and forget the slots. */
  async destroyAll(): Promise<void> {
    const sandboxes = [...this.#slots.values()].map((slot) => slot.sandbox);
    this.#slots.clear();
    await Promise.all(sandboxes.map((sandbox) => sandbox?.destroy()));
  }
}

/**
 * Who each path is ({@link identityAt}), so that a warm sandbox is dropped once one was replaced
 * or removed: with the change time for every path but `roots` (a protected path
 * changes only from the host, since the sandbox mounts over it, while the workspace root and the
 * other writable folders change with every file a command adds at their top).
 */
export function pathIdentities(roots: readonly string[], paths: Iterable<string>): string {
  return [...paths].map((each) => `${each}:${identityAt(each, !roots.includes(each))}`).join("\n");
}

/**
 * A warm sandbox for a burst of commands of one spec (see `warmSandbox`), emptying its private
 * folders between commands and stopping after `idleMs` unused; `failed` is told when its server
 * cannot start.
 */
export function startWarmSandbox(
  spec: Omit<SessionSandboxSpec, "cleanFolders" | "idleMs">,
  varRunIsDirectory: boolean,
  idleMs: number,
  failed: () => void,
): SessionSandbox {
  const cleanFolders = [
    "/tmp",
    "/run",
    "/dev",
    "/dev/shm",
    ...(varRunIsDirectory ? ["/var/run"] : []),
  ];
  const started = new SessionSandbox({ ...spec, cleanFolders, idleMs }, () => {});
  void started.ready.then((ok) => {
    if (!ok) failed();
  });
  return started;
}
