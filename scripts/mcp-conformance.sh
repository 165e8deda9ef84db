#!/usr/bin/env bash
# Every server scenario of the MCP conformance suite against `pleach mcp`, on two lines of the suite
# (0.1.x: the 2025 revisions, every scenario; 0.2.x with --requirements 2026-07-28: the stateless
# revision), each over stdio and over Streamable HTTP (the built CLI: npx tsc -b first). The suite
# speaks only HTTP and cannot send our bearer token, so it talks to a loopback proxy
# (scripts/mcp-conformance-proxy.mjs): for HTTP it adds the token and forwards everything else,
# Host and Origin included; for stdio it runs `pleach mcp` as a child per session (per
# server/discover for 2026-07-28), as a host does. The suite calls fixture tools that only its
# reference server has; the proxy turns those into the pleach calls that test the same feature.
# The suite needs Node 22: it is installed beside this machine's node as an npm package, with the
# suites, at the exact versions below, in a cache folder per line.
#
#   bash scripts/mcp-conformance.sh [--pleach PATH] [--no-control]
#     --pleach PATH  the pleach launcher to test (default: this checkout's packages/cli/bin/pleach.js)
#     --no-control   skip the control run
#
# First a control run: a server started with --allow-host evil.example.com must fail the
# dns-rebinding-protection scenario's rejection check and pass its acceptance check (else the
# scenario would not be telling us anything). Then every server scenario of each line, once over
# each transport. Prints a table (scenario; 2025 line stdio, HTTP; 2026-07-28 line stdio, HTTP:
# pass, FAIL, not offered, n/a, - when the line has no such scenario, no checks) and exits non-zero
# when a scenario about what pleach offers fails (or the control does not). A scenario the script
# does not know is run and listed like any other; one that ran no checks is listed as such.
set -euo pipefail
CONFORMANCE_2025=0.1.16
CONFORMANCE_2026=0.2.0-alpha.12
NODE22_VERSION=22.23.3

repo="$(cd "$(dirname "$0")/.." && pwd)"
pleach="$repo/packages/cli/bin/pleach.js"
control=1
while [[ $# -gt 0 ]]; do
  case "$1" in
    --pleach) pleach="$(realpath "$2")"; shift 2 ;;
    --no-control) control=0; shift ;;
    *) echo "usage: bash scripts/mcp-conformance.sh [--pleach PATH] [--no-control]" >&2; exit 2 ;;
  esac
done
[[ -f "$(dirname "$pleach")/../dist/main.js" ]] || {
  echo "mcp-conformance: build first (npx tsc -b): $(dirname "$pleach")/../dist is missing" >&2
  exit 2
}

# install_suite VERSION: the suite at VERSION and Node 22 in their cache folder; prints the folder.
install_suite() {
  local version="$1"
  local tools="${PLEACH_CONFORMANCE_CACHE:-${TMPDIR:-/tmp}}/pleach-mcp-conformance-$version-node-$NODE22_VERSION"
  if [[ ! -f "$tools/node_modules/@modelcontextprotocol/conformance/dist/index.js" ||
    "$("$tools/node_modules/.bin/node" --version 2>/dev/null)" != "v$NODE22_VERSION" ]]; then
    echo "mcp-conformance: installing @modelcontextprotocol/conformance@$version and node@$NODE22_VERSION in $tools" >&2
    mkdir -p "$tools"
    npm install --prefix "$tools" --no-audit --no-fund --loglevel=error \
      "@modelcontextprotocol/conformance@$version" "node@$NODE22_VERSION" >/dev/null
  fi
  [[ "$("$tools/node_modules/.bin/node" --version)" == "v$NODE22_VERSION" ]] || {
    echo "mcp-conformance: $tools/node_modules/.bin/node is not Node $NODE22_VERSION" >&2
    return 1
  }
  echo "$tools"
}
tools2025="$(install_suite "$CONFORMANCE_2025")"
tools2026="$(install_suite "$CONFORMANCE_2026")"
node22="$tools2025/node_modules/.bin/node"
suite_of() { echo "$1/node_modules/@modelcontextprotocol/conformance/dist/index.js"; }

work="$(mktemp -d "${TMPDIR:-/tmp}/pleach-mcp-conformance-XXXXXX")"
pids=()
stop_all() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  pids=()
}
trap 'stop_all; rm -rf "$work"' EXIT
mkdir -p "$work/workspace"
# The file the proxy's stand-in for the suite's test_simple_text reads.
echo "hello from the pleach workspace" >"$work/workspace/hello.txt"
node -e 'process.stdout.write(require("node:crypto").randomBytes(32).toString("hex"))' >"$work/token"
# Read-only, and a short progress interval so that a one-second call reports a few times.
serve=(mcp --workspace "$work/workspace" --mode read-only --progress-interval 0.2)

# Wait for the first line in FILE matching REGEX, and print its first capture group.
wait_for() {
  local file="$1" regex="$2" pid="$3"
  for _ in $(seq 1 200); do
    if [[ -s "$file" ]] && [[ "$(cat "$file")" =~ $regex ]]; then
      echo "${BASH_REMATCH[1]}"
      return 0
    fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
  done
  echo "mcp-conformance: no $regex in $file:" >&2
  cat "$file" >&2
  return 1
}

# start_proxy LABEL TRANSPORT [pleach mcp flags...]: start `pleach mcp` (for http) and the proxy
# in front of it; sets `proxy` to the proxy's URL, or returns non-zero.
proxy=""
start_proxy() {
  local label="$1" transport="$2"
  shift 2
  local log="$work/$label"
  if [[ $transport == http ]]; then
    node "$pleach" "${serve[@]}" --http 127.0.0.1:0 --token-file "$work/token" "$@" \
      2>"$log.server" &
    pids+=($!)
    local server
    server="$(wait_for "$log.server" 'at (http://[0-9.:]+)/mcp' "$!")" || return 1
    node "$repo/scripts/mcp-conformance-proxy.mjs" --target "$server" --token-file "$work/token" \
      >"$log.proxy" &
  else
    node "$repo/scripts/mcp-conformance-proxy.mjs" --stdio -- node "$pleach" "${serve[@]}" "$@" \
      >"$log.proxy" 2>"$log.server" &
  fi
  pids+=($!)
  proxy="$(wait_for "$log.proxy" '(http://[0-9.:]+)' "$!")"
}

failed=0
if [[ $control == 1 ]]; then
  start_proxy control http --allow-host evil.example.com
  "$node22" "$(suite_of "$tools2025")" server --url "$proxy/mcp" --scenario dns-rebinding-protection \
    -o "$work/control.out" >"$work/control.log" 2>&1 || true
  stop_all
  outcome="$(node -e '
    const fs = require("node:fs"), path = require("node:path");
    const [dir] = fs.readdirSync(process.argv[1]);
    const checks = JSON.parse(fs.readFileSync(path.join(process.argv[1], dir, "checks.json"), "utf8"));
    const status = (id) => checks.find((check) => check.id === id)?.status ?? "MISSING";
    process.stdout.write(`${status("localhost-host-rebinding-rejected")} ${status("localhost-host-valid-accepted")}`);
  ' "$work/control.out" 2>/dev/null || echo broken)"
  if [[ $outcome == "FAILURE SUCCESS" ]]; then
    echo "== control: dns-rebinding-protection failed as it must (the server was told to accept evil.example.com)"
  else
    echo "mcp-conformance: the control run gave \"$outcome\", not \"FAILURE SUCCESS\": the scenario would not catch a server that accepts any Host" >&2
    failed=1
  fi
fi

# line NAME TOOLS SUITE-ARGS...: every scenario of one suite line over each transport.
run_line() {
  local line="$1" tools="$2"
  shift 2
  for transport in stdio http; do
    flags="${serve[*]}"
    [[ $transport == http ]] && flags+=" --http 127.0.0.1:0 --token-file FILE"
    echo "== $line line, $transport: every server scenario ($*) against pleach $flags"
    start_proxy "$line-$transport" "$transport"
    "$tools/node_modules/.bin/node" "$(suite_of "$tools")" server --url "$proxy/mcp" "$@" \
      -o "$work/$line-$transport.out" >"$work/$line-$transport.log" 2>&1 || true
    stop_all
  done
  "$tools/node_modules/.bin/node" "$(suite_of "$tools")" list --server >"$work/$line.scenarios"
}
run_line 2025 "$tools2025" --suite all
run_line 2026 "$tools2026" --requirements 2026-07-28

node - "$work" <<'EOF' || failed=1
const fs = require("node:fs");
const path = require("node:path");
const work = process.argv[2];
// What pleach does not offer, and why; every other scenario must pass on every line and transport.
const reasons = {
  resources: "the suite's fixture resources: pleach's only resources are the kept outputs it links",
  prompts: "pleach offers no prompts",
  completion: "no prompts or resource templates to complete",
  media: "results are text (a binary file is read as base64 text), one block",
  sampling: "pleach never asks the client's model",
  elicitation: "pleach never asks the user",
  input: "pleach never asks the client for input (elicitation, sampling, roots)",
  tasks: "no tasks extension: long work runs as a background job (bash background: true)",
  headers: "no tool declares x-mcp-header parameters",
  schema: "the suite's fixture tool with $schema/$defs; pleach's input schemas are flat",
  resume: "SSE resumption (event ids, Last-Event-ID) via the suite's test_reconnection fixture: no event store",
  sessions: "needs an HTTP session id: pleach serves each HTTP request on its own (stdio: tests the bridge)",
};
const notOffered = {
  "completion-complete": "completion",
  "tools-call-image": "media",
  "tools-call-audio": "media",
  "tools-call-embedded-resource": "resources",
  "tools-call-mixed-content": "media",
  "tools-call-sampling": "sampling",
  "tools-call-elicitation": "elicitation",
  "elicitation-sep1034-defaults": "elicitation",
  "elicitation-sep1330-enums": "elicitation",
  "json-schema-2020-12": "schema",
  "server-sse-polling": "resume",
  "server-sse-multiple-streams": "sessions",
  "http-custom-header-server-validation": "headers",
};
const prefixes = { "resources-": "resources", "prompts-": "prompts", "input-required-": "input", "tasks-": "tasks" };
function kindOf(scenario) {
  if (notOffered[scenario] !== undefined) return notOffered[scenario];
  const prefix = Object.keys(prefixes).find((start) => scenario.startsWith(start));
  return prefix === undefined ? undefined : prefixes[prefix];
}
// Scenarios about the HTTP transport only; over stdio the bridge would answer them.
const httpOnly = new Set(["dns-rebinding-protection", "http-header-validation", "http-custom-header-server-validation"]);
// Single checks that do not apply: over stdio, those about HTTP status codes (the bridge's); on any
// transport, a check about prompts (caching) or one the suite says it could not exercise because
// pleach has no such fixture tool (a tool that needs a client capability, that elicits, ...).
function ignoredCheck(transport, check) {
  if (transport === "stdio" && /-http-/.test(check.id)) return "an HTTP status: the bridge's, over stdio";
  if (/prompts/.test(check.id)) return reasons.prompts;
  if (/^Not testable:/.test(check.errorMessage ?? "")) return "the suite's fixture tool: pleach has none like it";
  return undefined;
}

const lines = ["2025", "2026"];
const transports = ["stdio", "http"];
const dirPattern = /^server-(.+)-\d{4}-\d\d-\d\dT[\d-]+Z$/;
const order = [];
const seen = new Set();
const add = (scenario) => {
  if (seen.has(scenario)) return;
  order.push(scenario);
  seen.add(scenario);
};
const listed = fs.readFileSync(path.join(work, "2025.scenarios"), "utf8");
for (const m of listed.split(/\n\s*\n/)[0].matchAll(/^\s+- (\S+)/gm)) add(m[1]);
const ran = {};
for (const line of lines) {
  for (const transport of transports) {
    const dir = path.join(work, `${line}-${transport}.out`);
    const names = fs.existsSync(dir) ? fs.readdirSync(dir).sort((x, y) => x.slice(-24).localeCompare(y.slice(-24))) : [];
    ran[`${line}-${transport}`] = new Map();
    for (const name of names) {
      const match = dirPattern.exec(name);
      if (match === null) continue;
      ran[`${line}-${transport}`].set(match[1], path.join(dir, name));
      add(match[1]);
    }
  }
}
// The 2025 line runs every scenario it lists; the 2026-07-28 line, the ones the revision requires.
const inLine = {
  2025: new Set([...listed.split(/\n\s*\n/)[0].matchAll(/^\s+- (\S+)/gm)].map((m) => m[1])),
  2026: new Set(),
};
for (const transport of transports) for (const scenario of ran[`2026-${transport}`].keys()) inLine[2026].add(scenario);

const errors = [];
const ignored = [];
function outcome(line, transport, scenario) {
  const dir = ran[`${line}-${transport}`].get(scenario);
  if (dir === undefined) return "missing";
  // A scenario this script does not know may run no checks at all: listed as such, not crashed on.
  const file = path.join(dir, "checks.json");
  if (!fs.existsSync(file)) return "no checks";
  const checks = JSON.parse(fs.readFileSync(file, "utf8")).filter((check) => {
    const why = check.status === "FAILURE" ? ignoredCheck(transport, check) : undefined;
    if (why !== undefined) ignored.push(`${scenario} (${line} line, ${transport}): ${check.id}: ${why}`);
    return why === undefined;
  });
  const failedChecks = checks.filter((check) => check.status === "FAILURE");
  for (const check of failedChecks) {
    errors.push(`${scenario} (${line} line, ${transport}): ${check.id}: ${check.errorMessage}`);
  }
  if (failedChecks.length > 0) return "FAIL";
  return checks.some((check) => check.status === "SUCCESS") ? "pass" : "no checks";
}
const rows = [];
let failures = 0;
for (const scenario of order) {
  const kind = kindOf(scenario);
  const reason = kind === undefined ? undefined : reasons[kind];
  const cells = [];
  for (const line of lines) {
    for (const transport of transports) {
      if (!inLine[line].has(scenario)) cells.push("-");
      else if (transport === "stdio" && httpOnly.has(scenario)) cells.push("n/a");
      else {
        const errorsBefore = errors.length;
        const ignoredBefore = ignored.length;
        const result = outcome(line, transport, scenario);
        if (reason !== undefined) {
          errors.length = errorsBefore;
          ignored.length = ignoredBefore;
          cells.push("not offered");
        } else {
          if (result !== "pass" && result !== "no checks") failures += 1;
          cells.push(result);
        }
      }
    }
  }
  rows.push([scenario, ...cells, reason ?? ""]);
}
const header = ["scenario", "2025 stdio", "2025 HTTP", "2026-07-28 stdio", "2026-07-28 HTTP", "why not offered"];
const widths = header.map((title, column) =>
  Math.max(title.length, ...rows.map((row) => row[column].length)),
);
const format = (row) => row.map((cell, column) => cell.padEnd(widths[column])).join("  ").trimEnd();
console.log(format(header));
for (const row of rows) console.log(format(row));
const offered = rows.filter((row) => row.at(-1) === "").length;
const unchecked = rows.filter((row) => row.includes("no checks")).map((row) => row[0]);
if (unchecked.length > 0) console.log(`mcp-conformance: no checks ran in ${unchecked.join(", ")}`);
if (ignored.length > 0) {
  console.log("mcp-conformance: single failed checks that do not apply:");
  for (const line of ignored) console.log(`  ${line}`);
}
console.log(
  `mcp-conformance: ${rows.length} scenarios, ${offered} about what pleach offers, ${failures} failed (two suite lines, stdio and HTTP)`,
);
for (const error of errors) console.error(`  ${error}`);
process.exit(failures === 0 ? 0 : 1);
EOF
if [[ $failed != 0 ]]; then
  echo "mcp-conformance: failed (rerun one scenario by hand with the suite's --scenario NAME)" >&2
fi
[[ $failed == 0 ]]
