// What the syntax check adds to edit_file, on a 2,000-line TypeScript file, measured in one run:
//   edit_file of the text as `big.txt` (no grammar: not checked)   — the baseline
//   edit_file of the same text as `big.ts`: its tree from the edit before is kept, so tree-sitter
//     re-parses only what the edit touched (an agent's edits of one file in a row)
//   edit_file of five such files in turn: more than the four trees kept, so each edit parses the
//     whole file (the first edit of a file)
//   edit_file of `broken.ts`, the same text with one syntax error elsewhere: the text after is
//     parsed whole, to read its errors, and compared with those of the kept tree before
// The first edit of a `.ts` file in the process loads web-tree-sitter and the TypeScript grammar
// and runs the parser's code for the first time; that cost is reported apart. Then rounds run the
// cases in an order shuffled each round.
//
// The check runs in a worker thread (bounded in time and memory, off the host's event loop); the
// last lines compare it with the same check run in this thread, for the re-parse of one file's
// edits and for the whole parse of a file with an error: what the worker adds to each edit.
//
// Run by hand after building: `npx tsc -b && node bench/syntax-check.mjs [runs]`.
// Goal: the check adds <= 5 ms to the median edit.
import { mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { createEditFileTool } from "../packages/coding-agent/dist/tools/edit-file/tool.js";
import { parserFor } from "../packages/coding-agent/dist/tools/syntax/grammars.js";
import { errorsAcrossEdit } from "../packages/coding-agent/dist/tools/syntax/kept-trees.js";
import { checkInWorker } from "../packages/coding-agent/dist/tools/syntax/syntax-worker-client.js";
import { createLocalSandbox } from "../packages/sandbox/dist/index.js";

const RUNS = Math.max(30, Number(process.argv[2] ?? 100));
const WARMUP = 5;
const LINES = 2_000;

/** A 40-line block of ordinary TypeScript, numbered so that every block differs. */
function block(index) {
  return [
    `/** A record of kind ${index}. */`,
    `export interface Record${index}<T extends object = object> {`,
    `  readonly id: string;`,
    `  value${index}: number;`,
    `  tags?: readonly string[];`,
    `  payload: T;`,
    `}`,
    ``,
    `export type Key${index} = keyof Record${index} | \`extra-\${string}\`;`,
    ``,
    `export class Store${index}<T extends object> {`,
    `  private readonly items = new Map<string, Record${index}<T>>();`,
    ``,
    `  constructor(private readonly limit = ${index + 10}) {}`,
    ``,
    `  add(record: Record${index}<T>): boolean {`,
    `    if (this.items.size >= this.limit) return false;`,
    `    this.items.set(record.id, { ...record, value${index}: record.value${index} + 1 });`,
    `    return true;`,
    `  }`,
    ``,
    `  *values(): IterableIterator<Record${index}<T>> {`,
    `    for (const [, record] of this.items) yield record;`,
    `  }`,
    ``,
    `  async total(filter?: (record: Record${index}<T>) => boolean): Promise<number> {`,
    `    let sum = 0;`,
    `    for (const record of this.values()) {`,
    `      if (filter === undefined || filter(record)) sum += record.value${index};`,
    `    }`,
    `    return sum;`,
    `  }`,
    `}`,
    ``,
    `export function describe${index}(record: Record${index}<object>): string {`,
    `  const tags = record.tags?.join(", ") ?? "none";`,
    `  return \`\${record.id}: \${record.value${index}} (\${tags})\`;`,
    `}`,
    ``,
    `export const DEFAULT_${index} = { id: "d${index}", value${index}: ${index}, payload: {} } as const;`,
  ];
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 0 ? (sorted[middle - 1] + sorted[middle]) / 2 : sorted[middle];
};

const shuffle = (items) => {
  const copy = [...items];
  for (let index = copy.length - 1; index > 0; index--) {
    const other = Math.floor(Math.random() * (index + 1));
    [copy[index], copy[other]] = [copy[other], copy[index]];
  }
  return copy;
};

const root = await realpath(await mkdtemp(path.join(os.tmpdir(), "pleach-bench-syntax-")));
try {
  const lines = Array.from({ length: LINES / 40 }, (_, index) => block(index)).flat();
  const text = `${lines.join("\n")}\n`;
  // The error sits far from the edited line, as an error already in a file would.
  const broken = text.replace("  readonly id: string;", "  readonly id: string;;(");
  await writeFile(path.join(root, "big.txt"), text);
  await writeFile(path.join(root, "big.ts"), text);
  await writeFile(path.join(root, "broken.ts"), broken);
  const inTurn = ["a.ts", "b.ts", "c.ts", "d.ts", "e.ts"];
  for (const name of inTurn) await writeFile(path.join(root, name), text);
  let turn = 0;
  const tool = createEditFileTool(await createLocalSandbox({ root, mode: "danger-full-access" }));

  // Each call flips one line in the middle of the file, so every call writes a change.
  const flips = new Map();
  const edit = async (file) => {
    const flipped = flips.get(file) === true;
    flips.set(file, !flipped);
    const [from, to] = flipped ? ["value25 + 2", "value25 + 1"] : ["value25 + 1", "value25 + 2"];
    const output = await tool.execute({ path: file, old: from, new: to });
    if (output.syntaxErrors !== undefined) throw new Error(`${file}: the edit was blamed`);
  };

  for (let index = 0; index < WARMUP; index++) await edit("big.txt");
  let started = performance.now();
  await parserFor("typescript");
  const grammarLoad = performance.now() - started;
  started = performance.now();
  await edit("big.ts");
  const firstLoad = performance.now() - started;
  started = performance.now();
  await edit("big.txt");
  const firstBaseline = performance.now() - started;

  const cases = [
    ["edit_file big.txt (no check)", () => edit("big.txt")],
    ["edit_file big.ts (checked, re-parse)", () => edit("big.ts")],
    ["edit_file of 5 .ts in turn (checked, parse)", () => edit(inTurn[turn++ % inTurn.length])],
    ["edit_file broken.ts (checked, one whole parse)", () => edit("broken.ts")],
  ];
  const times = new Map(cases.map(([name]) => [name, []]));
  for (let round = 0; round < WARMUP + RUNS; round++) {
    for (const [name, run] of shuffle(cases)) {
      const start = performance.now();
      await run();
      if (round >= WARMUP) times.get(name).push(performance.now() - start);
    }
  }

  console.log(`${LINES} lines, ${text.length.toLocaleString("en-US")} characters; ${RUNS} rounds`);
  console.log(
    `first use: loading web-tree-sitter and the TypeScript grammar ${grammarLoad.toFixed(1)} ms, then the first edit of a .ts file (the parser's code runs cold) ${firstLoad.toFixed(1)} ms (a .txt edit right after: ${firstBaseline.toFixed(1)} ms)`,
  );
  const baseline = median(times.get(cases[0][0]));
  for (const [name] of cases) {
    const value = median(times.get(name));
    const added = value - baseline;
    console.log(
      `${name.padEnd(48)} median ${value.toFixed(2).padStart(7)} ms  ${(value / baseline).toFixed(2)}x  added ${added.toFixed(2)} ms`,
    );
  }

  // The check alone, in this thread and in the worker, on the same texts.
  const parser = await parserFor("typescript");
  const flipped = text.replace("value25 + 1", "value25 + 2");
  const brokenFlipped = broken.replace("value25 + 1", "value25 + 2");
  const flipsOf = new Map();
  const pair = (key, original, changed) => {
    const there = flipsOf.get(key) === true;
    flipsOf.set(key, !there);
    return there ? [changed, original] : [original, changed];
  };
  const inThread = (key, original, changed) => {
    const [before, after] = pair(`thread ${key}`, original, changed);
    if (errorsAcrossEdit(parser, `thread ${key}`, before, after) === undefined) {
      throw new Error("the parse gave up");
    }
  };
  const inWorker = async (key, original, changed) => {
    const [before, after] = pair(`worker ${key}`, original, changed);
    const check = await checkInWorker("typescript", `worker ${key}`, before, after);
    if (check.kind !== "errors") throw new Error(`the worker's check: ${check.kind}`);
  };
  const checks = [
    ["re-parse, in thread", () => inThread("big", text, flipped)],
    ["re-parse, in worker", () => inWorker("big", text, flipped)],
    ["error file, in thread", () => inThread("broken", broken, brokenFlipped)],
    ["error file, in worker", () => inWorker("broken", broken, brokenFlipped)],
  ];
  const checkTimes = new Map(checks.map(([name]) => [name, []]));
  for (let round = 0; round < WARMUP + RUNS; round++) {
    for (const [name, run] of shuffle(checks)) {
      const start = performance.now();
      await run();
      if (round >= WARMUP) checkTimes.get(name).push(performance.now() - start);
    }
  }
  for (const kind of ["re-parse", "error file"]) {
    const thread = median(checkTimes.get(`${kind}, in thread`));
    const worker = median(checkTimes.get(`${kind}, in worker`));
    console.log(
      `check alone, ${kind.padEnd(10)}: in thread median ${thread.toFixed(2)} ms, in worker ${worker.toFixed(2)} ms: ${(worker / thread).toFixed(2)}x, the worker adds ${(worker - thread).toFixed(2)} ms`,
    );
  }
} finally {
  await rm(root, { recursive: true, force: true });
}
