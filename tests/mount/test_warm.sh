#!/usr/bin/env bash
# Mount end-to-end for `bucketfs warm`, against s3sim (its request
# counter proves what reached the server):
#   warm        `bucketfs warm MNT` counts the whole tree
#   job         a find after the warm, and after a remount, sends no request
#   data        --data reads every file into the data cache: reading them
#               afterwards sends no request, a second --data run neither
#   not-a-mount a path outside a FUSE mount is refused
#   corrupt     a truncated or garbage cache file is rebuilt: the mount works
# Usage: test_warm.sh s3sim   (s3rver has no request counter: skipped)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
require_env
[[ "$SERVER" == s3sim ]] || skip "needs s3sim's request counter"
BUCKET=e2e-warm
CACHE="$TMP/cache"
MNT="$TMP/mnt"

# 30 directories x 20 files, each directory with a subdirectory of 5 files.
preload=()
for d in $(seq -w 0 29); do
  preload+=(--preload "$BUCKET/d$d/:20:1" --preload "$BUCKET/d$d/sub/:5:1")
done
start_server "${preload[@]}"

count() { timeout 120 find "$MNT" | wc -l; }
indefinite=(--cache "$CACHE" --metadata-ttl indefinite --negative-ttl indefinite)
expected=$((1 + 30 * (1 + 20 + 1 + 5)))  # root, then per directory: itself, files, sub, sub's files

mount_bucket "$MNT" "s3://$BUCKET" "${indefinite[@]}"
reset_stats
out=$(timeout 120 "$BUCKETFS" warm "$MNT" --no-progress)
log "$out (requests: $(requests))"
check "warm reports 61 directories" grep -q " 61 directories, " <<<"$out"
check "warm reports 750 files" grep -q " 750 files, " <<<"$out"
check "warm reports 810 entries" grep -q " 810 entries " <<<"$out"
check "warm listed through the server" test "$(requests)" -gt 0
reset_stats
check "find after warm sees the tree" test "$(count)" -eq "$expected"
check "find after warm: zero requests" test "$(requests)" -eq 0
unmount "$MNT"

mount_bucket "$MNT" "s3://$BUCKET" "${indefinite[@]}"
reset_stats
check "find after a remount sees the tree" test "$(count)" -eq "$expected"
check "find after a remount: zero requests" test "$(requests)" -eq 0
reset_stats
check "warm of a subtree after a remount" bash -c \
  "timeout 60 '$BUCKETFS' warm '$MNT/d07' --no-progress | grep -q ' 25 files, '"
check "warm of a cached subtree: zero requests" test "$(requests)" -eq 0

reset_stats
out=$(timeout 120 "$BUCKETFS" warm "$MNT/d03" --data --no-progress)
log "$out (requests: $(requests))"
check "warm --data reads the subtree's 25 files" grep -q "read $MNT/d03: 25 files, 25 bytes" <<<"$out"
check "warm --data fetched them" test "$(requests)" -gt 0
reset_stats
check "warm --data again: every file read" bash -c \
  "timeout 60 '$BUCKETFS' warm '$MNT/d03' --data --no-progress | grep -q ' 25 files, '"
check "warm --data again: zero requests" test "$(requests)" -eq 0
reset_stats
sync; echo 3 >/proc/sys/vm/drop_caches
check "files read after warm --data" bash -c "cat '$MNT'/d03/sub/* '$MNT'/d03/obj-* >/dev/null"
check "files read after warm --data: zero requests" test "$(requests)" -eq 0
rc=0
timeout 60 "$BUCKETFS" warm "$TMP" --no-progress >/dev/null 2>&1 || rc=$?
check "warm outside a mount exits 2" test "$rc" -eq 2
rc=0
timeout 60 "$BUCKETFS" warm "$MNT/no-such-dir" --no-progress >/dev/null 2>&1 || rc=$?
check "warm of a missing directory fails" test "$rc" -ne 0
unmount "$MNT"

# A damaged cache: truncated, then garbage. Each mount warns, rebuilds and
# serves the tree from the server again.
for damage in truncate garbage; do
  if [[ $damage == truncate ]]; then
    truncate -s 8192 "$CACHE/metadata/data.mdb"
  else
    head -c 65536 /dev/urandom >"$CACHE/metadata/data.mdb"
  fi
  mount_bucket "$MNT" "s3://$BUCKET" "${indefinite[@]}"
  reset_stats
  check "$damage cache: the mount walks the tree" test "$(count)" -eq "$expected"
  check "$damage cache: rebuilt from the server" test "$(requests)" -gt 0
  check "$damage cache: a warning says so" grep -q "rebuilding" "$TMP/bucketfs-mnt.log"
  reset_stats
  check "$damage cache: a second walk is cached again" test "$(count)" -eq "$expected"
  check "$damage cache: second walk zero requests" test "$(requests)" -eq 0
  unmount "$MNT"
  : >"$TMP/bucketfs-mnt.log"
done
finish
