#!/usr/bin/env bash
# The MCP conformance suite's `dns-rebinding-protection` scenario against `pleach mcp --http`
# (the built CLI: npx tsc -b first). The suite cannot send our bearer token, so it talks to a
# loopback proxy (scripts/mcp-conformance-proxy.mjs) that adds it and forwards everything else,
# Host and Origin included. The suite needs Node 22: it is installed beside this machine's node
# as an npm package, with the suite, at the exact versions below, in a cache folder.
#
#   bash scripts/mcp-conformance.sh [--pleach PATH] [--no-control]
#     --pleach PATH  the pleach launcher to test (default: this checkout's packages/cli/bin/pleach.js)
#     --no-control   skip the control run
#
# First a control run: a server started with --allow-host evil.example.com must fail the scenario's
# rejection check and pass its acceptance check (else the scenario would not be telling us
# anything). Then the real run, with the defaults, must pass both. Ends with a line
# "mcp-conformance: N passed, N failed" (the control and the two checks) and exits non-zero when
# anything failed.
set -euo pipefail
CONFORMANCE_VERSION=0.1.16
NODE22_VERSION=22.23.3
SCENARIO=dns-rebinding-protection

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
node -e 'process.stdout.write(require("node:crypto").randomBytes(32).toString("hex"))' >"$work/token"

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

# run LABEL [pleach mcp flags...]: start the server and the proxy, run the scenario, print its
# report and what our server answered to each check; sets `outcome` to the statuses of the checks
# `localhost-host-rebinding-rejected` and `localhost-host-valid-accepted` (e.g. "SUCCESS SUCCESS"),
# or "broken" when the scenario could not be run.
outcome=""
run() {
  local label="$1"
  shift
  local log="$work/$label" server proxy
  outcome=broken
  node "$pleach" mcp --workspace "$work/workspace" --mode read-only --http 127.0.0.1:0 \
    --token-file "$work/token" "$@" 2>"$log.server" &
  pids+=($!)
  server="$(wait_for "$log.server" 'at (http://[0-9.:]+)/mcp' "$!")" || { stop_all; return 0; }
  node "$repo/scripts/mcp-conformance-proxy.mjs" --target "$server" --token-file "$work/token" \
    >"$log.proxy" &
  pids+=($!)
  proxy="$(wait_for "$log.proxy" '(http://[0-9.:]+)' "$!")" || { stop_all; return 0; }
  echo "== $label: pleach mcp --http 127.0.0.1:0${*:+ $*} (reached through $proxy)"
  "$node22" "$suite" server --url "$proxy/mcp" --scenario "$SCENARIO" -o "$log.out" || true
  stop_all
  local checks
  checks="$(find "$log.out" -name checks.json 2>/dev/null | head -n 1)"
  [[ -n "$checks" ]] || return 0
  outcome="$(node -e '
    const checks = JSON.parse(require("node:fs").readFileSync(process.argv[1], "utf8"));
    const status = (id) => checks.find((check) => check.id === id)?.status ?? "MISSING";
    for (const { id, status, details } of checks) {
      const sent = details?.hostHeader === undefined ? "" : ` Host/Origin ${details.hostHeader}`;
      const answer = details?.statusCode === undefined ? "" : ` -> HTTP ${details.statusCode}`;
      process.stderr.write(`   ${id}: ${status}${sent}${answer}\n`);
    }
    process.stdout.write(`${status("localhost-host-rebinding-rejected")} ${status("localhost-host-valid-accepted")}`);
  ' "$checks" 2>&1 >"$log.outcome")"
  echo "$outcome"
  outcome="$(cat "$log.outcome")"
}

passed=0
failed=0
if [[ $control == 1 ]]; then
  run control --allow-host evil.example.com
  if [[ $outcome == "FAILURE SUCCESS" ]]; then
    echo "== control: failed as it must (its server was told to accept evil.example.com)"
    passed=$((passed + 1))
  else
    echo "mcp-conformance: the control run gave \"$outcome\", not \"FAILURE SUCCESS\": the scenario would not catch a server that accepts any Host" >&2
    failed=$((failed + 1))
  fi
fi
run default
for status in $outcome; do
  if [[ $status == SUCCESS ]]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
done
if [[ $outcome == "SUCCESS SUCCESS" ]]; then
  echo "== default: $SCENARIO passed"
else
  echo "mcp-conformance: $SCENARIO gave \"$outcome\" against pleach mcp --http, not \"SUCCESS SUCCESS\"" >&2
fi
echo "mcp-conformance: $passed passed, $failed failed"
[[ $failed == 0 ]]
