// Memory of `read_file` refusing a file too large to return: 8 concurrent calls on a 95 MB file,
// in base64 and in utf8, through the real tool over `createLocalSandbox`. A refusal should cost
// about nothing: the size is known from `fstat` before a byte is read. Each case runs in a fresh
// Node process that does only that, so its `process.resourceUsage().maxRSS` is the peak of those
// calls; the baseline is the same process just before the calls (Node, the loaded modules, the
// sandbox and one small read done). `sampled` is `process.memoryUsage().rss` read every 2 ms while
// the calls run: it misses what happens while the event loop is blocked (a decode), maxRSS does not.
// Every call is checked to have been refused with `TOO_LARGE`; the script exits 1 when one was not.
//
// Run by hand after building: `npx tsc -b && node bench/read-large.mjs [bytes] [calls]`.
import { execFile } from "node:child_process";
import { mkdtemp, open, realpath, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";

const FILE = "large.txt";

if (process.argv[2] === "--child") {
  await child(process.argv[3], process.argv[4], Number(process.argv[5]));
} else {
  const bytes = Number(process.argv[2] ?? 95_000_000);
  const calls = Number(process.argv[3] ?? 8);
  const root = await realpath(await mkdtemp(path.join(os.tmpdir(), "pleach-bench-")));
  try {
    await writeText(path.join(root, FILE), bytes);
    const rows = [];
    let allRefused = true;
    for (const encoding of ["base64", "utf8"]) {
      const result = await measure(root, encoding, calls);
      allRefused &&= result.outcomes.TOO_LARGE === calls;
      const mb = (value) => (value / 1024 / 1024).toFixed(1);
      rows.push({
        case: `${calls} x read_file ${encoding}`,
        outcomes: Object.entries(result.outcomes)
          .map(([outcome, count]) => `${outcome} ${count}`)
          .join(", "),
        "calls ms": Math.round(result.callsMs),
        "baseline RSS MB": mb(result.baselineRss),
        "sampled peak MB": mb(result.sampledPeakRss),
        "maxRSS MB": mb(result.maxRssKb * 1024),
        "maxRSS / baseline": ((result.maxRssKb * 1024) / result.baselineRss).toFixed(2),
        "added MB": mb(result.maxRssKb * 1024 - result.baselineRss),
      });
    }
    console.log(
      `node ${process.version}; a ${bytes.toLocaleString("en-US")}-byte text file, ${calls} concurrent calls per case`,
    );
    console.table(rows);
    if (!allRefused) {
      console.log("NOT every call was refused with TOO_LARGE");
      process.exitCode = 1;
    }
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

/** Source-like text, written a megabyte at a time so this process holds no copy of the file. */
async function writeText(file, bytes) {
  const line = `${"const value = compute(alpha, beta, gamma); // a comment".padEnd(63, " ")}\n`;
  const chunk = Buffer.from(line.repeat(Math.ceil((1024 * 1024) / line.length)));
  const handle = await open(file, "w");
  try {
    for (let written = 0; written < bytes; written += chunk.length) {
      await handle.write(chunk, 0, Math.min(chunk.length, bytes - written));
    }
  } finally {
    await handle.close();
  }
}

function measure(root, encoding, calls) {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [fileURLToPath(import.meta.url), "--child", root, encoding, String(calls)],
      { maxBuffer: 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`${error.message}\n${stderr}`));
        else resolve(JSON.parse(stdout));
      },
    );
  });
}

async function child(root, encoding, calls) {
  const { createReadFileTool } = await import(
    "../packages/coding-agent/dist/tools/read-file/tool.js"
  );
  const { createLocalSandbox } = await import("../packages/sandbox/dist/index.js");
  const { writeFile } = await import("node:fs/promises");
  const client = await createLocalSandbox({ root, mode: "read-only" });
  const tool = createReadFileTool(client);
  // One small read first, so the baseline holds the code paths and buffers a read uses.
  await writeFile(path.join(root, `small-${encoding}.txt`), "small\n");
  await tool.execute({ path: `small-${encoding}.txt`, encoding });
  const baselineRss = process.memoryUsage().rss;
  let sampledPeakRss = baselineRss;
  const sampler = setInterval(() => {
    sampledPeakRss = Math.max(sampledPeakRss, process.memoryUsage().rss);
  }, 2);
  const started = performance.now();
  const settled = await Promise.allSettled(
    Array.from({ length: calls }, () => tool.execute({ path: FILE, encoding })),
  );
  const callsMs = performance.now() - started;
  clearInterval(sampler);
  sampledPeakRss = Math.max(sampledPeakRss, process.memoryUsage().rss);
  const outcomes = {};
  for (const outcome of settled) {
    const name = outcome.status === "fulfilled" ? "returned" : (outcome.reason?.code ?? "thrown");
    outcomes[name] = (outcomes[name] ?? 0) + 1;
  }
  process.stdout.write(
    JSON.stringify({
      outcomes,
      callsMs,
      baselineRss,
      sampledPeakRss,
      maxRssKb: process.resourceUsage().maxRSS,
    }),
  );
}
