// What the type check (`diagnostics: "types"`) adds to edit_file, on a 2,000-line TypeScript file
// and a 2,000-line Python file, measured in one run over one session sandbox:
//   edit_file without the type check, of the same TypeScript file     — the baseline
//   edit_file with it, a warm typescript-language-server in the session's sandbox, each edit
//     making a type error or fixing it (the result is checked to say so)
//   the same for Python, through a warm pyright
//   the TypeScript check alone after an edit (the file written between the check's begin and its
//     finish, as edit_file does), of a copy of the file in a folder with its own tsconfig.json,
//     against `tsc --noEmit -p` of another copy with the same tsconfig.json, run in the same
//     session sandbox as a command (what a model would run through `bash` instead): a fresh
//     compiler each time, the same file, the same options, the same edit
// Each server's first check (its start: the project and the language's library loaded) is
// reported apart. Then rounds run the cases in an order shuffled each round.
//
// Needs bubblewrap (a session sandbox) and the CLI's optional dependencies installed in the
// monorepo (`npm ci` installs them). Run by hand after building:
//   npx tsc -b && node bench/type-diagnostics.mjs [runs] [--no-pyright]
// Goal: a warm server's answer within 1 s for a file of 2,000 lines (the median added, and the
// check alone).
import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { createCodingAgentTools } from "../packages/coding-agent/dist/tools/coding-agent-tools.js";
import { createTypeDiagnostics } from "../packages/coding-agent/dist/tools/type-diagnostics/type-diagnostics.js";
import { createLocalSandbox } from "../packages/sandbox/dist/index.js";

const RUNS = Math.max(10, Number(process.argv[2] ?? 30));
const PYRIGHT = !process.argv.includes("--no-pyright");
const LINES = 2_000;
const modules = path.resolve(import.meta.dirname, "../node_modules");
const readFolders = ["typescript-language-server", "typescript", "pyright"].map((name) =>
  path.join(modules, name),
);
const servers = {
  typescriptLanguageServer: path.join(modules, "typescript-language-server/lib/cli.mjs"),
  tsserver: path.join(modules, "typescript/lib/tsserver.js"),
  pyright: path.join(modules, "pyright/langserver.index.js"),
};
const tsc = path.join(modules, "typescript/lib/tsc.js");
// The options of both the warm check's project (check/) and the baseline's (tsc/).
const tsconfig = {
  compilerOptions: {
    target: "es2022",
    lib: ["es2022"],
    module: "esnext",
    strict: true,
    // The lean baseline: tsc checks the file, not the library's declarations (the server does not).
    skipLibCheck: true,
    noEmit: true,
    types: [],
  },
  files: ["big.ts"],
};

/** 40 lines of ordinary TypeScript, numbered so that every block differs. */
function tsBlock(index) {
  return [
    `/** A record of kind ${index}. */`,
    `export interface Record${index} {`,
    `  readonly id: string;`,
    `  value: number;`,
    `  tags?: readonly string[];`,
    `}`,
    ``,
    `export class Store${index} {`,
    `  private readonly items = new Map<string, Record${index}>();`,
    ``,
    `  constructor(private readonly limit = ${index + 10}) {}`,
    ``,
    `  add(record: Record${index}): boolean {`,
    `    if (this.items.size >= this.limit) return false;`,
    `    this.items.set(record.id, { ...record, value: record.value + 1 });`,
    `    return true;`,
    `  }`,
    ``,
    `  *values(): IterableIterator<Record${index}> {`,
    `    for (const [, record] of this.items) yield record;`,
    `  }`,
    ``,
    `  total(filter?: (record: Record${index}) => boolean): number {`,
    `    let sum = 0;`,
    `    for (const record of this.values()) {`,
    `      if (filter === undefined || filter(record)) sum += record.value;`,
    `    }`,
    `    return sum; // total ${index}`,
    `  }`,
    `}`,
    ``,
    `export function describe${index}(record: Record${index}): string {`,
    `  const tags = record.tags?.join(", ") ?? "none";`,
    `  return \`\${record.id}: \${record.value} (\${tags})\`;`,
    `}`,
    ``,
    `export const DEFAULT_${index}: Record${index} = { id: "d${index}", value: ${index} };`,
    `export const SIZE_${index} = new Store${index}().total();`,
    `export const NAME_${index} = describe${index}(DEFAULT_${index});`,
    ``,
  ];
}

/** 40 lines of ordinary annotated Python. */
function pyBlock(index) {
  return [
    `class Store${index}:`,
    `    """A store of kind ${index}."""`,
    ``,
    `    def __init__(self, limit: int = ${index + 10}) -> None:`,
    `        self.limit = limit`,
    `        self.items: dict[str, int] = {}`,
    ``,
    `    def add(self, key: str, value: int) -> bool:`,
    `        if len(self.items) >= self.limit:`,
    `            return False`,
    `        self.items[key] = value + 1`,
    `        return True`,
    ``,
    `    def total(self) -> int:`,
    `        result = 0`,
    `        for value in self.items.values():`,
    `            result += value`,
    `        return result  # total ${index}`,
    ``,
    `    def keys(self) -> list[str]:`,
    `        return sorted(self.items)`,
    ``,
    ``,
    `def describe${index}(store: Store${index}) -> str:`,
    `    keys = ", ".join(store.keys()) or "none"`,
    `    return f"{store.total()} ({keys})"`,
    ``,
    ``,
    `def make${index}(values: list[int]) -> Store${index}:`,
    `    store = Store${index}()`,
    `    for position, value in enumerate(values):`,
    `        store.add(f"k{position}", value)`,
    `    return store`,
    ``,
    ``,
    `DEFAULT_${index}: Store${index} = make${index}([1, 2, 3])`,
    `NAME_${index}: str = describe${index}(DEFAULT_${index})`,
    `SIZE_${index}: int = DEFAULT_${index}.total()`,
    ``,
    ``,
  ];
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 0 ? (sorted[middle - 1] + sorted[middle]) / 2 : sorted[middle];
};
const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
};
const shuffle = (items) => {
  const copy = [...items];
  for (let index = copy.length - 1; index > 0; index--) {
    const other = Math.floor(Math.random() * (index + 1));
    [copy[index], copy[other]] = [copy[other], copy[index]];
  }
  return copy;
};

const root = await realpath(await mkdtemp(path.join(os.tmpdir(), "pleach-bench-types-")));
const client = await createLocalSandbox({
  root,
  mode: "workspace-write",
  session: true,
  allowReads: readFolders,
});
const typeDiagnostics = createTypeDiagnostics(client, { servers });
try {
  const tsText = Array.from({ length: LINES / 40 }, (_, index) => tsBlock(index))
    .flat()
    .join("\n");
  const pyText = Array.from({ length: LINES / 40 }, (_, index) => pyBlock(index))
    .flat()
    .join("\n");
  await writeFile(path.join(root, "plain.ts"), tsText);
  await writeFile(path.join(root, "big.ts"), tsText);
  await writeFile(path.join(root, "big.py"), pyText);
  // The line the edits break: tsc must name it.
  const brokenLine = tsText.split("\n").findIndex((line) => line.includes("// total 25")) + 1;
  // Two projects of their own, so that neither copy's edits change the other's program.
  for (const folder of ["check", "tsc"]) {
    await mkdir(path.join(root, folder));
    await writeFile(path.join(root, folder, "tsconfig.json"), JSON.stringify(tsconfig));
    await writeFile(path.join(root, folder, "big.ts"), tsText);
  }
  const plain = createCodingAgentTools(client, { only: ["edit_file"] })[0];
  const checked = createCodingAgentTools(client, { typeDiagnostics, only: ["edit_file"] })[0];

  // Each edit turns one function's result into a string (a type error) or back (its fix).
  const flips = {
    ts: ["return sum; // total 25", "return String(sum); // total 25"],
    py: ["return result  # total 25", "return str(result)  # total 25"],
  };
  const state = new Map();
  const edit = async (tool, file, kind, expect) => {
    const broken = state.get(file) === true;
    state.set(file, !broken);
    const [good, bad] = flips[kind];
    const [from, to] = broken ? [bad, good] : [good, bad];
    const output = tool.toModelOutput(await tool.execute({ path: file, old: from, new: to }, {}));
    if (
      expect &&
      !output.output.includes(
        broken ? "the change fixed 1 type error" : "the change introduced 1 type error",
      )
    ) {
      throw new Error(`${file}: the type check did not say what the edit did:\n${output.output}`);
    }
  };
  /** Flips `file` on disk as the edits above do; returns whether it is now broken. */
  const flip = async (file, kind) => {
    const broken = state.get(file) === true;
    state.set(file, !broken);
    const [good, bad] = flips[kind];
    const [from, to] = broken ? [bad, good] : [good, bad];
    const filePath = path.join(root, file);
    const text = await readFile(filePath, "utf8");
    if (!text.includes(from)) throw new Error(`${file} does not hold ${from}`);
    await writeFile(filePath, text.replace(from, to));
    return !broken;
  };
  // The check alone: begun before the write and finished after it, as edit_file does.
  const checkAlone = async (file) => {
    const run = await typeDiagnostics.begin([file]);
    const nowBroken = await flip(file, "ts");
    const [check] = await run.finish();
    const said = nowBroken ? check?.introduced?.count : check?.fixed?.count;
    if (check?.status !== "checked" || said !== 1) {
      throw new Error(`${file}: the check did not see the edit: ${JSON.stringify(check)}`);
    }
  };
  // The baseline: a fresh compiler over the same file and options, after the same edit.
  const tscRun = async (measure) => {
    const nowBroken = await flip("tsc/big.ts", "ts");
    const started = performance.now();
    const result = await client.exec(`node ${tsc} --noEmit -p tsc`, { timeoutMs: 120_000 });
    const elapsed = performance.now() - started;
    const reported = result.stdout.includes(`big.ts(${brokenLine},`);
    if (result.exitCode !== (nowBroken ? 2 : 0) || reported !== nowBroken) {
      throw new Error(`tsc did not report the edit (exit ${result.exitCode}):\n${result.stdout}`);
    }
    measure?.(elapsed);
  };

  // A case returns its own time when part of it is not to be timed (tsc's edit).
  const timed = async (run) => {
    const started = performance.now();
    const own = await run();
    return typeof own === "number" ? own : performance.now() - started;
  };
  const EDIT = "edit_file, no type check (plain.ts)";
  const EDIT_TS = "edit_file + TypeScript check (big.ts, warm)";
  const EDIT_PY = "edit_file + pyright check (big.py, warm)";
  const CHECK = "TypeScript check alone after an edit (warm)";
  const TSC = "tsc --noEmit -p, same file and options";
  const cases = {
    [EDIT]: () => edit(plain, "plain.ts", "ts", false),
    [EDIT_TS]: () => edit(checked, "big.ts", "ts", true),
    ...(PYRIGHT ? { [EDIT_PY]: () => edit(checked, "big.py", "py", true) } : {}),
    [CHECK]: () => checkAlone("check/big.ts"),
    [TSC]: () => tscRun(),
  };
  for (let index = 0; index < 3; index++) await cases[EDIT]();
  const firstTs = await timed(cases[EDIT_TS]);
  const firstCheck = await timed(cases[CHECK]);
  const firstPy = PYRIGHT ? await timed(cases[EDIT_PY]) : undefined;
  for (let index = 0; index < 3; index++) {
    for (const name of [EDIT_TS, EDIT_PY, CHECK, TSC]) await cases[name]?.();
  }
  const times = Object.fromEntries(Object.keys(cases).map((name) => [name, []]));
  for (let round = 0; round < RUNS; round++) {
    for (const name of shuffle(Object.keys(cases))) times[name].push(await timed(cases[name]));
  }

  const load = os.loadavg()[0].toFixed(1);
  console.log(
    `${RUNS} runs per case, ${LINES}-line files, load ${load} on ${os.cpus().length} cores`,
  );
  const py = firstPy === undefined ? "" : `, pyright ${firstPy.toFixed(0)} ms`;
  console.log(
    `first check (server start) — TypeScript ${firstTs.toFixed(0)} ms (its own project's first ${firstCheck.toFixed(0)} ms)${py}`,
  );
  const baseline = median(times[EDIT]);
  const tscMedian = median(times[TSC]);
  for (const [name, values] of Object.entries(times)) {
    const med = median(values);
    const versus =
      name === EDIT || name === TSC
        ? ""
        : name === CHECK
          ? `, ${(tscMedian / med).toFixed(1)}x faster than tsc (${(med / tscMedian).toFixed(2)} of its time)`
          : `, adds ${(med - baseline).toFixed(1)} ms (${(med / baseline).toFixed(1)}x the baseline)`;
    console.log(
      `${name.padEnd(46)} median ${med.toFixed(1)} ms, p90 ${percentile(values, 90).toFixed(1)} ms${versus}`,
    );
  }
} finally {
  await typeDiagnostics.close();
  await client.close();
  await rm(root, { recursive: true, force: true });
}
