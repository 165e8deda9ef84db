// Memory of the bash tool when a command prints 1 GB: the tool keeps a bounded head and tail of
// the output, so the peak RSS of the process must not grow with the output's size. Each
// measurement runs in a fresh Node process that does only that, so its
// `process.resourceUsage().maxRSS` is the peak of this one call. The baseline row is the same
// process running `true`: the memory of Node plus the loaded modules. Output is read through
// plain pipes, into a fresh buffer per read, which V8 frees once about 32-64 MB of them are
// garbage: the goal is a peak under 64 MB above the baseline, whatever the size (try 4000000000).
//
// Run by hand after building: `npx tsc -b && node bench/big-output.mjs [bytes]`.
import { execFile } from "node:child_process";
import { mkdtemp, realpath, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";

const GOAL_ABOVE_BASELINE_MB = 64;

if (process.argv[2] === "--child") {
  await child(process.argv[3]);
} else {
  const bytes = Number(process.argv[2] ?? 1_000_000_000);
  const rows = [];
  let baselineKb;
  for (const [name, command] of [
    ["baseline: `true`", "true"],
    [
      `${bytes.toLocaleString("en-US")} bytes via head|tr`,
      `head -c ${bytes} /dev/zero | tr '\\0' a`,
    ],
    [`${bytes.toLocaleString("en-US")} bytes via yes|head`, `yes | head -c ${bytes}`],
  ]) {
    const result = await measure(command);
    baselineKb ??= result.maxRssKb;
    rows.push({
      case: name,
      "output chars": result.outputLength,
      exit: result.exitCode,
      "tool ms": Math.round(result.toolMs),
      "peak RSS MB": (result.maxRssKb / 1024).toFixed(1),
      "above baseline MB": ((result.maxRssKb - baselineKb) / 1024).toFixed(1),
      "heap used MB": (result.heapUsedBytes / 1024 / 1024).toFixed(1),
    });
  }
  console.log(
    `node ${process.version}; goal: peak RSS < ${GOAL_ABOVE_BASELINE_MB} MB above the baseline`,
  );
  console.table(rows);
}

function measure(command) {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [fileURLToPath(import.meta.url), "--child", command],
      { maxBuffer: 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`${error.message}\n${stderr}`));
        else resolve(JSON.parse(stdout));
      },
    );
  });
}

async function child(command) {
  const { createBashTool } = await import("../packages/coding-agent/dist/tools/bash/tool.js");
  const { createLocalSandbox } = await import("../packages/sandbox/dist/index.js");
  const root = await realpath(await mkdtemp(path.join(os.tmpdir(), "pleach-bench-")));
  try {
    const client = await createLocalSandbox({ root, mode: "danger-full-access" });
    const bash = createBashTool(client);
    const started = performance.now();
    const output = await bash.execute({ command, timeout: 600_000 });
    const toolMs = performance.now() - started;
    process.stdout.write(
      JSON.stringify({
        outputLength: output.output.length,
        exitCode: output.exitCode,
        toolMs,
        maxRssKb: process.resourceUsage().maxRSS,
        heapUsedBytes: process.memoryUsage().heapUsed,
      }),
    );
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}
