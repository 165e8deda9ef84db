import { readFileSync } from "node:fs";
import { type ProcessKey, processKeyOf, processState } from "../process-key.js";
import {
  inputRequest,
  plainRequest,
  runRequest,
  type ServerAnswer,
  type SessionRunRequest,
} from "./session-server.js";

/** One command for a session sandbox: its folder, text and whole environment. */
export interface SessionCommand {
  cwd: string;
  command: string;
  env: Readonly<Record<string, string>>;
}
/** After bubblewrap is gone, how long its pid 1 (and with it every process of the sandbox) has to go. */
const INIT_GONE_TIMEOUT_MS = 10_000;

/** What a process of the session hears of itself. */
export interface SessionProcessEvents {
  onData(stream: "stdout" | "stderr", data: Buffer): void;
  /** Its main process ended with this wait status. */
  onExit(status: number): void;
  /**
   * Its keeper and every process of it are gone and all their output was read (also when the
   * sandbox died); the last event.
   */
  onGone(): void;
  /** Its output could not be kept (a file of that name stands in the folder, or it is full). */
  onNoKeep?(): void;
}

/** A command running in a session sandbox. */
export interface SessionProcess {
  readonly id: string;
  /** Bytes for its stdin (only when started with `stdin: true`). */
  input(bytes: Buffer): void;
  /** Bytes given to {@link input} that have not reached its stdin yet (the command has not read them). */
  readonly queuedInput: number;
  /** End its stdin. */
  endInput(): void;
  /** Send a signal to every process of it. */
  signal(name: "TERM" | "KILL"): void;
  /** Kill every process of it; `onGone` follows. */
  reap(): void;
}

/** A process of the sandbox, as the host follows it. */
interface ProcessEntry {
  events: SessionProcessEvents;
  /** A command or a job of the session, rather than the proxy's forwarder. */
  counted: boolean;
  closed: boolean;
  gone: boolean;
  exited: boolean;
  /** After its exit, how long its output may stay open before what it left is killed. */
  drainMs: number;
  drainTimer?: NodeJS.Timeout;
  /** Input bytes sent that the server has not said were taken. */
  queuedInput: number;
}

/**
 * The processes of a session sandbox as the host follows them through its server (pid 1): each
 * started by a request, each answer of the server handed to the events of its process. A
 * command ends with its main process: once that has exited and its output has closed, or
 * `drainMs` after the exit (a background child may hold the output), what it left is killed.
 */
export class SessionProcesses {
  readonly #entries = new Map<string, ProcessEntry>();
  #nextId = 0;

  constructor(
    private readonly send: (request: Buffer) => void,
    /** Called when the last command or job is gone. */
    private readonly onNoneRunning: () => void,
  ) {}

  /** How many commands and jobs run, until each is gone (the proxy's forwarder is neither). */
  get running(): number {
    let running = 0;
    for (const entry of this.#entries.values()) if (entry.counted) running += 1;
    return running;
  }

  /** Ask the server to start `request`; its events come until `onGone`. */
  launch(
    request: Omit<SessionRunRequest, "id">,
    events: SessionProcessEvents,
    { drainMs, counted }: { drainMs: number; counted: boolean },
  ): SessionProcess {
    this.#nextId += 1;
    const id = String(this.#nextId);
    const entry: ProcessEntry = {
      events,
      counted,
      closed: false,
      gone: false,
      exited: false,
      drainMs,
      queuedInput: 0,
    };
    this.#entries.set(id, entry);
    this.send(runRequest({ ...request, id }));
    return {
      id,
      input: (bytes) => {
        if (bytes.length === 0) return;
        entry.queuedInput += bytes.length;
        this.send(inputRequest(id, bytes));
      },
      get queuedInput() {
        return entry.queuedInput;
      },
      endInput: () => this.send(plainRequest("eof", id)),
      signal: (name) => this.send(plainRequest("signal", id, name)),
      reap: () => this.send(plainRequest("reap", id)),
    };
  }

  /** Hand an answer of the server about one process to that process. */
  answer(answer: Exclude<ServerAnswer, { kind: "ready" | "cleaned" }>): void {
    const entry = this.#entries.get(answer.id);
    if (entry === undefined) return;
    const { events } = entry;
    switch (answer.kind) {
      case "out":
        events.onData("stdout", answer.data);
        break;
      case "err":
        events.onData("stderr", answer.data);
        break;
      case "exit":
        entry.exited = true;
        events.onExit(answer.status);
        this.#reapWhenDrained(answer.id, entry);
        break;
      case "closed":
        entry.closed = true;
        this.#reapWhenDrained(answer.id, entry);
        // Its processes may be gone before the last of their output was read: gone follows it.
        if (entry.gone) this.#end(answer.id);
        break;
      case "nokeep":
        events.onNoKeep?.();
        break;
      case "took":
        entry.queuedInput = Math.max(0, entry.queuedInput - answer.bytes);
        break;
      case "gone":
        entry.gone = true;
        if (entry.closed) this.#end(answer.id);
        break;
      case "failed":
        this.#end(answer.id);
        break;
    }
  }

  /** The sandbox is gone: every process of it is over. */
  endAll(): void {
    for (const id of [...this.#entries.keys()]) this.#end(id);
  }

  #reapWhenDrained(id: string, entry: ProcessEntry): void {
    if (!entry.exited || entry.gone) return;
    const reap = () => this.send(plainRequest("reap", id));
    if (entry.closed) {
      clearTimeout(entry.drainTimer);
      reap();
    } else {
      entry.drainTimer ??= setTimeout(reap, entry.drainMs);
    }
  }

  /** A process is over: its processes gone and its output read (or the sandbox gone). */
  #end(id: string): void {
    const entry = this.#entries.get(id);
    if (entry === undefined) return;
    clearTimeout(entry.drainTimer);
    this.#entries.delete(id);
    entry.events.onGone();
    if (entry.counted && this.running === 0) this.onNoneRunning();
  }
}

/** The one child of process `pid` (bubblewrap's: the sandbox's pid 1), when it can be told. */
export function childOf(pid: number | undefined): ProcessKey | undefined {
  try {
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(" ");
    return children.length === 1 ? processKeyOf(Number(children[0])) : undefined;
  } catch {
    return undefined;
  }
}

/** Settles with true once the process `key` is gone, with false if it is still there after the timeout. */
export async function processGone(key: ProcessKey): Promise<boolean> {
  const deadline = performance.now() + INIT_GONE_TIMEOUT_MS;
  // The key is of this boot and pid namespace: it is its own vantage point.
  while (processState(key, key) === "alive") {
    if (performance.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return true;
}
