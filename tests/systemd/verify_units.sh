#!/usr/bin/env bash
# systemd-analyze verify on every unit bucketfs installs or ships as an
# example, installed (cmake --install) into a temporary prefix so that the
# unit's ExecStart= names a daemon that exists. verify reports most
# mistakes (unknown keys, bad values) as warnings with status 0, so any
# output fails the test too. Skipped (77) without systemd-analyze.
# Usage: verify_units.sh BUILD_DIR
set -euo pipefail
build=$1
command -v systemd-analyze >/dev/null || { echo "SKIP: systemd-analyze is missing"; exit 77; }
tmp=$(mktemp -d /tmp/bucketfs-units.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/usr" >/dev/null
units="$tmp/usr/lib/systemd/system"
examples="$tmp/usr/share/doc/bucketfs/examples"
# The template as an instance too: %i expands as it will for a real one.
cp "$units/bucketfs@.service" "$tmp/bucketfs@data.service"
failures=0
for unit in "$units/bucketfs@.service" "$tmp/bucketfs@data.service" \
            "$examples/mnt-s3.mount" "$examples/mnt-s3.automount"; do
  out=$(cd "$(dirname "$unit")" && systemd-analyze verify --man=no "./$(basename "$unit")" 2>&1) &&
    status=0 || status=$?
  if [[ $status -eq 0 && -z "$out" ]]; then
    echo "ok   $(basename "$unit")"
  else
    echo "FAIL $(basename "$unit") (status $status):"
    echo "$out"
    failures=$((failures + 1))
  fi
done
echo "== the service's settings"
grep_unit() { grep -qx -- "$1" "$units/bucketfs@.service" || { echo "FAIL missing: $1"; failures=$((failures + 1)); }; }
for line in Type=notify NotifyAccess=main After=network-online.target Wants=network-online.target \
            Restart=on-failure KillMode=mixed FileDescriptorStoreMax=4 \
            "EnvironmentFile=/etc/bucketfs/%i.env" TimeoutStopSec=5min; do
  grep_unit "$line"
done
grep -q -- " -f --env-file /etc/bucketfs/%i.env " "$units/bucketfs@.service" ||
  { echo "FAIL ExecStart runs bucketfs in the foreground with the env file"; failures=$((failures + 1)); }
[[ $failures -eq 0 ]] || { echo "$failures check(s) failed"; exit 1; }
echo "all checks passed"
