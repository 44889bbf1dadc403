#!/usr/bin/env bash
# find_bench.sh: metadata walk benchmark (issue 7). s3sim preloads DIRS
# directories of FILES objects each (100 x 1,000 = 100,000 by default); then
#   direct   `bucketfs s3 ls --recursive` (the direct client's listing rate)
#   cold     `find MNT | wc -l` on a fresh mount with an empty --cache
#   warm     the same find again on the same mount
#   remount  find after unmount + mount with the same cache
# with --metadata-ttl indefinite, printing entries/s and the server's request
# count for each. Usage: find_bench.sh [DIRS] [FILES]
# Environment: BUCKETFS, S3SIM (binaries; default: the first build-*/ found).
set -euo pipefail
DIRS="${1:-1000}"
FILES="${2:-100}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
pick() { local c; for c in "$@"; do [[ -x "$c" ]] && { echo "$c"; return; }; done; }
BUCKETFS="${BUCKETFS:-$(pick "$ROOT"/build/mount-tools/bucketfs "$ROOT"/build-*/mount-tools/bucketfs)}"
S3SIM="${S3SIM:-$(pick "$ROOT"/build/tests/s3sim/s3sim "$ROOT"/build-*/tests/s3sim/s3sim)}"
[[ -x "$BUCKETFS" && -x "$S3SIM" ]] || { echo "need BUCKETFS and S3SIM"; exit 1; }

TMP="$(mktemp -d /tmp/find-bench.XXXXXX)"
MNT="$TMP/mnt"
SIM_PID=""
cleanup() {
  fusermount3 -u "$MNT" 2>/dev/null || true
  [[ -z "$SIM_PID" ]] || kill "$SIM_PID" 2>/dev/null || true
  grep -q " $TMP/" /proc/mounts || rm -rf "$TMP"
}
trap cleanup EXIT

BUCKET=findbench
preloads=()
for ((d = 0; d < DIRS; d++)); do preloads+=(--preload "$BUCKET/$(printf 'd%04d' "$d")/:$FILES:1"); done
"$S3SIM" --port 0 --port-file "$TMP/port" --access-key bench --secret-key benchsecret \
  "${preloads[@]}" >"$TMP/s3sim.log" 2>&1 &
SIM_PID=$!
for _ in $(seq 600); do [[ -s "$TMP/port" ]] && break; sleep 0.1; done
ENDPOINT="http://127.0.0.1:$(cat "$TMP/port")"
export AWS_ACCESS_KEY_ID=bench AWS_SECRET_ACCESS_KEY=benchsecret AWS_REGION=us-east-1
export AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null

requests() { curl -s "$ENDPOINT/__s3sim/stats" | python3 -c 'import json,sys; print(json.load(sys.stdin)["total"])'; }
reset() { curl -s -X POST "$ENDPOINT/__s3sim/reset-stats" >/dev/null; }
now() { date +%s.%N; }
report() {  # report NAME ENTRIES START END
  python3 -c "import sys; n,a,b=int(sys.argv[2]),float(sys.argv[3]),float(sys.argv[4]); \
print(f'{sys.argv[1]:8s} {n:8d} entries  {b-a:8.3f} s  {n/(b-a):10.0f} entries/s  requests {sys.argv[5]}')" \
    "$1" "$2" "$3" "$4" "$(requests)"
}
mount_it() {
  mkdir -p "$MNT"
  "$BUCKETFS" "s3://$BUCKET" "$MNT" --endpoint-url "$ENDPOINT" --force-path-style \
    --cache "$TMP/cache" --metadata-ttl indefinite --negative-ttl indefinite \
    --log-file "$TMP/bucketfs.log"
}
walk() {  # walk NAME
  reset
  local a b n
  a=$(now); n=$(timeout 1800 find "$MNT" | wc -l); b=$(now)
  report "$1" "$n" "$a" "$b"
}

echo "tree: $DIRS directories x $FILES objects"
reset
a=$(now)
n=$("$BUCKETFS" s3 ls --recursive "s3://$BUCKET" --endpoint-url "$ENDPOINT" --force-path-style | wc -l)
b=$(now)
report direct "$n" "$a" "$b"
mount_it
walk cold
walk warm
fusermount3 -u "$MNT"
sleep 1
mount_it
walk remount
