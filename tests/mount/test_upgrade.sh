#!/usr/bin/env bash
# `bucketfs upgrade MOUNTPOINT` outside systemd, end to end: a detached
# daemon hands its live mount to a new process over the control socket.
#   reader     a process reading a large file through the mount across the
#              upgrade finishes with the right checksum
#   writer     a file open for writing at the upgrade: the next write and the
#              close fail with EIO, and no object appears
#   same mount the mount id is unchanged, old inode numbers resolve, the new
#              daemon answers status, lookups, writes; the old one is gone
#   refusals   upgrade of a path no daemon serves says so
#   chain      a second upgrade of the upgraded daemon works; unmount is clean
# Usage: test_upgrade.sh s3sim
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
require_env
[[ "$SERVER" == s3sim ]] || skip "runs on s3sim (preloaded objects)"
BUCKET=e2e-upgrade
start_server --bucket "$BUCKET" --preload "$BUCKET/big/:1:256M" --ttfb-ms 5
export BUCKETFS_CONTROL_DIR="$TMP/control"
MNT="$TMP/mnt"
IO="$E2E_DIR/handover_io.py"
mount_id() { awk -v m="$MNT" '$5 == m { print $1 }' /proc/self/mountinfo; }

check "mounts (detached)" mount_bucket "$MNT" "s3://$BUCKET" --allow-overwrite
check "the mount answers" wait_for 30 stat "$MNT/big"
expected=$(s3 sha256 "$BUCKET" big/obj-00000)
ls -i "$MNT/big/obj-00000" >"$TMP/ino.before"
id_before=$(mount_id)
old_pid=$(daemon_pids | head -1)

timeout 240 python3 "$IO" read "$MNT/big/obj-00000" "$TMP/progress" >"$TMP/reader.out" 2>&1 &
READER=$!
timeout 120 python3 "$IO" write "$MNT/wip" "$TMP/ready" "$TMP/go" >"$TMP/writer.out" 2>&1 &
WRITER=$!
check "the writer has written" wait_for 30 test -e "$TMP/ready"
check "the reader is under way" wait_for 60 bash -c "[[ \$(cat '$TMP/progress' 2>/dev/null || echo 0) -ge $((48 << 20)) ]]"
log "upgrading daemon $old_pid at $(cat "$TMP/progress") bytes read"
check "bucketfs upgrade succeeds" timeout 120 "$BUCKETFS" upgrade "$MNT"
check "the old daemon is gone" wait_for 30 bash -c "! kill -0 $old_pid 2>/dev/null"
new_pid=$(daemon_pids | head -1)
log "new daemon: $new_pid"
check "a new daemon serves the mount" test -n "$new_pid" -a "$new_pid" != "$old_pid"
wait "$READER" || true
log "reader (max_gap_ms: the longest wait for one read): $(cat "$TMP/reader.out")"
check "the reader read the whole file across the upgrade" \
  grep -q "^sha256 $expected bytes $((256 << 20)) " "$TMP/reader.out"
touch "$TMP/go"
wait "$WRITER" || true
log "writer: $(cat "$TMP/writer.out")"
check "a write after the upgrade fails with EIO" grep -q "write EIO" "$TMP/writer.out"
check "its close fails with EIO" grep -q "close EIO" "$TMP/writer.out"
check "no partial object appears" bash -c "! timeout 60 python3 '$E2E_DIR/s3util.py' exists '$BUCKET' wip"
check "the mount is the same mount" test "$(mount_id)" = "$id_before"
ls -i "$MNT/big/obj-00000" >"$TMP/ino.after"
check "an inode number from before the upgrade still resolves" cmp "$TMP/ino.before" "$TMP/ino.after"
check "a new file can be written and read back" bash -c \
  "echo fresh >'$MNT/fresh' && [[ \$(cat '$MNT/fresh') == fresh ]]"
check "the new daemon answers status" bash -c \
  "timeout 30 '$BUCKETFS' status --once '$MNT' | grep -q 'pid $new_pid '"
check "the takeover is logged" grep -q "took the mount over" "$TMP/bucketfs-mnt.log"

mkdir -p "$TMP/nothing"
rc=0
timeout 30 "$BUCKETFS" upgrade "$TMP/nothing" >"$TMP/refuse.out" 2>&1 || rc=$?
check "upgrade of an unserved path fails" test "$rc" -eq 1
check "and says why" grep -q "no bucketfs daemon of this user answers" "$TMP/refuse.out"

check "a second upgrade works" timeout 120 "$BUCKETFS" upgrade "$MNT"
check "the file written after the first upgrade reads back" bash -c "[[ \$(cat '$MNT/fresh') == fresh ]]"
check "the mount is still the same mount" test "$(mount_id)" = "$id_before"
check "unmount is clean" unmount "$MNT"
check "no daemon is left" bash -c "[[ -z \$(daemon_pids) ]]"
check "fresh is in the bucket" timeout 60 python3 "$E2E_DIR/s3util.py" exists "$BUCKET" fresh
finish
