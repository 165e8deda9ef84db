#!/usr/bin/env bash
# Build pleach.mcpb, the bundle Claude Desktop installs with a double click: manifest.json (MCP
# Bundle manifest 0.3, see @anthropic-ai/mcpb) beside server/, where the packed packages are
# installed with their dependencies as npm installs them for a user. Claude Desktop runs
# `node server/node_modules/@pleach/cli/bin/pleach.js mcp --workspace <the folder the user picks>`.
#
#   bash scripts/build-mcpb.sh [OUT]   (default OUT: dist/pleach.mcpb; the packages are built first)
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
out="$(realpath -m "${1:-$repo/dist/pleach.mcpb}")"
version="$(node -p 'require(process.argv[1]).version' "$repo/packages/cli/package.json")"

work="$(mktemp -d "${TMPDIR:-/tmp}/pleach-mcpb-XXXXXX")"
trap 'rm -rf "$work"' EXIT
cd "$repo"
npx tsc -b
mkdir -p "$work/tarballs" "$work/bundle/server"
tarballs=()
for name in core sandbox coding-agent cli; do
  file="$(cd "packages/$name" && npm pack --silent --pack-destination "$work/tarballs" | tail -n 1)"
  tarballs+=("$work/tarballs/$file")
done
# A package.json of its own, so that npm installs into server/node_modules and nowhere else.
echo '{ "name": "pleach-mcpb-server", "private": true }' >"$work/bundle/server/package.json"
npm install --prefix "$work/bundle/server" --omit=dev --no-audit --no-fund --loglevel=error \
  --no-package-lock "${tarballs[@]}"

node - "$work/bundle/manifest.json" "$version" <<'NODE'
const fs = require("node:fs");
const [file, version] = process.argv.slice(2);
const entry = "server/node_modules/@pleach/cli/bin/pleach.js";
const manifest = {
  manifest_version: "0.3",
  name: "pleach",
  display_name: "pleach",
  version,
  description: "Coding-agent tools: read, search and edit files, run commands and tests in a sandbox, bounded.",
  author: { name: "pleach" },
  license: "MIT",
  server: {
    type: "node",
    entry_point: entry,
    mcp_config: {
      command: "node",
      args: [`\${__dirname}/${entry}`, "mcp", "--workspace", "${user_config.workspace}", "--mode", "${user_config.mode}"],
    },
  },
  user_config: {
    workspace: {
      type: "directory",
      title: "Workspace",
      description: "The folder pleach's tools read, change and run commands in.",
      required: true,
    },
    mode: {
      type: "string",
      title: "Mode",
      description: "read-only, workspace-write or danger-full-access.",
      default: "workspace-write",
      required: false,
    },
  },
  compatibility: { platforms: ["darwin", "linux"], runtimes: { node: ">=20.19" } },
  keywords: ["coding-agent", "sandbox", "files", "tests"],
};
fs.writeFileSync(file, `${JSON.stringify(manifest, null, 2)}\n`);
NODE

mkdir -p "$(dirname "$out")"
rm -f "$out"
(cd "$work/bundle" && /usr/bin/zip -qr -X "$out" manifest.json server)
echo "build-mcpb: $out ($(du -h "$out" | cut -f1))"
