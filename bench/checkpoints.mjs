// What a checkpoint costs, as the runtime takes one before each step: client.checkpoints of a
// local sandbox over a generated workspace, against plain git doing the same work on the same
// tree in the same run (`git add -A` into a fresh index of a bare repository outside it, then
// `git write-tree`). Interleaved runs, medians. Needs the build (npx tsc -b).
//
//   node bench/checkpoints.mjs [runs] [files]
//
// Rows:
//   first take         a new workspace's first checkpoint: every file read (a new process's
//                      first step)
//   warm take          the next checkpoint after one file changed (every later step)
//   restore            restoring the checkpoint before that one-file change
//   git first / warm   git add -A + write-tree, first with an empty index, then after the change
import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";

const runs = Number(process.argv[2] ?? 10);
const fileCount = Number(process.argv[3] ?? 5_000);

const { createLocalSandbox } = await import(
  new URL("../packages/sandbox/dist/index.js", import.meta.url).href
).catch((error) => {
  console.error(`cannot load the build (npx tsc -b first): ${error.message}`);
  process.exit(2);
});

/** A workspace of `fileCount` files of about 4 KiB in folders of 50. */
async function makeWorkspace() {
  const root = await realpath(await mkdtemp(path.join(os.tmpdir(), "pleach-bench-cp-")));
  const line = "export const value = 'some source text of a typical line';\n";
  for (let index = 0; index < fileCount; index += 1) {
    const folder = path.join(root, `src/m${Math.floor(index / 50)}`);
    if (index % 50 === 0) await mkdir(folder, { recursive: true });
    await writeFile(path.join(folder, `f${index}.ts`), `// ${index}\n${line.repeat(70)}`);
  }
  return root;
}

const git = (gitDir, root, args) =>
  execFileSync("/usr/bin/git", args, {
    env: {
      PATH: "/usr/bin:/bin",
      GIT_DIR: gitDir,
      GIT_WORK_TREE: root,
      HOME: "/nonexistent",
      GIT_CONFIG_NOSYSTEM: "1",
    },
  });

const timings = { first: [], warm: [], restore: [], gitFirst: [], gitWarm: [] };
const time = async (row, work) => {
  const start = performance.now();
  await work();
  timings[row].push(performance.now() - start);
};

for (let run = 0; run < runs; run += 1) {
  const root = await makeWorkspace();
  const gitDir = await mkdtemp(path.join(os.tmpdir(), "pleach-bench-cp-git-"));
  const client = await createLocalSandbox({ root, mode: "workspace-write" });
  try {
    execFileSync("/usr/bin/git", ["init", "-q", "--bare", gitDir]);
    const first = run % 2 === 0;
    let checkpoint;
    const pleachFirst = async () =>
      time("first", async () => (checkpoint = await client.checkpoints.take("first")));
    const gitFirst = () =>
      time("gitFirst", () => git(gitDir, root, ["add", "-A"]) && git(gitDir, root, ["write-tree"]));
    if (first) {
      await pleachFirst();
      await gitFirst();
    } else {
      await gitFirst();
      await pleachFirst();
    }
    await writeFile(path.join(root, "src/m0/f0.ts"), "// changed\n");
    const pleachWarm = () => time("warm", () => client.checkpoints.take("warm"));
    const gitWarm = () =>
      time("gitWarm", () => git(gitDir, root, ["add", "-A"]) && git(gitDir, root, ["write-tree"]));
    if (first) {
      await pleachWarm();
      await gitWarm();
    } else {
      await gitWarm();
      await pleachWarm();
    }
    await time("restore", () => client.checkpoints.restore(checkpoint.id));
  } finally {
    await client.close();
    await rm(root, { recursive: true, force: true });
    await rm(gitDir, { recursive: true, force: true });
  }
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};
const show = (ms) => `${ms.toFixed(1)} ms`;
const m = Object.fromEntries(Object.entries(timings).map(([row, values]) => [row, median(values)]));
console.log(
  `checkpoints of ${fileCount} files (~${Math.round((fileCount * 4.1) / 1024)} MiB), ${runs} runs, medians:`,
);
console.log(
  `  first take   ${show(m.first)}   git add -A + write-tree, first  ${show(m.gitFirst)}   ratio ${(m.first / m.gitFirst).toFixed(2)}x`,
);
console.log(
  `  warm take    ${show(m.warm)}   git add -A + write-tree, warm   ${show(m.gitWarm)}   ratio ${(m.warm / m.gitWarm).toFixed(2)}x`,
);
console.log(`  restore of a one-file change   ${show(m.restore)}`);
