#!/usr/bin/env bash
# Start a Docker engine in the background if none answers (CI: after `apt-get install docker.io`),
# and wait for it. Never fails the run: the Docker tests skip and say why when no engine answers.
set -uo pipefail
docker info >/dev/null 2>&1 && exit 0
command -v dockerd >/dev/null || { echo "start-dockerd: dockerd is not installed (apt-get install docker.io)" >&2; exit 0; }
(dockerd >/tmp/pleach-dockerd.log 2>&1 &)
for _ in $(seq 1 30); do
  docker info >/dev/null 2>&1 && exit 0
  sleep 1
done
echo "start-dockerd: dockerd did not start; the Docker tests will skip. Its log ends:" >&2
tail -n 5 /tmp/pleach-dockerd.log >&2
exit 0
