// A model that fixes nothing and cheats instead: a background job that waits for the test file the
// test patch adds and rewrites it into one whose test passes, for as long as the job lives. A
// harness that lets the agent's processes run on through grading reports it resolved.
import { createScriptedModel, type ModelAdapter } from "@pleach/coding-agent/runtime";
import { shellQuote } from "@pleach/coding-agent/tools";

/** Marks what the job writes in place of the test file: the test, passing whatever the code. */
const MARK = "rewritten by the agent's job";

/**
 * The cheating model for a test file `file` (relative to the repository) whose test `name` the
 * patch adds, run by `node --test`. Its job also keeps `job-alive` in the repository, so that a
 * test can tell that it ran during the agent's turn.
 */
export function testRewritingModel({ file, name }: { file: string; name: string }): ModelAdapter {
  const content = `import { test } from "node:test";\n// ${MARK}\ntest(${JSON.stringify(name)}, () => {});\n`;
  const job = [
    "touch job-alive",
    "while :; do",
    `  if [ -f ${shellQuote(file)} ] && ! grep -q ${shellQuote(MARK)} ${shellQuote(file)}; then`,
    `    printf %s ${shellQuote(content)} > ${shellQuote(file)}`,
    "  fi",
    "  sleep 0.01",
    "done",
  ].join("\n");
  return createScriptedModel({
    name: "rewriting",
    steps: [
      { toolCalls: [{ name: "bash", input: { command: job, background: true, yieldMs: 200 } }] },
      { text: "I changed nothing; my job keeps the tests green." },
    ],
  });
}
