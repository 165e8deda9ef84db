#!/usr/bin/env bash
# Run a command with another Node first on PATH: `bash scripts/with-node.sh 22.23.3 npx vitest run`.
# That Node comes from the npm registry's `node` package at exactly that version, installed once
# into node_modules/.cache/pleach-node/<version> (the registry is the only network CI has).
set -euo pipefail
version="$1"
shift
cd "$(dirname "$0")/.."
prefix="node_modules/.cache/pleach-node/$version"
if [ ! -x "$prefix/node_modules/node/bin/node" ]; then
  mkdir -p "$prefix"
  echo "{\"private\":true,\"allowScripts\":{\"node@$version\":true}}" >"$prefix/package.json"
  npm install --prefix "$prefix" --no-save --no-audit --no-fund --no-package-lock \
    "node@$version" >/dev/null
fi
bin="$(cd "$prefix/node_modules/node/bin" && pwd)"
actual="$("$bin/node" --version)"
[ "$actual" = "v$version" ] || { echo "with-node.sh: wanted Node v$version, got $actual" >&2; exit 1; }
PATH="$bin:$PATH" exec "$@"
