#!/usr/bin/env bash
# Build the pleach sandbox image from local files only (no registry pull): a root filesystem
# assembled here from this machine's node, bash, coreutils, git, bubblewrap and perl (with the
# libraries they load) and the built packages, then `docker import`ed, every file owned by root.
# The image runs scripts/sandbox-serve.mjs; the same image is what Kubernetes or another container
# platform would run. bubblewrap (/usr/bin/bwrap, root-owned as the local sandbox requires) lets
# the server confine commands inside the container exactly as on the host; perl (with its base
# library) runs the session sandbox that holds a sandbox's commands and background jobs, and
# util-linux's script gives a job a pseudo-terminal.
#
#   npx tsc -b && scripts/build-sandbox-image.sh [--if-changed] [TAG]   (default TAG: pleach-sandbox:dev)
#
# --if-changed: do nothing when TAG exists and was built from the same inputs (the built packages,
# the server script, this script, node's and bubblewrap's versions), as its label
# dev.pleach.inputs records. Builds of one user are serialised (flock), so that test files
# running in parallel build the image once.
set -euo pipefail
umask 022
if_changed=false
if [[ "${1:-}" == "--if-changed" ]]; then
  if_changed=true
  shift
fi
tag="${1:-pleach-sandbox:dev}"
repo="$(cd "$(dirname "$0")/.." && pwd)"
for built in core coding-agent sandbox; do
  [[ -f "$repo/packages/$built/dist/index.js" || -d "$repo/packages/$built/dist" ]] || {
    echo "build first: npx tsc -b (packages/$built/dist is missing)" >&2
    exit 2
  }
done
command -v docker >/dev/null || { echo "docker is not installed" >&2; exit 2; }

if command -v flock >/dev/null; then
  exec 9>"${TMPDIR:-/tmp}/pleach-sandbox-image-$(id -u).lock"
  flock 9
fi
inputs="$(
  cd "$repo"
  {
    { find packages/core/dist packages/coding-agent/dist packages/sandbox/dist -type f ! -name '*.tsbuildinfo' -print0
      find packages/sandbox/src -name '*.pl' -type f -print0; } |
      sort -z | xargs -0 sha256sum
    sha256sum scripts/sandbox-serve.mjs scripts/build-sandbox-image.sh scripts/portable-launcher.c
    node --version
    /usr/bin/bwrap --version 2>/dev/null || true
  } | sha256sum | cut -c1-32
)"
if $if_changed &&
  [[ "$(docker image inspect --format '{{index .Config.Labels "dev.pleach.inputs"}}' "$tag" 2>/dev/null)" == "$inputs" ]]; then
  echo "$tag"
  exit 0
fi

rootfs="$(mktemp -d /tmp/pleach-rootfs-XXXXXX)"
trap 'rm -rf "$rootfs"' EXIT

# The programs a coding agent's commands need most, and everything they load.
programs=(node bash sh env cat head tail tr sleep setsid ls pwd printf echo mkdir rmdir rm cp mv
  ln wc grep sed find xargs sort uniq cut touch chmod id uname true false kill date dirname
  basename readlink realpath stat diff patch tee mktemp seq od base64 sha256sum timeout
  bwrap perl mkfifo git install mount umount mknod getent unshare nohup ps script)
# A merged /usr (bin -> usr/bin, ...) where this machine has one: the sandbox's probe runs /bin/true.
for top in bin sbin lib lib32 lib64 libx32; do
  if [[ -L "/$top" ]]; then
    mkdir -p "$rootfs/$(readlink "/$top")"
    ln -s "$(readlink "/$top")" "$rootfs/$top"
  fi
done
copy_with_libraries() {
  local file="$1"
  mkdir -p "$rootfs$(dirname "$file")"
  cp -L "$file" "$rootfs$file"
  # A file that loads nothing (static, or a plain extension) prints no path: not an error.
  { ldd "$file" 2>/dev/null || true; } | { grep -oE '/[^ ]+' || true; } | while read -r library; do
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
# The sandbox runs these by absolute path only (never from PATH): copy them to that very path.
for fixed in /usr/bin/bwrap /usr/bin/perl /usr/bin/mkfifo /usr/bin/script; do
  if [[ -e "$fixed" && ! -e "$rootfs$fixed" ]]; then
    copy_with_libraries "$(readlink -f "$fixed")"
    [[ -e "$rootfs$fixed" ]] || ln -s "$(readlink -f "$fixed")" "$rootfs$fixed"
  fi
done
[[ -e "$rootfs/usr/bin/bwrap" ]] || { echo "bubblewrap is needed (apt-get install bubblewrap)" >&2; exit 2; }
# Perl's base library (strict, warnings, Fcntl, POSIX and their C parts), which the session
# sandbox's server script loads: without it no session starts and jobs are refused.
perl_base="$(/usr/bin/perl -Mstrict -e '(my $folder = $INC{"strict.pm"}) =~ s{/strict\.pm$}{}; print $folder' 2>/dev/null || true)"
if [[ -n "$perl_base" && -d "$perl_base" ]]; then
  mkdir -p "$rootfs$(dirname "$perl_base")"
  cp -R "$perl_base" "$rootfs$perl_base"
  find "$rootfs$perl_base" -name '*.so' -type f | while read -r extension; do
    copy_with_libraries "${extension#"$rootfs"}"
  done
fi
# Debian's python3 with its standard library: commands use it, and so do the attack suites.
if [[ -x /usr/bin/python3 ]]; then
  python="$(readlink -f /usr/bin/python3)"
  copy_with_libraries "$python"
  [[ -e "$rootfs/usr/bin/python3" ]] || ln -s "$python" "$rootfs/usr/bin/python3"
  stdlib="/usr/lib/$(basename "$python")"
  if [[ -d "$stdlib" ]]; then
    mkdir -p "$rootfs/usr/lib"
    cp -R "$stdlib" "$rootfs/usr/lib/"
    # Its C extensions load libraries of their own (libffi, libssl, ...).
    find "$rootfs$stdlib" -name '*.so' -type f | while read -r extension; do
      copy_with_libraries "${extension#"$rootfs"}"
    done
  fi
fi
if [[ -d /usr/share/git-core/templates ]]; then
  mkdir -p "$rootfs/usr/share/git-core"
  cp -R /usr/share/git-core/templates "$rootfs/usr/share/git-core/templates"
fi
mkdir -p "$rootfs/bin" "$rootfs/usr/bin"
[[ -e "$rootfs/bin/true" ]] || ln -s "$(readlink -f "$(type -P true)")" "$rootfs/bin/true"
[[ -e "$rootfs/bin/sh" ]] || ln -s /bin/bash "$rootfs/bin/sh"
[[ -e "$rootfs/bin/bash" ]] || ln -s "$(readlink -f "$(command -v bash)")" "$rootfs/bin/bash"

mkdir -p "$rootfs/etc" "$rootfs/tmp" "$rootfs/workspaces" "$rootfs/run/pleach" "$rootfs/dev" "$rootfs/proc"
chmod 1777 "$rootfs/tmp" "$rootfs/workspaces"
printf 'root:x:0:0:root:/root:/bin/bash\nsandbox:x:1000:1000:sandbox:/workspaces:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n' >"$rootfs/etc/passwd"
printf 'root:x:0:\nsandbox:x:1000:\nnogroup:x:65534:\n' >"$rootfs/etc/group"

# The built packages, laid out as installed: node resolves @pleach/* and their dependencies from here.
modules="$rootfs/opt/pleach/node_modules"
for package in core coding-agent sandbox; do
  mkdir -p "$modules/@pleach/$package"
  cp "$repo/packages/$package/package.json" "$modules/@pleach/$package/"
  cp -R "$repo/packages/$package/dist" "$modules/@pleach/$package/dist"
done
# The Perl programs the sandbox package reads from its src/ (see its perl-program.ts).
(cd "$repo/packages/sandbox" && find src -name '*.pl' -type f -exec cp --parents {} "$modules/@pleach/sandbox/" \;)
# The packages' own dependencies (zod, the E2B face's Connect RPC libraries), each from where npm
# put it: the package's own node_modules, else the root's.
for package in core sandbox; do
  for dependency in $(node -e 'const d = require(process.argv[1]).dependencies ?? {}; console.log(Object.keys(d).filter((n) => !n.startsWith("@pleach/")).join(" "))' "$repo/packages/$package/package.json"); do
    [[ -e "$modules/$dependency" ]] && continue
    source="$repo/packages/$package/node_modules/$dependency"
    [[ -d "$source" ]] || source="$repo/node_modules/$dependency"
    mkdir -p "$(dirname "$modules/$dependency")"
    cp -R "$source" "$modules/$dependency"
  done
done
cp "$repo/scripts/sandbox-serve.mjs" "$rootfs/opt/pleach/sandbox-serve.mjs"

# Launchers for when these files are mounted read-only at /opt/pleach-runtime in another image
# (SWE-bench's, say; the Docker provider's runtimeImage): static programs (scripts/portable-launcher.c)
# that run node and bubblewrap through this image's own loader and libraries, so that nothing of
# the other image (its shell, its loader, its libraries) runs outside the sandbox. Beside them what
# node and glibc would otherwise read from that image's /etc: an empty OpenSSL configuration (the
# server's OPENSSL_CONF) and a name service configuration of files only (mounted over
# /etc/nsswitch.conf), whose modules glibc would load into the server.
runtime=/opt/pleach-runtime
loader="$(ldd "$(readlink -f "$(type -P node)")" | grep -oE '/[^ ]*ld-linux[^ ]*' | head -n 1)"
library_path="$(
  ldd "$(readlink -f "$(type -P node)")" /usr/bin/bwrap | grep -oE '/[^ ]+\.so[^ ]*' |
    xargs -n 1 dirname | sort -u | sed "s|^|$runtime|" | paste -sd: -
)"
command -v gcc >/dev/null || { echo "gcc is needed for the runtime's launchers (apt-get install gcc libc6-dev)" >&2; exit 2; }
portable="$rootfs/opt/pleach/portable"
mkdir -p "$portable"
for program in node bwrap; do
  binary="$(readlink -f "$(type -P "$program")")"
  server=()
  [[ "$program" == bwrap ]] && binary=/usr/bin/bwrap
  [[ "$program" == node ]] && server=(-DSERVER)
  gcc -static -O2 -Wall -Wextra -Werror "${server[@]}" \
    -DLOADER="\"$runtime$loader\"" -DLIBRARY_PATH="\"$library_path\"" -DPROGRAM="\"$runtime$binary\"" \
    -o "$portable/$program" "$repo/scripts/portable-launcher.c"
  chmod 755 "$portable/$program"
done
: >"$portable/openssl.cnf"
printf 'passwd: files\ngroup: files\nshadow: files\nhosts: files dns\n' >"$portable/nsswitch.conf"

tar -C "$rootfs" --owner=0 --group=0 --numeric-owner -c . | docker import \
  --change 'ENV PATH=/usr/local/bin:/usr/bin:/bin' \
  --change 'WORKDIR /workspaces' \
  --change "LABEL dev.pleach.inputs=$inputs" \
  --change 'ENTRYPOINT ["/usr/bin/node", "/opt/pleach/sandbox-serve.mjs", "--dist", "/opt/pleach/node_modules/@pleach/sandbox/dist/index.js"]' \
  - "$tag" >/dev/null
echo "$tag"
