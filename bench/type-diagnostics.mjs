// What the type check (`diagnostics: "types"`) adds to edit_file, on a 2,000-line TypeScript file
// and a 2,000-line Python file, measured in one run over one session sandbox:
//   edit_file without the type check, of the same TypeScript file     — the baseline
//   edit_file with it, a warm typescript-language-server in the session's sandbox, each edit
//     making a type error or fixing it (the result is checked to say so)
//   the same for Python, through a warm pyright
// Each server's first check (its start: the project and the language's library loaded) is
// reported apart. Then rounds run the cases in an order shuffled each round.
//
// Needs bubblewrap (a session sandbox) and the CLI's optional dependencies installed in the
// monorepo (`npm ci` installs them). Run by hand after building:
//   npx tsc -b && node bench/type-diagnostics.mjs [runs]
// Goal: a warm server's answer within 1 s for a file of 2,000 lines (the median added).
import { mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { createCodingAgentTools } from "../packages/coding-agent/dist/tools/coding-agent-tools.js";
import { createTypeDiagnostics } from "../packages/coding-agent/dist/tools/type-diagnostics/type-diagnostics.js";
import { createLocalSandbox } from "../packages/sandbox/dist/index.js";

const RUNS = Math.max(10, Number(process.argv[2] ?? 30));
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
  const timed = async (run) => {
    const started = performance.now();
    await run();
    return performance.now() - started;
  };

  const cases = {
    "edit_file, no type check (plain.ts)": () => edit(plain, "plain.ts", "ts", false),
    "edit_file + TypeScript check (big.ts, warm)": () => edit(checked, "big.ts", "ts", true),
    "edit_file + pyright check (big.py, warm)": () => edit(checked, "big.py", "py", true),
  };
  for (let index = 0; index < 3; index++) await cases["edit_file, no type check (plain.ts)"]();
  const firstTs = await timed(cases["edit_file + TypeScript check (big.ts, warm)"]);
  const firstPy = await timed(cases["edit_file + pyright check (big.py, warm)"]);
  for (let index = 0; index < 3; index++) {
    await cases["edit_file + TypeScript check (big.ts, warm)"]();
    await cases["edit_file + pyright check (big.py, warm)"]();
  }
  const times = Object.fromEntries(Object.keys(cases).map((name) => [name, []]));
  for (let round = 0; round < RUNS; round++) {
    for (const name of shuffle(Object.keys(cases))) times[name].push(await timed(cases[name]));
  }

  const load = os.loadavg()[0].toFixed(1);
  console.log(
    `${RUNS} runs per case, ${LINES}-line files, load ${load} on ${os.cpus().length} cores`,
  );
  console.log(
    `first check (server start) — TypeScript ${firstTs.toFixed(0)} ms, pyright ${firstPy.toFixed(0)} ms`,
  );
  const baseline = median(times["edit_file, no type check (plain.ts)"]);
  for (const [name, values] of Object.entries(times)) {
    const med = median(values);
    const added = name.includes("no type check")
      ? ""
      : `, adds ${(med - baseline).toFixed(1)} ms (${(med / baseline).toFixed(1)}x the baseline)`;
    console.log(
      `${name.padEnd(46)} median ${med.toFixed(1)} ms, p90 ${percentile(values, 90).toFixed(1)} ms${added}`,
    );
  }
} finally {
  await typeDiagnostics.close();
  await client.close();
  await rm(root, { recursive: true, force: true });
}
