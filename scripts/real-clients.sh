#!/usr/bin/env bash
# The real-client suite: agent CLIs installed from npm at pinned versions (into a cache folder),
# each driven headless against a scripted model on 127.0.0.1 with the built `pleach mcp` as its
# MCP server, asserting that what the CLI hands its model is pleach's text. Needs the build
# (`npx tsc -b`). As root, the tests run in a network namespace of their own with only loopback
# up, so no client can reach anything but the scripted model; otherwise they run as they are.
set -euo pipefail
cd "$(dirname "$0")/.."

cache="${TMPDIR:-/tmp}/pleach-real-clients"
version=2.1.332
prefix="$cache/claude-code-$version"
# Installed before the namespace is entered: the registry is the one network use.
if [ ! -e "$prefix/node_modules/@anthropic-ai/claude-code/cli-wrapper.cjs" ]; then
  npm install --prefix "$prefix" --no-audit --no-fund "@anthropic-ai/claude-code@$version" >/dev/null
fi
run=(npx vitest run --config packages/cli/real-clients/vitest.config.ts "$@")
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null && command -v ip >/dev/null; then
  exec unshare --net -- bash -c 'ip link set lo up && exec "$@"' bash "${run[@]}"
fi
exec "${run[@]}"
