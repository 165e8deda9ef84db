// What the sandbox server adds over loopback: each call through createHttpStreamSandboxProvider
// against the same call on a local client over a folder of the same machine (the baseline: the
// same command wrapper as the server's sandboxes, no warm sandbox, so the difference is the
// transport), measured in the same run, interleaved, as medians and p99s (1 MiB of text, and 1 MiB
// of binary as base64: the wire carries the raw bytes either way); then what a bare Node HTTP
// server and client (node:http, the client library the provider uses) take to move 1 MiB on this
// machine, the floor under any HTTP transport; then the time from `exec` to the first chunk of a
// streaming command's output. Needs the build.
//
//   npx tsc -b && node bench/sandbox-http.mjs [runs] [mode] [server]
//
// mode: workspace-write (default: commands in bubblewrap) or danger-full-access (plain bash,
// which isolates the transport's cost from the OS sandbox's).
// server: process (default: the sandbox server, and the bare HTTP server, run in a process of their
// own, as `pleach sandbox serve` does) or in-process (the server shares the client's event loop, so
// their work cannot overlap).
// Goals: at most 2 ms added to a small call (readFile 1 KiB, exec true); 1 MiB read or written at
// most 2x what bare Node HTTP takes to move it; the first chunk within 50 ms.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, realpath, rm } from "node:fs/promises";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";

const runs = Math.max(50, Number(process.argv[2] ?? 500));
const mode = process.argv[3] ?? "workspace-write";
const serverPlace = process.argv[4] ?? "process";
if (serverPlace !== "process" && serverPlace !== "in-process") {
  console.error(`server must be "process" or "in-process", got ${serverPlace}`);
  process.exit(2);
}
const distURL = new URL("../packages/sandbox/dist/index.js", import.meta.url).href;
const {
  createCommandWrapper,
  createLocalSandbox,
  createSandboxServer,
  createHttpStreamSandboxProvider,
} = await import(distURL).catch((error) => {
  console.error("build first (npx tsc -b):", error.message);
  process.exit(2);
});

function stats(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (fraction) =>
    sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))];
  return { median: at(0.5), p99: at(0.99) };
}

const folder = await realpath(await mkdtemp(path.join(os.tmpdir(), "pleach-bench-http-")));
const token = randomBytes(24).toString("hex");
const server =
  serverPlace === "in-process"
    ? await createSandboxServer({ root: path.join(folder, "server"), token, mode })
    : await serverProcess(
        `const { createSandboxServer } = await import(${JSON.stringify(distURL)});
         const server = await createSandboxServer(${JSON.stringify({ root: path.join(folder, "server"), token, mode })});
         ready(server.url);`,
      );
const provider = createHttpStreamSandboxProvider({
  baseURL: server.url,
  auth: () => ({ headers: { Authorization: `Bearer ${token}` } }),
});
try {
  const session = await provider.acquire();
  const remote = session.client;
  const localRoot = path.join(folder, "local");
  await (await import("node:fs/promises")).mkdir(localRoot);
  const local = await createLocalSandbox({
    root: localRoot,
    mode,
    commandWrapper: createCommandWrapper({ warmSandbox: false }),
  });
  const small = "x".repeat(1024);
  // 1 MiB of text, and 1 MiB of binary given and read as base64 (the wire carries raw bytes).
  const big = randomBytes(768 * 1024).toString("base64");
  const binary = randomBytes(1024 * 1024).toString("base64");
  const base64 = { encoding: "base64" };
  for (const client of [local, remote]) {
    await client.writeFile("small.txt", small);
    await client.writeFile("big.txt", big);
    await client.writeFile("binary.bin", binary, base64);
  }
  const cases = {
    "readFile 1 KiB": (client) => client.readFile("small.txt"),
    "writeFile 1 KiB": (client) => client.writeFile("small.txt", small),
    "readFile 1 MiB": (client) => client.readFile("big.txt"),
    "writeFile 1 MiB": (client) => client.writeFile("big.txt", big),
    "readFile 1 MiB base64": (client) => client.readFile("binary.bin", base64),
    "writeFile 1 MiB base64": (client) => client.writeFile("binary.bin", binary, base64),
    "exec true": async (client) => {
      const result = await client.exec("true");
      if (result.exitCode !== 0) throw new Error(`exit ${result.exitCode}: ${result.stderr}`);
    },
  };
  const rows = [];
  const medians = {};
  for (const [name, run] of Object.entries(cases)) {
    const count = name.startsWith("exec") || name.includes("MiB") ? Math.ceil(runs / 5) : runs;
    const times = { local: [], http: [] };
    for (let index = 0; index < 10; index += 1) {
      await run(local);
      await run(remote);
    }
    const order = [
      ["local", local],
      ["http", remote],
    ];
    for (let index = 0; index < count; index += 1) {
      // Alternate who goes first, so neither always runs on a warmer cache.
      for (const [label, client] of index % 2 ? order : [...order].reverse()) {
        const started = performance.now();
        await run(client);
        times[label].push(performance.now() - started);
      }
    }
    const localStats = stats(times.local);
    const httpStats = stats(times.http);
    medians[name] = { local: localStats.median, http: httpStats.median };
    rows.push({
      call: name,
      runs: count,
      "local median ms": localStats.median.toFixed(3),
      "http median ms": httpStats.median.toFixed(3),
      "added median ms": (httpStats.median - localStats.median).toFixed(3),
      "http p99 ms": httpStats.p99.toFixed(3),
      ratio: (httpStats.median / localStats.median).toFixed(2),
    });
  }
  console.log(
    `sandbox server over loopback vs the local client (${mode}, server ${serverPlace}, ${os.cpus().length} CPUs, node ${process.version}, load ${os.loadavg()[0].toFixed(1)})`,
  );
  console.table(rows);
  const bare = await bareHttp(Math.ceil(runs / 5));
  console.log(
    `bare Node HTTP on loopback, 1 MiB from memory, keep-alive: GET median ${bare.get.median.toFixed(3)} ms, PUT median ${bare.put.median.toFixed(3)} ms`,
  );
  const verdict = (ok) => (ok ? "met" : "MISSED");
  for (const name of ["readFile 1 KiB", "exec true"]) {
    const added = medians[name].http - medians[name].local;
    console.log(`goal: ${name} adds <= 2 ms: ${added.toFixed(3)} ms, ${verdict(added <= 2)}`);
  }
  const ratio = medians["readFile 1 MiB"].http / bare.get.median;
  console.log(
    `goal: readFile 1 MiB over HTTP <= 2x a bare Node HTTP GET of 1 MiB: ${ratio.toFixed(2)}x, ${verdict(ratio <= 2)}`,
  );
  // A write pays for the disk on both sides: what the transport adds is set against a bare PUT.
  for (const name of ["writeFile 1 MiB", "writeFile 1 MiB base64"]) {
    const added = medians[name].http - medians[name].local;
    console.log(
      `${name}: HTTP adds ${added.toFixed(3)} ms over the local client, ${(added / bare.put.median).toFixed(2)}x a bare Node HTTP PUT of 1 MiB`,
    );
  }

  const firstChunk = [];
  const whole = [];
  const execTrue = [];
  for (let index = 0; index < Math.ceil(runs / 10); index += 1) {
    const started = performance.now();
    let first;
    await remote.exec("echo start; sleep 0.2; echo end", {
      onOutput: () => {
        first ??= performance.now() - started;
      },
    });
    whole.push(performance.now() - started);
    firstChunk.push(first);
    const baseline = performance.now();
    await local.exec("true");
    execTrue.push(performance.now() - baseline);
  }
  const chunk = stats(firstChunk);
  console.log(
    `first output chunk of "echo start; sleep 0.2; echo end" over HTTP: median ${chunk.median.toFixed(1)} ms, p99 ${chunk.p99.toFixed(1)} ms (whole command ${stats(whole).median.toFixed(1)} ms; a local "exec true", start to exit, ${stats(execTrue).median.toFixed(1)} ms)`,
  );
  await session.release();
} finally {
  provider.close();
  await server.close();
  await rm(folder, { recursive: true, force: true });
}

/**
 * Run `script` (an ES module body that calls `ready(url)` and then serves) in a node process of
 * its own; resolves to `{ url, close() }` once it is ready.
 */
function serverProcess(script) {
  const child = spawn(
    process.execPath,
    [
      "--input-type=module",
      "-e",
      `const ready = (url) => process.stdout.write(url + "\\n");\n${script}`,
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  return new Promise((resolve, reject) => {
    let text = "";
    child.once("exit", (code) => reject(new Error(`the server process exited (${code})`)));
    child.stdout.on("data", (chunk) => {
      text += chunk;
      if (!text.includes("\n")) return;
      resolve({
        url: text.trim(),
        close: () =>
          new Promise((done) => {
            child.removeAllListeners("exit");
            child.once("exit", done);
            child.kill("SIGTERM");
          }),
      });
    });
  });
}

/** The bare server's handler: `payload` for a GET, nothing for anything else, once read whole. */
function bareHandler(payload) {
  return (request, response) => {
    request.resume();
    request.on("end", () => {
      const body = request.method === "GET" ? payload : Buffer.alloc(0);
      response.writeHead(200, { "content-length": body.length });
      response.end(body);
    });
  };
}

/** A bare `http` server and keep-alive client moving 1 MiB each way: the cost of HTTP itself. */
async function bareHttp(count) {
  const payload = randomBytes(1024 * 1024);
  let bareServer;
  let port;
  if (serverPlace === "process") {
    bareServer = await serverProcess(`
      const http = await import("node:http");
      const payload = (await import("node:crypto")).randomBytes(1024 * 1024);
      const server = http.createServer((${bareHandler.toString()})(payload));
      server.listen(0, "127.0.0.1", () => ready("http://127.0.0.1:" + server.address().port));`);
    port = Number(new URL(bareServer.url).port);
  } else {
    bareServer = http.createServer(bareHandler(payload));
    await new Promise((resolve) => bareServer.listen(0, "127.0.0.1", resolve));
    port = bareServer.address().port;
  }
  const agent = new http.Agent({ keepAlive: true });
  const once = (method) =>
    new Promise((resolve, reject) => {
      const request = http.request({ host: "127.0.0.1", port, method, agent }, (response) => {
        const bytes = Buffer.allocUnsafe(Number(response.headers["content-length"]));
        let filled = 0;
        response.on("data", (chunk) => {
          filled += chunk.copy(bytes, filled);
        });
        response.on("end", resolve);
      });
      request.on("error", reject);
      request.end(method === "PUT" ? payload : undefined);
    });
  const times = { GET: [], PUT: [] };
  try {
    for (let index = 0; index < count + 10; index += 1) {
      for (const method of ["GET", "PUT"]) {
        const started = performance.now();
        await once(method);
        if (index >= 10) times[method].push(performance.now() - started);
      }
    }
  } finally {
    agent.destroy();
    bareServer.close();
  }
  return { get: stats(times.GET), put: stats(times.PUT) };
}
