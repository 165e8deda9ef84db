#!/usr/bin/env bash
# Release the publishable packages as users get them: build, `npm pack` each, check each tarball
# with publint (warnings are errors), install the tarballs globally into a temporary prefix and run
# `pleach --help` and `pleach mcp` (initialize over stdio) from there. Only with --publish are the
# checked tarballs then published to npm, in dependency order; without it nothing leaves this
# machine, which is how CI runs it.
#
#   bash scripts/release.sh [--publish] [--keep DIR]
#     --publish   npm publish each checked tarball (needs npm login; run by hand at release time)
#     --keep DIR  leave the tarballs in DIR (default: a temporary folder, removed at the end)
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
# Dependencies first: a package is published after the packages it depends on.
packages=(core sandbox coding-agent cli)
publish=0
keep=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --publish) publish=1; shift ;;
    --keep) keep="$(mkdir -p "$2" && realpath "$2")"; shift 2 ;;
    *) echo "usage: bash scripts/release.sh [--publish] [--keep DIR]" >&2; exit 2 ;;
  esac
done

work="$(mktemp -d "${TMPDIR:-/tmp}/pleach-release-XXXXXX")"
trap 'rm -rf "$work"' EXIT
out="${keep:-$work/tarballs}"
mkdir -p "$out" "$work/prefix" "$work/workspace"

cd "$repo"
echo "== build"
npx tsc -b

tarballs=()
for name in "${packages[@]}"; do
  echo "== pack packages/$name"
  file="$(cd "packages/$name" && npm pack --silent --pack-destination "$out" | tail -n 1)"
  tarballs+=("$out/$file")
  echo "== publint $file"
  npx --no-install publint run "$out/$file" --strict
done

echo "== install the tarballs into $work/prefix"
npm install --global --prefix "$work/prefix" --no-audit --no-fund --loglevel=error "${tarballs[@]}"
pleach="$work/prefix/bin/pleach"
"$pleach" --help >"$work/help.txt"
grep -q "pleach mcp" "$work/help.txt" || {
  echo "release: pleach --help from the installed tarballs does not list pleach mcp" >&2
  exit 1
}
echo "== pleach --help from the installed tarballs: ok"

# initialize over stdio, as a host starts the server: the answer must name pleach.
node - "$pleach" "$work/workspace" <<'NODE'
const { spawn } = require("node:child_process");
const [pleach, workspace] = process.argv.slice(2);
const child = spawn(pleach, ["mcp", "--workspace", workspace, "--mode", "read-only"], {
  stdio: ["pipe", "pipe", "inherit"],
});
const timer = setTimeout(() => {
  console.error("release: pleach mcp did not answer initialize within 30 s");
  child.kill();
  process.exit(1);
}, 30_000);
let buffered = "";
child.stdout.on("data", (chunk) => {
  buffered += chunk;
  const newline = buffered.indexOf("\n");
  if (newline < 0) return;
  const answer = JSON.parse(buffered.slice(0, newline));
  clearTimeout(timer);
  child.stdin.end();
  const info = answer.result?.serverInfo;
  if (info?.name !== "pleach") {
    console.error(`release: pleach mcp answered initialize with ${JSON.stringify(answer)}`);
    process.exit(1);
  }
  console.log(`== pleach mcp from the installed tarballs: initialize answered by ${info.name} ${info.version} (${answer.result.protocolVersion})`);
});
child.stdin.write(
  `${JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "release", version: "1" } },
  })}\n`,
);
NODE

if [[ $publish == 1 ]]; then
  for tarball in "${tarballs[@]}"; do
    echo "== npm publish $(basename "$tarball")"
    npm publish "$tarball" --access public
  done
else
  echo "release: checked ${#tarballs[@]} packages; not published (pass --publish to publish)"
fi
