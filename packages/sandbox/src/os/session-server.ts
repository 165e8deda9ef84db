import { statSync } from "node:fs";
import { perlProgram } from "../perl-program.js";

/** The only Perl pleach runs, in a sandbox: the session sandbox's server, the proxy's forwarder. */
export const PERL_PATH = "/usr/bin/perl";
/** `prctl`'s system call number, per architecture (`PR_SET_DUMPABLE` is 4 everywhere). */
const PRCTL_SYSCALL: Partial<Record<NodeJS.Architecture, number>> = {
  x64: 157,
  arm64: 167,
  riscv64: 167,
  loong64: 167,
  arm: 172,
  ia32: 172,
  s390x: 172,
  ppc64: 171,
};

/** Whether this host can run the server: a trusted Perl (root's, not writable by others), a known `prctl`. */
export function sessionServerSupported(): boolean {
  if (PRCTL_SYSCALL[process.arch] === undefined) return false;
  try {
    const stats = statSync(PERL_PATH);
    return stats.isFile() && stats.uid === 0 && (stats.mode & 0o022) === 0;
  } catch {
    return false;
  }
}

/**
 * The server a session sandbox runs as its pid 1 (see `session-sandbox.ts`): its Perl program
 * (`session-server.pl`), how it is started inside bubblewrap, and its protocol.
 *
 * Every command runs under a keeper of its own: a fork of the server that makes itself the child
 * subreaper of what it starts, so that whatever the command starts stays below its keeper however
 * it forks, setsids or orphans itself. "Every process of the command" is then exactly the keeper's
 * descendants, which the server finds in `/proc` and kills, leaving other commands and the
 * session's jobs alone. A process orphaned by a keeper that was killed (by its own command) comes
 * to the server, which kills it at once, and then the children it leaves in turn, before that
 * command is said gone: nothing escapes being a command's.
 *
 * Requests (host to server, on stdin) are NUL-terminated fields:
 * - `run id cwd command flags keep keepMax n name1 value1 ...`: start `command` (`flags`: `i` to
 *   give it a stdin pipe, `p` to run it in a pseudo-terminal through util-linux's `script`; `keep`:
 *   a file name in the kept-output folder to copy its output to, up to `keepMax` bytes, or empty);
 * - `input id length` and then `length` raw bytes: write them to the command's stdin;
 * - `eof id`: close its stdin;
 * - `signal id NAME`: send `NAME` (`TERM`, `KILL`) to every process of the command;
 * - `reap id`: kill every process of the command, and its keeper;
 * - `remove name`: delete a kept output;
 * - `clean`: empty the private folders it was told of (`/tmp`, `/run`, ...) of what appeared since
 *   it started (sent between commands of a warm sandbox, when none runs).
 *
 * Answers (server to host, on the status fd) are lines, some followed by raw bytes:
 * `ready`; `out id length` / `err id length` and the bytes; `closed id` once no process holds the
 * command's output; `exit id status` when its main process ended (a wait status); `gone id` once
 * its keeper and every process of it are gone; `failed id reason` when it could not start;
 * `nokeep id` when its output could not be kept (a file of that name stands in the folder, or the
 * folder is full: what was kept of it is removed); `took id length` once `length` bytes of its
 * input left the server (written to its stdin, or dropped with a stdin that is closed), so that the
 * host knows what is still waiting; `cleaned` once a `clean` is done.
 *
 * It is the sandbox's pid 1 (`--as-pid-1`): the kernel delivers it no signal from inside the
 * namespace that it has no handler for (its only one, SIGCHLD, wakes it up), so a command can
 * neither kill nor stop it; and it makes itself non-dumpable before it starts any command (as do
 * the keepers, its forks), so a command of the same uid can neither ptrace it nor write its memory.
 */
const SERVER = perlProgram("os/session-server.pl");

/** The arguments that run the session server after the sandbox's own, as its pid 1. */
export function sessionServerArguments({
  statusFd,
  keptFolder,
  cleanFolders = [],
}: {
  statusFd: number;
  /** The kept-output folder inside the sandbox, or `undefined` for none. */
  keptFolder: string | undefined;
  /** The private folders a `clean` empties. */
  cleanFolders?: readonly string[];
}): string[] {
  const prctl = PRCTL_SYSCALL[process.arch];
  if (prctl === undefined) throw new Error(`no prctl number for ${process.arch}`);
  return [
    "--as-pid-1",
    "--chdir",
    "/",
    "--",
    PERL_PATH,
    "-e",
    SERVER(),
    "--",
    String(prctl),
    String(statusFd),
    keptFolder ?? "",
    ...cleanFolders,
  ];
}

/** What a `run` request carries. */
export interface SessionRunRequest {
  id: string;
  cwd: string;
  command: string;
  env: Readonly<Record<string, string>>;
  /** Give the command a stdin pipe (otherwise `/dev/null`). */
  stdin: boolean;
  /** Run it in a pseudo-terminal. */
  pty: boolean;
  /** A file name in the kept-output folder to copy the output to, and at most how many bytes. */
  keep?: { name: string; maxBytes: number };
}

/** The `run` request. */
export function runRequest({ id, cwd, command, env, stdin, pty, keep }: SessionRunRequest): Buffer {
  const fields = [
    "run",
    id,
    cwd,
    command,
    `${stdin ? "i" : ""}${pty ? "p" : ""}`,
    keep?.name ?? "",
    String(keep?.maxBytes ?? 0),
    String(Object.keys(env).length),
  ];
  for (const [name, value] of Object.entries(env)) fields.push(name, value);
  return Buffer.from(`${fields.join("\0")}\0`);
}

/** The `input` request: `bytes` for the command's stdin. */
export function inputRequest(id: string, bytes: Buffer): Buffer {
  return Buffer.concat([Buffer.from(`input\0${id}\0${bytes.length}\0`), bytes]);
}

/** A request of plain fields: `eof`, `reap`, `remove`, `signal`, `clean`. */
export function plainRequest(
  kind: "eof" | "reap" | "remove" | "signal" | "clean",
  ...fields: readonly string[]
): Buffer {
  return Buffer.from(`${[kind, ...fields].join("\0")}\0`);
}

/** One answer of the server. */
export type ServerAnswer =
  | { kind: "ready" }
  | { kind: "cleaned" }
  | { kind: "out" | "err"; id: string; data: Buffer }
  | { kind: "closed" | "gone" | "nokeep"; id: string }
  | { kind: "exit"; id: string; status: number }
  | { kind: "took"; id: string; bytes: number }
  | { kind: "failed"; id: string; reason: string };

/** Splits the server's status stream into answers, whatever the chunks it arrives in. */
export class AnswerReader {
  #buffer: Buffer = Buffer.alloc(0);

  /** The answers complete in what arrived so far, with `chunk`. */
  push(chunk: Buffer): ServerAnswer[] {
    this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk]);
    const answers: ServerAnswer[] = [];
    for (;;) {
      const newline = this.#buffer.indexOf(10);
      if (newline < 0) break;
      const [kind = "", id = "", rest = ""] = this.#buffer
        .subarray(0, newline)
        .toString()
        .split(" ");
      if (kind === "out" || kind === "err") {
        const length = Number(rest);
        if (this.#buffer.length < newline + 1 + length) break;
        answers.push({ kind, id, data: this.#buffer.subarray(newline + 1, newline + 1 + length) });
        this.#buffer = this.#buffer.subarray(newline + 1 + length);
        continue;
      }
      const line = this.#buffer.subarray(0, newline).toString();
      this.#buffer = this.#buffer.subarray(newline + 1);
      if (kind === "ready") answers.push({ kind });
      else if (kind === "cleaned") answers.push({ kind });
      else if (kind === "closed" || kind === "gone" || kind === "nokeep")
        answers.push({ kind, id });
      else if (kind === "exit") answers.push({ kind, id, status: Number(rest) });
      else if (kind === "took") answers.push({ kind, id, bytes: Number(rest) });
      else if (kind === "failed") answers.push({ kind, id, reason: line.slice(8 + id.length) });
    }
    return answers;
  }
}
