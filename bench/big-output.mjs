// Memory of the bash tool when a command prints 1 GB: the tool keeps a bounded head and tail of
// the output, so the peak RSS of the process should stay far below the output's size (goal:
// < 100 MB). Each measurement runs in a fresh Node process that does only that, so its
// `process.resourceUsage().maxRSS` is the peak of this one call. The baseline row is the same
// process running `true`: the memory of Node plus the loaded modules.
//
// Run by hand after building: `npx tsc -b && node bench/big-output.mjs [bytes]`.
import { execFile } from "node:child_process";
import { mkdtemp, realpath, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";

const GOAL_MB = 100;

if (process.argv[2] === "--child") {
  await child(process.argv[3]);
} else {
  const bytes = Number(process.argv[2] ?? 1_000_000_000);
  const rows = [];
  for (const [name, command] of [
    ["baseline: `true`", "true"],
    [
      `${bytes.toLocaleString("en-US")} bytes via head|tr`,
      `head -c ${bytes} /dev/zero | tr '\\0' a`,
    ],
    [`${bytes.toLocaleString("en-US")} bytes via yes|head`, `yes | head -c ${bytes}`],
  ]) {
    const result = await measure(command);
    rows.push({
      case: name,
      "output chars": result.outputLength,
      exit: result.exitCode,
      "tool ms": Math.round(result.toolMs),
      "peak RSS MB": (result.maxRssKb / 1024).toFixed(1),
      "heap used MB": (result.heapUsedBytes / 1024 / 1024).toFixed(1),
    });
  }
  console.log(`node ${process.version}; goal: peak RSS < ${GOAL_MB} MB`);
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
  const { createBashTool } = await import("../packages/coding-agent/dist/tools/bash.js");
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
