// What the kept caches save: `go build` of a small module (a large generated vendored dependency
// and a few packages of the standard library) run twice through createLocalSandbox in workspace-write,
// each run in a fresh workspace with a fresh, empty user cache folder. The first build fills the
// workspace's cache; the second finds it there. The baseline, measured in the same run, is the
// same second build with caches off and GOCACHE in the private /tmp (the way out before kept
// caches, where every command starts cold). Prints the medians. Needs the build (npx tsc -b),
// a working /usr/bin/bwrap and go on PATH.
//
//   node bench/caches.mjs [runs]
import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";

const runs = Number(process.argv[2] ?? 5);
const { createCommandWrapper, createLocalSandbox } = await import(
  new URL("../packages/sandbox/dist/index.js", import.meta.url).href
);

/** A dependency big enough that compiling it, not linking, is most of a cold build. */
function generatedDependency(count) {
  const lines = ["package dep", "", 'import "strings"', ""];
  for (let index = 0; index < count; index += 1) {
    lines.push(
      `func f${index}(text string) string {`,
      `\tparts := strings.Split(text+"${index}", ",")`,
      "\tfor i := range parts {",
      `\t\tparts[i] = strings.Repeat(parts[i], ${(index % 3) + 1})`,
      "\t}",
      '\treturn strings.Join(parts, ";")',
      "}",
    );
  }
  lines.push(
    "",
    "// Shout is upper case.",
    `func Shout(text string) string { return strings.ToUpper(f${count - 1}(text)) + "!" }`,
    "",
  );
  return lines.join("\n");
}

const files = {
  "go.mod": "module example.com/app\n\ngo 1.19\n\nrequire example.com/dep v0.1.0\n",
  "vendor/modules.txt": "# example.com/dep v0.1.0\n## explicit\nexample.com/dep\n",
  "vendor/example.com/dep/dep.go": generatedDependency(2_000),
  "main.go": [
    "package main",
    "",
    "import (",
    '\t"crypto/tls"',
    '\t"encoding/json"',
    '\t"fmt"',
    '\t"net/http"',
    '\t"text/template"',
    "",
    '\t"example.com/dep"',
    ")",
    "",
    "func main() {",
    '\tout, _ := json.Marshal(map[string]any{"shout": dep.Shout("hi"), "ok": http.StatusOK, "tls": tls.VersionTLS13})',
    '\tfmt.Println(string(out), template.HTMLEscapeString("<b>"))',
    "}",
    "",
  ].join("\n"),
};

async function fresh(prefix) {
  return realpath(await mkdtemp(path.join(os.tmpdir(), prefix)));
}

/** Milliseconds `command` takes in `sandbox`, failing loudly when it fails. */
async function timed(sandbox, command, env = {}) {
  const started = performance.now();
  const result = await sandbox.exec(command, { env, timeoutMs: 600_000 });
  const elapsed = performance.now() - started;
  if (result.exitCode !== 0) {
    throw new Error(`${command} failed (${result.exitCode}):\n${result.stdout}${result.stderr}`);
  }
  return elapsed;
}

const median = (values) => {
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.floor(sorted.length / 2)];
};

const rows = { first: [], second: [], baseline: [] };
for (let run = 0; run < runs; run += 1) {
  const root = await fresh("pleach-bench-caches-root-");
  const userCache = await fresh("pleach-bench-caches-user-");
  try {
    for (const [name, text] of Object.entries(files)) {
      await mkdir(path.dirname(path.join(root, name)), { recursive: true });
      await writeFile(path.join(root, name), text);
    }
    const hostEnvironment = { ...process.env, XDG_CACHE_HOME: userCache };
    const cached = await createLocalSandbox({
      root,
      commandWrapper: createCommandWrapper({ hostEnvironment }),
    });
    const off = await createLocalSandbox({
      root,
      commandWrapper: createCommandWrapper({ hostEnvironment, caches: false }),
    });
    // The first command of a wrapper probes the host and walks the workspace: not the build's.
    await timed(cached, "true");
    await timed(off, "true");
    const build = "rm -f app && go build -o app . && ./app >/dev/null";
    rows.first.push(await timed(cached, build));
    rows.second.push(await timed(cached, build));
    rows.baseline.push(await timed(off, build, { GOCACHE: "/tmp/go-build" }));
    await cached.close?.();
    await off.close?.();
  } finally {
    await rm(root, { recursive: true, force: true });
    await rm(userCache, { recursive: true, force: true });
  }
}

const baseline = median(rows.baseline);
console.log(
  `go build of a module with a 2,000-function vendored dependency, ${runs} runs, medians (node ${process.version})`,
);
console.table(
  [
    ["caches off, GOCACHE in /tmp (baseline)", rows.baseline],
    ["kept caches, first build (empty cache)", rows.first],
    ["kept caches, second build", rows.second],
  ].map(([build, times]) => ({
    build,
    "median ms": Math.round(median(times)),
    "vs baseline": (median(times) / baseline).toFixed(2),
  })),
);
