#!/usr/bin/env bash
# The real-client suite (Claude Code, Codex, Gemini CLI, Copilot CLI, opencode): agent CLIs installed from
# npm at pinned versions (into a cache folder), each driven headless against a scripted model on
# 127.0.0.1 with the built `pleach mcp` as its MCP server (configured as docs/mcp-clients.md
# gives it), asserting that what the CLI hands its model is pleach's text. Needs the build
# (`npx tsc -b`). As root, the tests run in a network namespace of their own with only loopback
# up, so no client can reach anything but the scripted model; otherwise they run as they are.
set -euo pipefail
cd "$(dirname "$0")/.."

cache="${TMPDIR:-/tmp}/pleach-real-clients"
# Installed before the namespace is entered: the registry is the one network use. The versions
# match the tests' own (CLAUDE_CODE_VERSION, CODEX_VERSION, GEMINI_VERSION, COPILOT_VERSION,
# OPENCODE_VERSION).
install() {
  local prefix="$cache/$1" package="$2" entry="$3"
  if [ ! -e "$prefix/node_modules/$entry" ]; then
    npm install --prefix "$prefix" --no-audit --no-fund "$package" >/dev/null
  fi
}
install claude-code-2.1.332 @anthropic-ai/claude-code@2.1.332 @anthropic-ai/claude-code/cli-wrapper.cjs
install codex-0.171.0 @openai/codex@0.171.0 @openai/codex/bin/codex.js
install gemini-cli-0.61.0 @google/gemini-cli@0.61.0 @google/gemini-cli/bundle/gemini.js
# Copilot CLI is a native binary (an optional dependency), so this Node runs its loader as it is.
install copilot-1.0.102 @github/copilot@1.0.102 @github/copilot/npm-loader.js
# opencode too: its package's bin is the native binary, run as it is.
install opencode-ai-1.18.33 opencode-ai@1.18.33 opencode-ai/bin/opencode.exe
run=(npx vitest run --config packages/cli/real-clients/vitest.config.ts "$@")
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null && command -v ip >/dev/null; then
  exec unshare --net -- bash -c 'ip link set lo up && exec "$@"' bash "${run[@]}"
fi
exec "${run[@]}"
