#!/usr/bin/env bash
# Restart without unmounting, end to end, with tests/fixtures/service_manager.py
# in systemd's place (file descriptor store, Restart=on-failure):
#   takeover   the daemon is killed (SIGKILL) while a process reads a large
#              file through the mount; the restarted daemon takes the mount
#              over and the reader finishes with the right checksum
#   writers    a file open for writing at the crash: the next write and the
#              close fail with EIO, and no object appears
#   names      inode numbers handed out before the crash still resolve; new
#              lookups and listings work
#   stop       SIGTERM outside a restart unmounts and empties the store
# Usage: test_handover.sh s3sim
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
require_env
[[ "$SERVER" == s3sim ]] || skip "runs on s3sim (preloaded objects)"
BUCKET=e2e-handover
start_server --bucket "$BUCKET" --preload "$BUCKET/big/:1:256M" --ttfb-ms 5
MNT="$TMP/mnt"
mkdir -p "$MNT"
MOUNTS+=("$MNT")
SVC_LOG="$TMP/service.log"
IO="$E2E_DIR/handover_io.py"

python3 "$REPO_ROOT/tests/fixtures/service_manager.py" --log "$SVC_LOG" -- \
  "$BUCKETFS" "s3://$BUCKET" "$MNT" -f --endpoint-url "$S3_ENDPOINT" --force-path-style \
  --log-file "$TMP/bucketfs-mnt.log" --log-level debug --allow-overwrite &
MANAGER=$!
PIDS+=("$MANAGER")
daemon_pid() { awk '$3 == "started" { p = $2 } END { print p }' "$SVC_LOG"; }

check "the daemon stores its FUSE descriptor and journal" \
  wait_for 30 bash -c "grep -q 'FDNAME=fuse' '$SVC_LOG' && grep -q 'FDNAME=journal' '$SVC_LOG'"
check "the mount answers" wait_for 30 stat "$MNT/big"
expected=$(s3 sha256 "$BUCKET" big/obj-00000)
ls -i "$MNT/big/obj-00000" >"$TMP/ino.before"

timeout 240 python3 "$IO" read "$MNT/big/obj-00000" "$TMP/progress" >"$TMP/reader.out" 2>&1 &
READER=$!
timeout 60 python3 "$IO" write "$MNT/wip" "$TMP/ready" "$TMP/go" >"$TMP/writer.out" 2>&1 &
WRITER=$!
check "the writer has written" wait_for 30 test -e "$TMP/ready"
check "the reader is under way" wait_for 60 bash -c "[[ \$(cat '$TMP/progress' 2>/dev/null || echo 0) -ge $((48 << 20)) ]]"
first=$(daemon_pid)
log "killing daemon $first at $(cat "$TMP/progress") bytes read"
kill -9 "$first"
check "the service manager restarted it with the stored descriptors" \
  wait_for 30 grep -q "started with" "$SVC_LOG"
wait "$READER" || true
log "reader: $(cat "$TMP/reader.out")"
check "the reader read the whole file across the restart" \
  grep -q "^sha256 $expected bytes $((256 << 20)) " "$TMP/reader.out"
touch "$TMP/go"
wait "$WRITER" || true
log "writer: $(cat "$TMP/writer.out")"
check "a write after the crash fails with EIO" grep -q "write EIO" "$TMP/writer.out"
check "its close fails with EIO" grep -q "close EIO" "$TMP/writer.out"
check "no partial object appears" bash -c "! timeout 60 python3 '$E2E_DIR/s3util.py' exists '$BUCKET' wip"
check "the mount is still the same mount" is_mounted "$MNT"
ls -i "$MNT/big/obj-00000" >"$TMP/ino.after"
check "an inode number from before the restart still resolves" cmp "$TMP/ino.before" "$TMP/ino.after"
check "a listing works after the restart" bash -c "ls '$MNT/big' | grep -qx obj-00000"
check "a new file can be written and read back" bash -c \
  "echo fresh >'$MNT/fresh' && [[ \$(cat '$MNT/fresh') == fresh ]]"
check "the takeover is logged" grep -q "took the mount over" "$TMP/bucketfs-mnt.log"
check "the kernel was asked to resend" grep -q "asked the kernel to resend" "$TMP/bucketfs-mnt.log"

kill -TERM "$MANAGER"
check "SIGTERM outside a restart ends the service cleanly" \
  bash -c "timeout 60 tail --pid=$MANAGER -f /dev/null; grep -q 'exited 0' '$SVC_LOG'"
check "and unmounts" bash -c "! awk -v m='$MNT' '\$2 == m { f = 1 } END { exit !f }' /proc/mounts"
check "and empties the descriptor store" grep -q "FDSTOREREMOVE=1" "$SVC_LOG"
finish
