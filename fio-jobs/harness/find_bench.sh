#!/usr/bin/env bash
# find_bench.sh: metadata walk benchmark (issue 7). s3sim preloads DIRS
# directories of FILES objects each (100 x 1,000 = 100,000 by default); then
#   direct    `bucketfs s3 ls --recursive`: one flat listing, 1 request in
#             flight (1,000 keys a request). The yardstick: no split of the key
#             space lists these keys in fewer requests, and 16 direct processes
#             on prefixes were slower still (process start-up dominates)
#   cold      `find MNT | wc -l` on a fresh mount with an empty --cache
#   warm      the same find again on the same mount
#   remount   find after unmount + mount with the same cache
#   missing   10,000 stats of 100 missing names on a fresh cache: the first
#             pass (100 names) and the 9,900 stats after it, with requests
#   s3fs, rclone  cold and warm find on their own mounts of the same bucket
# bucketfs runs with --metadata-ttl indefinite; each line gives entries/s and
# the server's request count. Usage: find_bench.sh [DIRS] [FILES]
# Environment: BUCKETFS, S3SIM (binaries; default: the first build-*/ found);
# OTHERS="s3fs rclone" (set empty to skip them).
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
OTHERS="${OTHERS-s3fs rclone}"
OTHER_PID=""
cleanup() {
  fusermount3 -u "$MNT" 2>/dev/null || true
  for m in "$TMP"/mnt-*; do fusermount3 -uz "$m" 2>/dev/null || true; done
  [[ -z "$OTHER_PID" ]] || kill "$OTHER_PID" 2>/dev/null || true
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
walk() {  # walk NAME [DIR]
  reset
  local a b n
  a=$(now); n=$(timeout 1800 find "${2:-$MNT}" | wc -l); b=$(now)
  report "$1" "$n" "$a" "$b"
}
missing() {  # 100 missing names at the root, then 99 more passes over them
  python3 - "$MNT" "$ENDPOINT" <<'PY'
import json, os, sys, time, urllib.request
mnt, ep = sys.argv[1], sys.argv[2]
def requests():
    return json.load(urllib.request.urlopen(ep + "/__s3sim/stats"))["total"]
def stats(passes):
    n = 0
    for _ in range(passes):
        for i in range(100):
            try:
                os.stat(os.path.join(mnt, f"no-such-module-{i}.py"))
            except FileNotFoundError:
                n += 1
    return n
urllib.request.urlopen(urllib.request.Request(ep + "/__s3sim/reset-stats", method="POST"))
a = time.time(); n1 = stats(1); b = time.time(); r1 = requests()
n2 = stats(99); c = time.time(); r2 = requests() - r1
print(f"missing  first pass {n1} stats {b-a:.3f} s requests {r1}; "
      f"then {n2} stats {c-b:.3f} s ({n2/(c-b):.0f} stats/s) requests {r2}")
PY
}
other_mount() {  # other_mount s3fs|rclone MNT
  local env_cmd=(env)
  case "$1" in
    s3fs)
      printf '%s:%s\n' "$AWS_ACCESS_KEY_ID" "$AWS_SECRET_ACCESS_KEY" >"$TMP/s3fs.passwd"
      chmod 600 "$TMP/s3fs.passwd"
      s3fs "$BUCKET" "$2" -f -o "url=$ENDPOINT" -o use_path_request_style \
        -o "passwd_file=$TMP/s3fs.passwd" -o endpoint=us-east-1 >"$TMP/s3fs.log" 2>&1 &
      ;;
    rclone)
      env -u AWS_CA_BUNDLE RCLONE_CONFIG_S3_TYPE=s3 RCLONE_CONFIG_S3_PROVIDER=Other \
        RCLONE_CONFIG_S3_ENDPOINT="$ENDPOINT" RCLONE_CONFIG_S3_ACCESS_KEY_ID="$AWS_ACCESS_KEY_ID" \
        RCLONE_CONFIG_S3_SECRET_ACCESS_KEY="$AWS_SECRET_ACCESS_KEY" RCLONE_CONFIG_S3_REGION=us-east-1 \
        RCLONE_CONFIG_S3_FORCE_PATH_STYLE=true \
        rclone mount "s3:$BUCKET" "$2" --vfs-cache-mode off >"$TMP/rclone.log" 2>&1 &
      ;;
  esac
  OTHER_PID=$!
  for _ in $(seq 300); do grep -q " $2 " /proc/mounts && return 0; sleep 0.1; done
  echo "$1 did not mount"; return 1
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
fusermount3 -u "$MNT"
sleep 1
rm -rf "$TMP/cache"
mount_it
missing
fusermount3 -u "$MNT"
for other in $OTHERS; do
  command -v "$other" >/dev/null || { echo "$other: not installed"; continue; }
  m="$TMP/mnt-$other"
  mkdir -p "$m"
  other_mount "$other" "$m" || continue
  walk "$other-cold" "$m"
  walk "$other-warm" "$m"
  fusermount3 -u "$m" || fusermount3 -uz "$m"
  wait "$OTHER_PID" 2>/dev/null || true
  OTHER_PID=""
done
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
