#!/usr/bin/env bash
# The syntax check of the Perl programs pleach runs in a sandbox (packages/*/src/**/*.pl), part of
# `npm run check`: each must compile with `perl -c` as it runs, and under strict and warnings, with
# nothing said but "syntax OK" (a compile-time warning fails the check too).
set -euo pipefail
cd "$(dirname "$0")/.."
perl=/usr/bin/perl
mapfile -t programs < <(find packages/*/src -name '*.pl' -type f | sort)
((${#programs[@]} > 0)) || { echo "check-perl: no .pl file under packages/*/src" >&2; exit 1; }
status=0
for program in "${programs[@]}"; do
  for flags in "-c" "-Mstrict -Mwarnings -c"; do
    # shellcheck disable=SC2086 # the flags are separate words
    said="$("$perl" $flags "$program" 2>&1)" || true
    if [[ "$said" != "$program syntax OK" ]]; then
      echo "check-perl: perl $flags $program:" >&2
      echo "$said" >&2
      status=1
    fi
  done
done
exit "$status"
