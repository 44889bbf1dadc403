#!/usr/bin/env bash
# cache_bench.sh: the local data cache and FUSE passthrough. s3sim preloads
# LARGE files of LARGE_SIZE under data/ and SMALL files of 128 KiB under
# small/; every phase starts with the page cache dropped:
#   e1-off-*  epoch 1 without a data cache (--cache with --no-data-cache)
#   e1-on-*   epoch 1 filling an empty data cache
#             (seq1: the large files one after another; seq8: 8 at once;
#              small: the small files shuffled, 8 readers)
#   e1-be-*   the same with --cache-fill best-effort (readers never wait
#             for the cache's disk); after each e1-on/e1-be phase, the MiB
#             the cache then holds
#   e2-pt     epoch 2 of the large files, 8 at once, on a fresh mount of the
#             filled cache, with passthrough
#   e2-served the same with --no-passthrough
#   disk      the cache files themselves read with cat, 8 at once: the
#             local-disk ceiling epoch 2 is held against
#   e2-small  epoch 2 of the small files (shuffled, 8 readers)
# Each line: MB/s (or files/s), requests the server answered, the daemon's CPU
# seconds (user + system) per GiB. Usage: cache_bench.sh [LARGE] [LARGE_SIZE] [SMALL]
# (default 16 32M 2000). Environment: BUCKETFS, S3SIM (binaries); SHAPED=1
# runs s3sim as a remote store (--ttfb-ms 20 --conn-mbps 100); EPOCH1=0
# skips the e1 phases (the cache is filled unmeasured); AB_ROUNDS=N ends
# with N rounds of e2-pt then disk, each pair in turn, and their medians:
# the disk of a shared machine drifts within minutes, so a lone pair far
# apart in time says little. Needs root (drop_caches, passthrough). Run
# under flock /tmp/bucketfs-bench.lock.
set -euo pipefail
LARGE="${1:-16}"
LARGE_SIZE="${2:-32M}"
SMALL="${3:-2000}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
pick() { local c; for c in "$@"; do [[ -x "$c" ]] && { echo "$c"; return; }; done; }
BUCKETFS="${BUCKETFS:-$(pick "$ROOT"/build/release/mount-tools/bucketfs "$ROOT"/build*/mount-tools/bucketfs)}"
S3SIM="${S3SIM:-$(pick "$ROOT"/build/release/tests/s3sim/s3sim "$ROOT"/build*/tests/s3sim/s3sim)}"
[[ -x "$BUCKETFS" && -x "$S3SIM" ]] || { echo "need BUCKETFS and S3SIM"; exit 1; }
[[ $(id -u) -eq 0 ]] || { echo "needs root (drop_caches, passthrough)"; exit 1; }

TMP="$(mktemp -d /tmp/cache-bench.XXXXXX)"
MNT="$TMP/mnt"
SIM_PID=""
cleanup() {
  fusermount3 -u "$MNT" 2>/dev/null || fusermount3 -uz "$MNT" 2>/dev/null || true
  [[ -z "$SIM_PID" ]] || kill "$SIM_PID" 2>/dev/null || true
  grep -q " $TMP/" /proc/mounts || rm -rf "$TMP"
}
trap cleanup EXIT

BUCKET=cachebench
shaping=()
[[ -z "${SHAPED:-}" ]] || shaping=(--ttfb-ms 20 --conn-mbps 100)
"$S3SIM" --port 0 --port-file "$TMP/port" --access-key bench --secret-key benchsecret \
  --preload "$BUCKET/data/:$LARGE:$LARGE_SIZE" --preload "$BUCKET/small/:$SMALL:128K" \
  "${shaping[@]}" >"$TMP/s3sim.log" 2>&1 &
SIM_PID=$!
for _ in $(seq 600); do [[ -s "$TMP/port" ]] && break; sleep 0.1; done
ENDPOINT="http://127.0.0.1:$(cat "$TMP/port")"
export AWS_ACCESS_KEY_ID=bench AWS_SECRET_ACCESS_KEY=benchsecret AWS_REGION=us-east-1
export AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null

requests() { curl -s "$ENDPOINT/__s3sim/stats" | python3 -c 'import json,sys; print(json.load(sys.stdin)["total"])'; }
reset_stats() { curl -s -X POST "$ENDPOINT/__s3sim/reset-stats" >/dev/null; }
drop() { sync; echo 3 >/proc/sys/vm/drop_caches; }
daemon_pid() { pgrep -f -- "$BUCKETFS .* $MNT( |$)" | head -1; }
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$(daemon_pid)/stat"; }
mount_it() {
  mkdir -p "$MNT"
  "$BUCKETFS" "s3://$BUCKET" "$MNT" --endpoint-url "$ENDPOINT" --force-path-style \
    --metadata-ttl indefinite --no-link-probe --log-file "$TMP/bucketfs.log" "$@"
  find "$MNT" >/dev/null  # the listing is not what is measured
}
umount_it() {
  local pid; pid=$(daemon_pid)
  fusermount3 -u "$MNT"
  [[ -z "$pid" ]] || tail --pid="$pid" -f /dev/null
}
now() { date +%s.%N; }
# measure NAME BYTES FILES COMMAND...: one result line.
measure() {
  local name="$1" bytes="$2" files="$3"; shift 3
  drop
  reset_stats
  local c0 t0 t1 c1 pid
  pid=$(daemon_pid || true)
  c0=$([[ -n "$pid" ]] && cpu_ticks || echo 0)
  t0=$(now)
  "$@"
  t1=$(now)
  c1=$([[ -n "$pid" ]] && cpu_ticks || echo 0)
  python3 - "$name" "$bytes" "$files" "$t0" "$t1" "$c0" "$c1" "$(requests)" "$(getconf CLK_TCK)" <<'PY'
import sys
name, size, files, t0, t1, c0, c1, reqs, tck = sys.argv[1:]
secs = float(t1) - float(t0)
gib = int(size) / 2**30
cpu = (int(c1) - int(c0)) / int(tck)
print(f"{name:10s} {int(size) / secs / 1e6:9.1f} MB/s {int(files) / secs:9.1f} files/s "
      f"{int(reqs):7d} requests  daemon CPU {cpu / gib:6.3f} s/GiB  ({secs:.2f} s)")
PY
}
large_bytes=$(( LARGE * $(numfmt --from=iec "$LARGE_SIZE") ))
small_bytes=$(( SMALL * 131072 ))
seq1() { for f in "$MNT"/data/*; do cat "$f" >/dev/null; done; }
seq8() { ls -d "$MNT"/data/* | xargs -P8 -n1 cat >/dev/null; }
small8() { ls -d "$MNT"/small/* | shuf --random-source=<(yes) | xargs -P8 -n25 cat >/dev/null; }
disk8() { find "$1/data/objects" -type f -size +1M | xargs -P8 -n1 cat >/dev/null; }

echo "== $LARGE x $LARGE_SIZE, $SMALL x 128K, server ${SHAPED:+shaped }s3sim"
phases=(off be on)
[[ "${EPOCH1:-1}" == 0 ]] && phases=()
for phase in "${phases[@]}"; do
  rm -rf "$TMP/cache"
  flags=(--cache "$TMP/cache")
  [[ $phase == off ]] && flags+=(--no-data-cache)
  [[ $phase == be ]] && flags+=(--cache-fill best-effort)
  for job in seq1 seq8 small8; do
    [[ $phase != off ]] && rm -rf "$TMP/cache/data"
    mount_it "${flags[@]}"
    b=$large_bytes n=$LARGE
    [[ $job == small8 ]] && b=$small_bytes n=$SMALL
    measure "e1-$phase-$job" "$b" "$n" "$job"
    umount_it
    [[ $phase == off ]] || echo "           cached after e1-$phase-$job: $(( $(du -sB1 "$TMP/cache/data/objects" | cut -f1) >> 20 )) MiB of $(( b >> 20 ))"
  done
done
# The cache now holds the small files (the last epoch 1); fill the large ones.
mount_it --cache "$TMP/cache"
seq8
[[ "${EPOCH1:-1}" == 0 ]] && small8
umount_it
mount_it --cache "$TMP/cache"
measure e2-pt "$large_bytes" "$LARGE" seq8
measure e2-small "$small_bytes" "$SMALL" small8
umount_it
mount_it --cache "$TMP/cache" --no-passthrough
measure e2-served "$large_bytes" "$LARGE" seq8
umount_it
measure disk "$large_bytes" "$(find "$TMP/cache/data/objects" -type f -size +1M | wc -l)" \
  disk8 "$TMP/cache"
rounds="${AB_ROUNDS:-0}"
if (( rounds > 0 )); then
  disk_files=$(find "$TMP/cache/data/objects" -type f -size +1M | wc -l)
  for i in $(seq "$rounds"); do
    mount_it --cache "$TMP/cache"
    measure "ab$i-e2-pt" "$large_bytes" "$LARGE" seq8
    umount_it
    measure "ab$i-disk" "$large_bytes" "$disk_files" disk8 "$TMP/cache"
  done | tee "$TMP/ab.txt"
  python3 - "$TMP/ab.txt" <<'PY'
import statistics, sys
pt, disk, ratios = [], [], []
for line in open(sys.argv[1]):
    name, mbs = line.split()[:2]
    (pt if name.endswith("e2-pt") else disk).append(float(mbs))
ratios = [p / d for p, d in zip(pt, disk)]
print(f"AB medians: e2-pt {statistics.median(pt):.1f} MB/s, disk {statistics.median(disk):.1f} MB/s, "
      f"ratio of medians {statistics.median(pt) / statistics.median(disk):.2f}, "
      f"pair ratios {' '.join(f'{r:.2f}' for r in ratios)}")
PY
fi
grep -h "read mode" "$TMP/bucketfs.log" | sort | uniq -c
