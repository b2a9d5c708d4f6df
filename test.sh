#!/usr/bin/env bash
# The test command: installs what the tests need (as root, from Debian's
# packages: chromium for the HTML timeline test, postgresql for the real
# database tests, redis-server for the Redis lock tests, which start their
# own throwaway server as nobody on a spare loopback port, spin and gcc for
# the differential test against Spin), then runs every test. etcd needs no
# install: the tests embed it.
set -euo pipefail
cd "$(dirname "$0")"
need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need+=(postgresql)
command -v redis-server >/dev/null 2>&1 || [ -x /usr/bin/redis-server ] || need+=(redis-server)
command -v spin >/dev/null 2>&1 || need+=(spin)
command -v gcc >/dev/null 2>&1 || need+=(gcc)
if [ ${#need[@]} -gt 0 ] && [ "$(id -u)" = 0 ]; then
  echo "installing ${need[*]} ..." >&2
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
go test -count=1 -timeout 20m ./... "$@"
