#!/usr/bin/env bash
# What restart handover costs while nothing restarts, and how long readers
# pause when the daemon dies: one build, one s3sim, two ways of mounting in
# turn (plain: cloned /dev/fuse descriptors, no journal; handover: under
# tests/fixtures/service_manager.py, which makes the daemon keep one
# descriptor and journal every inode and handle).
#
#   fio-jobs/harness/handover_bench.sh [BUCKETFS] [ROUNDS]
#
# Per round and mode: `dd` of a 1 GiB object (bs 1 MiB, page cache dropped
# first), and `stat` of 2,000 small files on a fresh mount (2,000 lookups,
# each journaled in handover mode). Then, in handover mode, a paced reader
# of a 256 MiB object while the daemon is SIGKILLed: the longest single
# read() wait is the pause a reader sees across a crash and takeover.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUCKETFS="${1:-$root/build/release/mount-tools/bucketfs}"
ROUNDS="${2:-3}"
export S3SIM_BIN="${S3SIM_BIN:-$root/build/release/tests/s3sim/s3sim}"
tmp="$(mktemp -d /tmp/handover-bench.XXXXXX)"
mnt="$tmp/mnt"
mkdir -p "$mnt"
eval "$(S3_SERVER_TMP="$tmp" bash "$root/tests/fixtures/start-server.sh" s3sim --bucket hb \
  --preload hb/big/:1:1G --preload hb/small/:2000:4K --preload hb/paced/:1:256M)"
manager=""
cleanup() {
  [[ -z "$manager" ]] || kill "$manager" 2>/dev/null || true
  fusermount3 -uz "$mnt" 2>/dev/null || true
  stop_s3_server || true
  rm -rf "$tmp"
}
trap cleanup EXIT
common=(--endpoint-url "$S3_ENDPOINT" --force-path-style --log-file "$tmp/bucketfs.log")

mounted() { awk -v m="$mnt" '$2 == m { f = 1 } END { exit !f }' /proc/mounts; }
wait_mounted() { for _ in $(seq 300); do mounted && stat "$mnt/big" >/dev/null 2>&1 && return; sleep 0.1; done; return 1; }
mount_mode() {
  if [[ "$1" == plain ]]; then
    "$BUCKETFS" s3://hb "$mnt" "${common[@]}"
  else
    python3 "$root/tests/fixtures/service_manager.py" --log "$tmp/svc.log" --max-restarts 1 -- \
      "$BUCKETFS" s3://hb "$mnt" -f "${common[@]}" &
    manager=$!
  fi
  wait_mounted
}
unmount_mode() {
  fusermount3 -u "$mnt"
  if [[ -n "$manager" ]]; then wait "$manager" || true; manager=""; fi
  while mounted; do sleep 0.1; done
  sleep 0.5  # the plain daemon exits after its unmount
}
seconds() { /usr/bin/time -f %e "$@" 2>&1 >/dev/null | tail -1; }

printf "%-9s %-6s %12s %14s\n" mode round "dd 1GiB s" "stat 2000 s"
for round in $(seq "$ROUNDS"); do
  for mode in plain handover; do
    mount_mode "$mode"
    sync; echo 3 >/proc/sys/vm/drop_caches
    dd_s=$(seconds dd if="$mnt/big/obj-00000" of=/dev/null bs=1M)
    stat_s=$(seconds bash -c "ls '$mnt/small' | sed 's|^|$mnt/small/|' | xargs stat >/dev/null")
    printf "%-9s %-6s %12s %14s\n" "$mode" "$round" "$dd_s" "$stat_s"
    unmount_mode
  done
done

mount_mode handover
python3 "$root/tests/mount/handover_io.py" read "$mnt/paced/obj-00000" "$tmp/progress" >"$tmp/reader.out" &
reader=$!
until [[ "$(cat "$tmp/progress" 2>/dev/null || echo 0)" -ge $((64 << 20)) ]]; do sleep 0.05; done
daemon=$(awk '$3 == "started" { p = $2 } END { print p }' "$tmp/svc.log")
kill -9 "$daemon"
wait "$reader"
echo "crash and takeover under a paced reader: $(cat "$tmp/reader.out")"
unmount_mode
