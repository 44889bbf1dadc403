#!/usr/bin/env bash
# Crashes: the daemon killed (SIGKILL) during reads and during writes, and a
# full local disk under the staging directory.
#
#   crashes.sh [s3sim]
#
# After each kill: the dead mount fails with ENOTCONN (no hang), a new
# `bucketfs` on that mountpoint refuses with a message that says what to do,
# `fusermount3 -uz` (first kill) or `umount -l` (second) clears it, a remount
# serves the same bytes, no partial object is visible, the LMDB metadata
# cache (--cache) is intact or rebuilt, and `bucketfs cleanup` aborts the
# upload left behind. Full disk: ENOSPC at write() or close(), no object,
# and the mount keeps serving reads.
source "$(dirname "$0")/../mount/lib.sh"
FAULT_IO="$(cd "$(dirname "$0")" && pwd)/fault_io.py"
[[ "$SERVER" == s3sim ]] || skip "uses s3sim"
BUCKET=crashes
require_env
start_server --bucket "$BUCKET"
uploads() {
  timeout 60 python3 -c '
import sys; sys.path.insert(0, sys.argv[1]); import s3util
print(len(s3util.client().list_multipart_uploads(Bucket=sys.argv[2]).get("Uploads", [])))' \
    "$E2E_DIR" "$BUCKET"
}
CACHE="$TMP/cache"
M="$TMP/mnt"
OPTS=(--cache "$CACHE" --metadata-ttl indefinite)

python3 "$FAULT_IO" make-source "$TMP/src" 2 $((64 << 20)) 9
python3 "$FAULT_IO" put "$TMP/src" "$BUCKET" "data/"
s3 put-many "$BUCKET" "tree/k" 500 100
crashes=0

# kill_daemon: SIGKILLs the mount's daemon and waits until it has exited
# (a zombie has closed its files, /dev/fuse among them): a request sent
# while it is still dying is aborted (ECONNABORTED), not refused (ENOTCONN).
kill_daemon() {
  local pid state deadline=$((SECONDS + 30))
  pid=$(mount_pid "$M")
  kill -9 "$pid"
  while [[ $SECONDS -lt $deadline ]]; do
    state=$(ps -o stat= -p "$pid" 2>/dev/null || true)
    [[ -z "$state" || "$state" == Z* ]] && return 0
    sleep 0.1
  done
  echo "daemon $pid still running 30 s after SIGKILL"
}

# dead_mount CLEAR: checks a mount whose daemon was killed, then clears it
# with CLEAR ("fusermount3 -uz" or "umount -l").
dead_mount() {
  expect_errno "dead mount: stat fails" ENOTCONN stat "$M"
  local out rc=0
  out=$(timeout 30 "$BUCKETFS" "s3://$BUCKET" "$M" --endpoint-url "$S3_ENDPOINT" \
        --force-path-style 2>&1) || rc=$?
  echo "next bucketfs on the dead mountpoint (exit $rc): $out"
  check "next bucketfs refuses" test "$rc" -ne 0
  check "its message says what to do" bash -c "[[ '$out' == *'fusermount3 -uz $M'* ]]"
  # shellcheck disable=SC2086
  check "$1 clears the dead mount" timeout 20 $1 "$M"
  check "mountpoint is free" bash -c "! awk -v m='$M' '\$2 == m { f = 1 } END { exit !f }' /proc/mounts"
}

# --- SIGKILL during reads (and a walk filling the metadata cache).
mount_bucket "$M" "s3://$BUCKET" "${OPTS[@]}"
timeout 120 find "$M/tree" -type f | wc -l >/dev/null
python3 - "$M/data/src-000" >"$TMP/reader.out" 2>&1 <<'PY' &
import os, sys, time
with open(sys.argv[1], "rb", buffering=0) as f:
    try:
        while True:
            # Pages read before stay in the page cache: dropped, every read
            # reaches the daemon, and meets its death.
            os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
            if not f.read(1 << 20):
                f.seek(0)
            time.sleep(0.01)
    except OSError as e:
        print(f"reader: {e.strerror} (errno {e.errno})")
PY
reader=$!
PIDS+=("$reader")
sleep 2
kill_daemon
crashes=$((crashes + 1))
check "reader ends (no hang)" timeout 30 tail --pid="$reader" -f /dev/null
cat "$TMP/reader.out"
check "reader got an error" grep -q "errno" "$TMP/reader.out"
dead_mount "fusermount3 -uz"
mount_bucket "$M" "s3://$BUCKET" "${OPTS[@]}"
check "remounted: bytes equal the source" timeout 300 python3 "$FAULT_IO" seq-read "$M/data" "$TMP/src"
check "remounted: the walk is complete" test "$(timeout 120 find "$M/tree" -type f | wc -l)" -eq 500
if grep -q "rebuilding" "$TMP/bucketfs-mnt.log"; then
  echo "metadata cache: rebuilt after the kill"
else
  echo "metadata cache: intact after the kill"
fi

# --- SIGKILL during writes: no partial object; cleanup aborts the upload.
python3 - "$M/killed.bin" <<'PY' &
import os, sys, time
f = open(sys.argv[1], "wb")
for _ in range(48):
    f.write(os.urandom(1 << 20))
f.flush()
time.sleep(300)
PY
writer=$!
PIDS+=("$writer")
wait_uploads() {
  local deadline=$((SECONDS + 120))
  while [[ $SECONDS -lt $deadline ]]; do
    [[ "$(uploads)" != 0 ]] && return 0
    sleep 0.5
  done
  return 1
}
check "a multipart upload started" wait_uploads
kill_daemon
crashes=$((crashes + 1))
kill "$writer" 2>/dev/null || true
dead_mount "umount -l"
mount_bucket "$M" "s3://$BUCKET" "${OPTS[@]}"
check "no partial object in the bucket" \
  bash -c "! timeout 60 python3 '$E2E_DIR/s3util.py' exists '$BUCKET' killed.bin"
check "no partial file in the mount" test ! -e "$M/killed.bin"
check "remounted after a write kill: bytes equal the source" \
  timeout 300 python3 "$FAULT_IO" seq-read "$M/data" "$TMP/src"
check "cleanup aborts the stale upload" bash -c \
  "timeout 60 '$BUCKETFS' cleanup 's3://$BUCKET' --endpoint-url '$S3_ENDPOINT' --force-path-style | grep -q '1 upload(s) aborted'"
check "no upload left" test "$(uploads)" = 0
unmount "$M"
echo "crashes survived: $crashes"

# --- A full disk under the staging directory.
SMALL="$TMP/small"
mkdir -p "$SMALL"
if mount -t tmpfs -o size=24m tmpfs "$SMALL" 2>/dev/null; then
  MOUNTS+=("$SMALL")
  mount_bucket "$M" "s3://$BUCKET" --cache "$SMALL/cache"
  enospc() {
    timeout 300 python3 - "$M/full.bin" <<'PY'
import errno, os, sys
try:
    with open(sys.argv[1], "wb") as f:
        for _ in range(64):
            f.write(os.urandom(1 << 20))
except OSError as e:
    print(f"failed as expected: {e}")
    sys.exit(0 if e.errno == errno.ENOSPC else 1)
print("64 MiB written into 24 MiB of staging space without an error")
sys.exit(1)
PY
  }
  check "full staging disk: ENOSPC at write() or close()" enospc
  check "no object full.bin" bash -c "! timeout 60 python3 '$E2E_DIR/s3util.py' exists '$BUCKET' full.bin"
  check "the mount keeps serving reads" timeout 300 python3 "$FAULT_IO" seq-read "$M/data" "$TMP/src"
  check "a small write works again" bash -c "echo hello >'$M/after-full.txt'"
  check "its object is there" timeout 60 python3 "$E2E_DIR/s3util.py" exists "$BUCKET" after-full.txt
  unmount "$M"
  umount "$SMALL" || true
else
  echo "SKIP full disk: cannot mount a tmpfs here"
fi
finish
