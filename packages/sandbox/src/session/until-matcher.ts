import { Worker } from "node:worker_threads";
import { ToolError } from "@pleach/core";

/** How long one test of an `until` pattern against a job's output may take, in milliseconds. */
const UNTIL_TEST_TIMEOUT_MS = 1_000;

/** The worker: tests a pattern against a text, keeping the last pattern compiled. */
const WORKER_SOURCE = `
const { parentPort } = require("node:worker_threads");
let last = { source: undefined, pattern: undefined };
parentPort.on("message", ({ source, text }) => {
  if (last.source !== source) last = { source, pattern: new RegExp(source) };
  parentPort.postMessage(last.pattern.test(text));
});
`;

interface Test {
  source: string;
  text: string;
  resolve(matched: boolean): void;
  reject(error: Error): void;
}

/**
 * Tests the `until` patterns of `job_output`, which the model writes, off the host's event loop:
 * one pattern that backtracks without end (`(a+)+$` against a line of `a`s and a `b`) would
 * otherwise stop it, and every session and call it serves with it. Tests run one at a time in a
 * worker thread, a session's own (so that one session's slow patterns hold up no other); one
 * that takes longer than {@link UNTIL_TEST_TIMEOUT_MS} is refused with `INVALID_INPUT` and its
 * worker replaced.
 */
export class UntilMatcher {
  #worker: Worker | undefined;
  #queue: Test[] = [];
  #current: Test | undefined;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;

  /** Whether the regular expression `source` (already checked to compile) matches `text`. */
  test(source: string, text: string): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => {
      if (this.#closed) {
        reject(ended());
        return;
      }
      this.#queue.push({ source, text, resolve, reject });
      this.#next();
    });
  }

  #next(): void {
    if (this.#current !== undefined) return;
    const test = this.#queue.shift();
    if (test === undefined) return;
    this.#current = test;
    this.#worker ??= this.#spawn();
    this.#worker.postMessage({ source: test.source, text: test.text });
    this.#timer = setTimeout(() => {
      this.#fail(
        new ToolError(
          "INVALID_INPUT",
          `until ${JSON.stringify(test.source)} took more than ${UNTIL_TEST_TIMEOUT_MS} ms to test against the job's output: it backtracks without end (nested repetition such as (a+)+). Give a simpler pattern, or a plain piece of the text awaited.`,
        ),
      );
    }, UNTIL_TEST_TIMEOUT_MS);
  }

  /** The current test fails: its worker is ended, the next test gets a new one. */
  #fail(error: Error): void {
    clearTimeout(this.#timer);
    void this.#worker?.terminate();
    this.#worker = undefined;
    const test = this.#current;
    this.#current = undefined;
    test?.reject(error);
    this.#next();
  }

  /** End the worker; tests still waiting fail. */
  close(): void {
    this.#closed = true;
    const error = ended();
    for (const test of this.#queue.splice(0)) test.reject(error);
    this.#fail(error);
  }

  #spawn(): Worker {
    // Not the host's flags: `--input-type=module` would make the CommonJS source fail to load.
    const worker = new Worker(WORKER_SOURCE, { eval: true, execArgv: [] });
    worker.unref();
    worker.on("message", (matched: boolean) => {
      if (worker !== this.#worker) return;
      clearTimeout(this.#timer);
      const test = this.#current;
      this.#current = undefined;
      test?.resolve(matched === true);
      this.#next();
    });
    worker.on("error", (error) => {
      if (worker === this.#worker) {
        this.#fail(new ToolError("INTERNAL", `until could not be tested: ${error.message}`));
      }
    });
    return worker;
  }
}

function ended(): ToolError {
  return new ToolError(
    "UNSUPPORTED",
    "this sandbox's session has ended (closed or released); acquire a new one",
  );
}
