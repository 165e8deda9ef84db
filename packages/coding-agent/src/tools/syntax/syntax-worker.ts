import { parentPort } from "node:worker_threads";
import { parserFor, type SyntaxLanguage } from "./grammars.js";
import { type ErrorsAcrossEdit, errorsAcrossEdit } from "./kept-trees.js";

/** What the host asks the worker: the errors of one file across one change. */
export interface SyntaxWorkerRequest {
  language: SyntaxLanguage;
  key: string;
  before: string;
  after: string;
}

/**
 * What the worker says: `ready` once, when its modules are loaded; then, to each request, the errors (`"clean"` for none); `no-grammar` when the language's
 * grammar cannot load here; `gave-up` when a parse stopped (its time limit) or failed, after
 * which the worker's parser may hold a half-done parse and is not used again.
 */
export type SyntaxWorkerAnswer =
  | { kind: "ready" }
  | { kind: "errors"; errors: ErrorsAcrossEdit | "clean" }
  | { kind: "no-grammar" }
  | { kind: "gave-up"; reason: string };

// The worker thread of the syntax check (see syntax-worker-client.ts): one request at a time,
// the parsers and the kept trees its own.
parentPort?.on("message", (request: SyntaxWorkerRequest) => {
  void answer(request).then((reply) => parentPort?.postMessage(reply));
});
parentPort?.postMessage({ kind: "ready" } satisfies SyntaxWorkerAnswer);

async function answer({ language, key, before, after }: SyntaxWorkerRequest) {
  const parser = await parserFor(language);
  if (parser === undefined) return { kind: "no-grammar" } satisfies SyntaxWorkerAnswer;
  try {
    const errors = errorsAcrossEdit(parser, key, before, after);
    if (errors === undefined) {
      return {
        kind: "gave-up",
        reason: "the parser gave up on it (a parse ran past its time limit, or failed)",
      } satisfies SyntaxWorkerAnswer;
    }
    return { kind: "errors", errors } satisfies SyntaxWorkerAnswer;
  } catch (error) {
    return {
      kind: "gave-up",
      reason: `the parser failed (${(error as Error).message})`,
    } satisfies SyntaxWorkerAnswer;
  }
}
