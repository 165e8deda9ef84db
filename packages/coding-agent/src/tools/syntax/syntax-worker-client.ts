import { Worker } from "node:worker_threads";
import type { SyntaxLanguage } from "./grammars.js";
import type { ErrorsAcrossEdit } from "./kept-trees.js";
import type { SyntaxWorkerAnswer, SyntaxWorkerRequest } from "./syntax-worker.js";

/** How long one file's check may take in the worker before it is given up, in milliseconds. */
const CHECK_TIMEOUT_MS = 5_000;
/**
 * How long a new worker may take to load its modules, in milliseconds: apart from the checks', as
 * a busy host (or the tests' loader compiling the sources) can take seconds for it.
 */
const STARTUP_TIMEOUT_MS = 30_000;
/**
 * The worker's JavaScript heap, in MB: the trees themselves live in WebAssembly memory, which
 * the grammar's build bounds (2 GiB at most) but this does not.
 */
const WORKER_HEAP_MB = 256;

/** What checking one file gave: its errors, no grammar here, or why the check is unavailable. */
export type WorkerCheck =
  | { kind: "errors"; errors: ErrorsAcrossEdit | "clean" }
  | { kind: "no-grammar" }
  | { kind: "unavailable"; reason: string };

interface Pending {
  request: SyntaxWorkerRequest;
  resolve(check: WorkerCheck): void;
}

let worker: Worker | undefined;
/** Whether `worker` has loaded its modules (said `ready`). */
let ready = false;
const queue: Pending[] = [];
let current: Pending | undefined;
let timer: NodeJS.Timeout | undefined;

/**
 * The errors of `key`'s file (in `language`) across a change from `before` to `after`, read in a
 * worker thread, so that a file made to be slow to parse never stops the host's event loop (and
 * every session it serves). Checks run one at a time; one that passes {@link CHECK_TIMEOUT_MS}, or
 * whose parser gives up, fails or exhausts the worker's heap, is `unavailable` with the reason, and
 * its worker is ended: the next check gets a fresh one (its parsers loaded again, its trees kept
 * from before gone), never a parser left half-way.
 */
export function checkInWorker(
  language: SyntaxLanguage,
  key: string,
  before: string,
  after: string,
): Promise<WorkerCheck> {
  return new Promise<WorkerCheck>((resolve) => {
    queue.push({ request: { language, key, before, after }, resolve });
    next();
  });
}

function next(): void {
  if (current !== undefined) return;
  const pending = queue.shift();
  if (pending === undefined) return;
  current = pending;
  if (worker === undefined) {
    ready = false;
    worker = spawn();
  }
  if (ready) {
    send(worker, pending);
    return;
  }
  timer = setTimeout(
    () => fail(`the parser's worker did not start within ${STARTUP_TIMEOUT_MS / 1000} s`),
    STARTUP_TIMEOUT_MS,
  );
}

function send(to: Worker, pending: Pending): void {
  clearTimeout(timer);
  to.postMessage(pending.request);
  timer = setTimeout(
    () => fail(`the check took longer than ${CHECK_TIMEOUT_MS / 1000} s, and was stopped`),
    CHECK_TIMEOUT_MS,
  );
}

/** The current check is unavailable: its worker is ended, the next check gets a new one. */
function fail(reason: string): void {
  const failed = worker;
  worker = undefined;
  void failed?.terminate();
  settle({ kind: "unavailable", reason });
}

function settle(check: WorkerCheck): void {
  clearTimeout(timer);
  const pending = current;
  current = undefined;
  pending?.resolve(check);
  next();
}

function spawn(): Worker {
  const { url, execArgv } = workerEntry();
  const started = new Worker(url, {
    execArgv,
    resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB },
  });
  started.on("message", (answer: SyntaxWorkerAnswer) => {
    if (started !== worker) return;
    if (answer.kind === "ready") {
      ready = true;
      if (current !== undefined) send(started, current);
    } else if (answer.kind === "gave-up") fail(answer.reason);
    else settle(answer);
  });
  started.on("error", (error) => {
    if (started === worker) fail(`the parser's worker failed (${error.message})`);
  });
  started.on("exit", (code) => {
    if (started === worker) fail(`the parser's worker ended (exit code ${code})`);
  });
  // An idle worker never keeps the process up. After the listeners: adding a "message" listener
  // refs the worker's port again, and `pleach call` then never exited.
  started.unref();
  return started;
}

/**
 * The worker's module: the compiled `syntax-worker.js` beside this one, or, run from the
 * TypeScript sources (the tests), `syntax-worker.ts` through the repository's loader that
 * compiles them (a worker does not go through the test runner's own).
 */
function workerEntry(): { url: URL; execArgv: string[] } {
  if (!import.meta.url.endsWith(".ts")) {
    return { url: new URL("./syntax-worker.js", import.meta.url), execArgv: [] };
  }
  const loader = new URL("../../../../../scripts/ts-source-loader.mjs", import.meta.url).href;
  const register = `import { register } from "node:module"; register(${JSON.stringify(loader)});`;
  return {
    url: new URL("./syntax-worker.ts", import.meta.url),
    execArgv: ["--import", `data:text/javascript,${encodeURIComponent(register)}`],
  };
}
