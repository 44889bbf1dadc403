#!/usr/bin/env bash
# find_bench.sh: metadata walk benchmark. s3sim preloads DIRS
# directories of FILES objects each (1,000 x 100 = 100,000 by default); then
#   direct-1  `bucketfs s3 bench list --parallel 1`: one flat listing, one
#             request in flight (1,000 keys a request)
#   direct-N  `bucketfs s3 bench list --parallel N`: the same keys listed the
#             way the mount's prefetcher does (first level with "/", then 4N
#             flat key ranges of its subdirectories, N in flight; N = 16, the
#             mount's listing workers): "the same parallelism". The direct
#             rate is the tool's own (its process start not counted)
#   cold      `find MNT | wc -l` on a fresh mount with an empty --cache
#   warm      the same find again on the same mount
#   remount   find after unmount + mount with the same cache
#   *-ls      with STAT_WALK=1: the same three with `find MNT -ls` (an lstat
#             of every entry, as ls -l or os.walk + stat do)
#   missing   10,000 stats of 100 missing names on a fresh cache: the first
#             pass (100 names) and the 9,900 stats after it, with requests
#   s3fs, rclone  cold and warm find on their own mounts of the same bucket
# bucketfs runs with --metadata-ttl indefinite; each line gives entries/s, the
# server's requests by operation, the bucketfs daemon's CPU seconds (user +
# system) and the load average. Usage: find_bench.sh [DIRS] [FILES]
# Environment: BUCKETFS, S3SIM (binaries; default: the first build-*/ found);
# OTHERS="s3fs rclone" (set empty to skip them); SHAPED=1 runs s3sim as a
# remote store (--ttfb-ms 20 --conn-mbps 100; TTFB_MS, CONN_MBPS to change);
# MOUNT_OPTS: extra bucketfs mount flags; STAT_WALK=1 adds the -ls walks.
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
shaping=()
[[ -z "${SHAPED:-}" ]] || shaping=(--ttfb-ms "${TTFB_MS:-20}" --conn-mbps "${CONN_MBPS:-100}")
"$S3SIM" --port 0 --port-file "$TMP/port" --access-key bench --secret-key benchsecret \
  "${shaping[@]}" "${preloads[@]}" >"$TMP/s3sim.log" 2>&1 &
SIM_PID=$!
for _ in $(seq 600); do [[ -s "$TMP/port" ]] && break; sleep 0.1; done
ENDPOINT="http://127.0.0.1:$(cat "$TMP/port")"
export AWS_ACCESS_KEY_ID=bench AWS_SECRET_ACCESS_KEY=benchsecret AWS_REGION=us-east-1
export AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null

requests() {  # "TOTAL (Op N, ...)"
  curl -s "$ENDPOINT/__s3sim/stats" | python3 -c 'import json,sys; s=json.load(sys.stdin); \
print(s["total"], "(" + ", ".join(f"{k} {v}" for k, v in sorted(s["ops"].items())) + ")" if s["ops"] else "")'
}
daemon_pid() { pgrep -f -- "s3://$BUCKET $MNT " | head -1 || true; }
cpu_of() {  # user + system seconds of PID (0 when gone)
  [[ -n "$1" && -r "/proc/$1/stat" ]] || { echo 0; return; }
  python3 -c "import os,sys; f=open(f'/proc/{sys.argv[1]}/stat').read().rsplit(')',1)[1].split(); \
print((int(f[11])+int(f[12]))/os.sysconf('SC_CLK_TCK'))" "$1"
}
load() { cut -d' ' -f1 /proc/loadavg; }
reset() { curl -s -X POST "$ENDPOINT/__s3sim/reset-stats" >/dev/null; }
now() { date +%s.%N; }
report() {  # report NAME ENTRIES START END [EXTRA]
  python3 -c "import sys; n,a,b=int(sys.argv[2]),float(sys.argv[3]),float(sys.argv[4]); \
print(f'{sys.argv[1]:10s} {n:8d} entries {b-a:8.3f} s {n/(b-a):10.0f} entries/s  requests {sys.argv[5]}{sys.argv[6]}  load {sys.argv[7]}')" \
    "$1" "$2" "$3" "$4" "$(requests)" "${5:-}" "$(load)"
}
mount_it() {
  mkdir -p "$MNT"
  "$BUCKETFS" "s3://$BUCKET" "$MNT" --endpoint-url "$ENDPOINT" --force-path-style \
    --cache "$TMP/cache" --metadata-ttl indefinite --negative-ttl indefinite \
    --log-file "$TMP/bucketfs.log" ${MOUNT_OPTS:-}
}
walk() {  # walk NAME [DIR [FIND ARGS]]: bucketfs's daemon CPU when DIR is its mount
  reset
  local a b n dir="${2:-$MNT}" pid="" c0 extra=""
  [[ "$dir" != "$MNT" ]] || pid=$(daemon_pid)
  c0=$(cpu_of "$pid")
  a=$(now); n=$(timeout 1800 find "$dir" "${@:3}" | wc -l); b=$(now)
  [[ -z "$pid" ]] || extra=$(python3 -c "import sys; print(f'  daemon CPU {float(sys.argv[2])-float(sys.argv[1]):.2f} s')" "$c0" "$(cpu_of "$pid")")
  report "$1" "$n" "$a" "$b" "$extra"
}
direct() {  # direct PARALLEL: the tool's own keys and seconds
  reset
  local j
  j=$("$BUCKETFS" s3 bench list "s3://$BUCKET" --parallel "$1" --json \
    --endpoint-url "$ENDPOINT" --force-path-style)
  python3 - "$j" "direct-$1" "$(requests)" "$(load)" <<'PY'
import json, sys
j, name, req, load = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
print(f"{name:10s} {j['keys']:8d} entries {j['seconds']:8.3f} s {j['keys_per_second']:10.0f} "
      f"entries/s  requests {req}  CPU {j['cpu_seconds']:.2f} s  load {load}")
PY
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

echo "tree: $DIRS directories x $FILES objects${SHAPED:+, shaped s3sim (${shaping[*]})}${MOUNT_OPTS:+, mount $MOUNT_OPTS}"
direct 1
direct 16
mount_it
walk cold
walk warm
fusermount3 -u "$MNT"
sleep 1
mount_it
walk remount
fusermount3 -u "$MNT"
sleep 1
if [[ -n "${STAT_WALK:-}" ]]; then
  rm -rf "$TMP/cache"
  mount_it
  walk cold-ls "$MNT" -ls
  walk warm-ls "$MNT" -ls
  fusermount3 -u "$MNT"
  sleep 1
  mount_it
  walk remount-ls "$MNT" -ls
  fusermount3 -u "$MNT"
  sleep 1
fi
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
