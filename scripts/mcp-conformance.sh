#!/usr/bin/env bash
# Every server scenario of the MCP conformance suite against `pleach mcp`, over stdio and over
# Streamable HTTP (the built CLI: npx tsc -b first). The suite speaks only HTTP and cannot send our
# bearer token, so it talks to a loopback proxy (scripts/mcp-conformance-proxy.mjs): for HTTP it
# adds the token and forwards everything else, Host and Origin included; for stdio it runs
# `pleach mcp` as a child per session, as a host does. The suite calls fixture tools that only its
# reference server has; the proxy turns those into the pleach calls that test the same feature.
# The suite needs Node 22: it is installed beside this machine's node as an npm package, with the
# suite, at the exact versions below, in a cache folder.
#
#   bash scripts/mcp-conformance.sh [--pleach PATH] [--no-control]
#     --pleach PATH  the pleach launcher to test (default: this checkout's packages/cli/bin/pleach.js)
#     --no-control   skip the control run
#
# First a control run: a server started with --allow-host evil.example.com must fail the
# dns-rebinding-protection scenario's rejection check and pass its acceptance check (else the
# scenario would not be telling us anything). Then every server scenario the suite lists, once over
# each transport. Prints a table (scenario, stdio, HTTP: pass, FAIL, not offered, n/a) and exits
# non-zero when a scenario about what pleach offers fails (or the control does not).
set -euo pipefail
CONFORMANCE_VERSION=0.1.16
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

tools="${PLEACH_CONFORMANCE_CACHE:-${TMPDIR:-/tmp}/pleach-mcp-conformance-$CONFORMANCE_VERSION-node-$NODE22_VERSION}"
node22="$tools/node_modules/.bin/node"
suite="$tools/node_modules/@modelcontextprotocol/conformance/dist/index.js"
if [[ ! -f "$suite" || "$("$node22" --version 2>/dev/null)" != "v$NODE22_VERSION" ]]; then
  echo "mcp-conformance: installing @modelcontextprotocol/conformance@$CONFORMANCE_VERSION and node@$NODE22_VERSION in $tools"
  mkdir -p "$tools"
  npm install --prefix "$tools" --no-audit --no-fund --loglevel=error \
    "@modelcontextprotocol/conformance@$CONFORMANCE_VERSION" "node@$NODE22_VERSION" >/dev/null
fi
[[ "$("$node22" --version)" == "v$NODE22_VERSION" ]] || {
  echo "mcp-conformance: $node22 is not Node $NODE22_VERSION" >&2
  exit 1
}

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
  "$node22" "$suite" server --url "$proxy/mcp" --scenario dns-rebinding-protection \
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

for transport in stdio http; do
  flags="${serve[*]}"
  [[ $transport == http ]] && flags+=" --http 127.0.0.1:0 --token-file FILE"
  echo "== $transport: every server scenario against pleach $flags"
  start_proxy "$transport" "$transport"
  "$node22" "$suite" server --url "$proxy/mcp" --suite all -o "$work/$transport.out" \
    >"$work/$transport.log" 2>&1 || true
  stop_all
done

"$node22" "$suite" list --server >"$work/scenarios"
node - "$work" <<'EOF' || failed=1
const fs = require("node:fs");
const path = require("node:path");
const work = process.argv[2];
// What pleach does not offer, and why; every other scenario must pass on both transports.
const reasons = {
  resources: "pleach offers tools only: no resources",
  prompts: "pleach offers tools only: no prompts",
  completion: "no prompts or resource templates to complete",
  media: "results are text (a binary file is read as base64 text), one block",
  sampling: "pleach never asks the client's model",
  elicitation: "pleach never asks the user",
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
};
// Scenarios about one transport only.
const httpOnly = new Set(["dns-rebinding-protection"]);

const listed = fs.readFileSync(path.join(work, "scenarios"), "utf8");
const scenarios = [...listed.split(/\n\s*\n/)[0].matchAll(/^\s+- (\S+)/gm)].map((m) => m[1]);
function outcome(transport, scenario) {
  const dir = path.join(work, `${transport}.out`);
  const match = fs
    .readdirSync(dir)
    .find((name) => name.startsWith(`server-${scenario}-`) && /^\d/.test(name.slice(scenario.length + 8)));
  if (match === undefined) return "missing";
  // A scenario this script does not know may run no checks at all (one for a protocol revision
  // the server was not asked about): it is listed as such, not crashed on.
  const file = path.join(dir, match, "checks.json");
  if (!fs.existsSync(file)) return "no checks";
  const checks = JSON.parse(fs.readFileSync(file, "utf8"));
  const failed = checks.filter((check) => check.status === "FAILURE");
  for (const check of failed) errors.push(`${scenario} over ${transport}: ${check.id}: ${check.errorMessage}`);
  if (failed.length > 0) return "FAIL";
  return checks.some((check) => check.status === "SUCCESS") ? "pass" : "no checks";
}
const rows = [];
const errors = [];
let failures = 0;
for (const scenario of scenarios) {
  const kind = notOffered[scenario] ?? (scenario.startsWith("resources-") ? "resources" : undefined);
  const reason = reasons[kind ?? (scenario.startsWith("prompts-") ? "prompts" : "")];
  const cells = ["stdio", "http"].map((transport) => {
    if (transport === "stdio" && httpOnly.has(scenario)) return "n/a";
    const errorsBefore = errors.length;
    const result = outcome(transport, scenario);
    if (reason !== undefined) {
      errors.length = errorsBefore;
      return "not offered";
    }
    if (result !== "pass" && result !== "no checks") failures += 1;
    return result;
  });
  rows.push([scenario, ...cells, reason ?? ""]);
}
const header = ["scenario", "stdio", "HTTP", "why not offered"];
const widths = header.map((title, column) =>
  Math.max(title.length, ...rows.map((row) => row[column].length)),
);
const line = (row) => row.map((cell, column) => cell.padEnd(widths[column])).join("  ").trimEnd();
console.log(line(header));
for (const row of rows) console.log(line(row));
const offered = rows.filter((row) => row[3] === "").length;
const unchecked = rows.filter((row) => row.includes("no checks")).map((row) => row[0]);
if (unchecked.length > 0) console.log(`mcp-conformance: no checks ran in ${unchecked.join(", ")}`);
console.log(
  `mcp-conformance: ${scenarios.length} scenarios, ${offered} about what pleach offers, ${failures} failed (stdio and HTTP)`,
);
for (const error of errors) console.error(`  ${error}`);
process.exit(failures === 0 ? 0 : 1);
EOF
if [[ $failed != 0 ]]; then
  echo "mcp-conformance: failed (rerun one scenario by hand with the suite's --scenario NAME)" >&2
fi
[[ $failed == 0 ]]
