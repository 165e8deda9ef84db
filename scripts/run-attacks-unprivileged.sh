#!/usr/bin/env bash
# Run the OS sandbox attack suites (packages/sandbox/src/os, and the policy, made-by-commands and
# caches folders beside it) as an unprivileged user, so that the
# sandbox is proven both for a root caller and for an ordinary one. Must be started as root: it
# creates the user `pleach-test` when missing; started by another user it does nothing, since
# the suite that user just ran was the unprivileged run. When that user cannot read the checkout in place
# (a private home or /work), the checkout is copied to a temporary folder the user owns.
#
# Usage: scripts/run-attacks-unprivileged.sh [extra vitest arguments...]
set -euo pipefail

user="pleach-test"
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

if [[ "$(id -u)" -ne 0 ]]; then
  # Not root: the suite that just ran already ran unprivileged, which is what this adds for root.
  echo "run-attacks-unprivileged: skipped: not root, so the main test run was the unprivileged run"
  exit 0
fi

if ! id -u "$user" >/dev/null 2>&1; then
  useradd --create-home --shell /bin/bash --user-group "$user"
fi
home="$(getent passwd "$user" | cut -d: -f6)"
if [[ ! -d "$home" ]]; then
  mkdir -p "$home"
  chown "$user:$user" "$home"
fi

as_user() {
  runuser -u "$user" -- env -i \
    HOME="$home" USER="$user" LOGNAME="$user" LANG="${LANG:-C.UTF-8}" \
    PATH="/usr/local/bin:/usr/bin:/bin" CI="${CI:-}" NPM_CONFIG_UPDATE_NOTIFIER=false \
    "$@"
}

workdir="$repo"
cleanup=""
# vitest keeps its cache under node_modules/.vite; the user must be able to read the sources and
# write there, or it gets a copy of its own.
if ! as_user test -r "$repo/package.json" -a -x "$repo/node_modules" -a -w "$repo/node_modules"; then
  workdir="$(mktemp -d /var/tmp/pleach-attacks-XXXXXX)"
  cleanup="$workdir"
  tar -C "$repo" --exclude=./.git -cf - . | tar -C "$workdir" -xf -
  chown -R "$user:$user" "$workdir"
fi
trap '[[ -n "$cleanup" ]] && rm -rf "$cleanup"' EXIT

cd "$workdir"
as_user bash -c 'cd "$1" && shift && exec npx vitest run packages/sandbox/src/os packages/sandbox/src/policy packages/sandbox/src/made-by-commands packages/sandbox/src/caches "$@"' run "$workdir" "$@"
