#!/usr/bin/env bash
# Build the pleach sandbox image from local files only (no registry pull): a root filesystem
# assembled here from this machine's node, bash and coreutils (with the libraries they load) and
# the built packages, then `docker import`ed. The image runs scripts/sandbox-serve.mjs; the same
# image is what Kubernetes or another container platform would run.
#
#   npx tsc -b && scripts/build-sandbox-image.sh [TAG]     (default TAG: pleach-sandbox:dev)
set -euo pipefail
tag="${1:-pleach-sandbox:dev}"
repo="$(cd "$(dirname "$0")/.." && pwd)"
for built in core coding-agent sandbox; do
  [[ -f "$repo/packages/$built/dist/index.js" || -d "$repo/packages/$built/dist" ]] || {
    echo "build first: npx tsc -b (packages/$built/dist is missing)" >&2
    exit 2
  }
done
command -v docker >/dev/null || { echo "docker is not installed" >&2; exit 2; }

rootfs="$(mktemp -d /tmp/pleach-rootfs-XXXXXX)"
trap 'rm -rf "$rootfs"' EXIT

# The programs a coding agent's commands need most, and everything they load.
programs=(node bash sh env cat head tail tr sleep setsid ls pwd printf echo mkdir rmdir rm cp mv
  ln wc grep sed find xargs sort uniq cut touch chmod id uname true false kill date dirname
  basename readlink realpath stat diff patch tee mktemp seq od base64 sha256sum timeout)
copy_with_libraries() {
  local file="$1"
  mkdir -p "$rootfs$(dirname "$file")"
  cp -L "$file" "$rootfs$file"
  ldd "$file" 2>/dev/null | grep -oE '/[^ ]+' | while read -r library; do
    [[ -e "$library" ]] || continue
    mkdir -p "$rootfs$(dirname "$library")"
    [[ -e "$rootfs$library" ]] || cp -L "$library" "$rootfs$library"
  done
}
for program in "${programs[@]}"; do
  path="$(type -P "$program" || true)"
  [[ -n "$path" && -f "$path" ]] || { echo "skipping $program (not on this machine)" >&2; continue; }
  copy_with_libraries "$(readlink -f "$path")"
  # Keep the name the program is called by, also where it is a link (sh -> dash).
  mkdir -p "$rootfs$(dirname "$path")"
  [[ -e "$rootfs$path" ]] || ln -s "$(readlink -f "$path")" "$rootfs$path"
done
mkdir -p "$rootfs/bin" "$rootfs/usr/bin"
[[ -e "$rootfs/bin/sh" ]] || ln -s /bin/bash "$rootfs/bin/sh"
[[ -e "$rootfs/bin/bash" ]] || ln -s "$(readlink -f "$(command -v bash)")" "$rootfs/bin/bash"

mkdir -p "$rootfs/etc" "$rootfs/tmp" "$rootfs/workspaces" "$rootfs/run/pleach" "$rootfs/dev" "$rootfs/proc"
chmod 1777 "$rootfs/tmp" "$rootfs/workspaces"
printf 'root:x:0:0:root:/root:/bin/bash\nsandbox:x:1000:1000:sandbox:/workspaces:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n' >"$rootfs/etc/passwd"
printf 'root:x:0:\nsandbox:x:1000:\nnogroup:x:65534:\n' >"$rootfs/etc/group"

# The built packages, laid out as installed: node resolves @pleach/* and zod from here.
modules="$rootfs/opt/pleach/node_modules"
for package in core coding-agent sandbox; do
  mkdir -p "$modules/@pleach/$package"
  cp "$repo/packages/$package/package.json" "$modules/@pleach/$package/"
  cp -R "$repo/packages/$package/dist" "$modules/@pleach/$package/dist"
done
cp -R "$repo/node_modules/zod" "$modules/zod"
cp "$repo/scripts/sandbox-serve.mjs" "$rootfs/opt/pleach/sandbox-serve.mjs"

tar -C "$rootfs" -c . | docker import \
  --change 'ENV PATH=/usr/local/bin:/usr/bin:/bin' \
  --change 'WORKDIR /workspaces' \
  --change 'ENTRYPOINT ["/usr/bin/node", "/opt/pleach/sandbox-serve.mjs", "--dist", "/opt/pleach/node_modules/@pleach/sandbox/dist/index.js"]' \
  - "$tag" >/dev/null
echo "$tag"
