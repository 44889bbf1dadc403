#!/usr/bin/env bash
# sd_notify end to end, with a stand-in for systemd's notification socket
# (notify_listener.py) and `bucketfs -f` as a Type=notify unit runs it:
#   - READY=1 arrives only once the mount answers (the listener lists the
#     mountpoint the moment READY=1 arrives), with a STATUS= line;
#   - a mount that fails sends no READY=1 and exits 1;
#   - SIGTERM while an upload runs (--async-close on a slow server): STOPPING=1
#     arrives, the daemon exits 0, the mount is gone, the object is complete.
# Usage: e2e_notify.sh s3sim   (BUCKETFS=path/to/bucketfs)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# 2 MB/s per connection: a 48 MiB upload takes seconds, so SIGTERM lands in it.
setup_bucket e2e-notify --conn-mbps 2

SOCK="$TMP/notify.sock"
NOTES="$TMP/notify.txt"
start_listener() {
  rm -f "$SOCK" "$NOTES"
  python3 "$E2E_DIR/notify_listener.py" "$SOCK" "$MNT" "$NOTES" &
  LISTENER=$!
  PIDS+=("$LISTENER")
  wait_for 10 grep -q LISTENING "$NOTES"
}
# run_foreground SOURCE [options]: bucketfs -f in the background with
# NOTIFY_SOCKET set, as systemd starts it; sets DAEMON.
run_foreground() {
  local source="$1"; shift
  mkdir -p "$MNT"
  MOUNTS+=("$MNT")
  NOTIFY_SOCKET="$SOCK" "$BUCKETFS" "$source" "$MNT" -f --endpoint-url "$S3_ENDPOINT" \
    --force-path-style --log-level debug "$@" 2>>"$TMP/bucketfs-mnt.log" &
  DAEMON=$!
}
# wait_daemon: waits (bounded) for DAEMON to end; sets STATUS to its exit status.
wait_daemon() {
  timeout 120 tail --pid="$DAEMON" -f /dev/null || true
  STATUS=0
  wait "$DAEMON" || STATUS=$?
}

log "a mount that fails sends no READY=1"
start_listener
run_foreground "s3://no-such-bucket"
wait_daemon
check "bucketfs exits 1" test "$STATUS" = 1
check "no READY=1" bash -c "! grep -q 'READY=1' '$NOTES'"
kill "$LISTENER"

log "READY=1 only once the mount answers"
head -c $((48 * 1024 * 1024)) /dev/urandom >"$TMP/big.bin"
s3 put "$BUCKET" small.txt <<<"hello"
start_listener
# The loop starts 3 s after the mount is in place: READY=1 sent before it
# answers would find a stat waiting for those seconds.
export BUCKETFS_TEST_LOOP_START_DELAY_MS=3000
run_foreground "s3://$BUCKET" --async-close
unset BUCKETFS_TEST_LOOP_START_DELAY_MS
check "READY=1 arrives" wait_for 60 grep -q "READY=1" "$NOTES"
answered_ms=$(sed -n 's/^CHECK mount-answers in \([0-9]*\) ms$/\1/p' "$NOTES")
check "the mount answered at once when READY=1 arrived (${answered_ms:-no answer} ms)" \
  test "${answered_ms:-99999}" -lt 1000
check "READY=1 carries a status line" \
  grep -q "READY=1 | STATUS=serving s3://$BUCKET at $MNT: read 0 B/s, wrote 0 B/s, 0 errors" "$NOTES"
check "a file reads through the mount" test "$(cat "$MNT/small.txt")" = hello

log "SIGTERM while an upload runs: STOPPING=1, exit 0, object complete"
check "cp returns (close is asynchronous)" timeout 60 cp "$TMP/big.bin" "$MNT/big.bin"
check "the upload is still running" bash -c "! python3 '$E2E_DIR/s3util.py' exists '$BUCKET' big.bin"
kill -TERM "$DAEMON"
check "STOPPING=1 arrives" wait_for 30 grep -q "STOPPING=1" "$NOTES"
check "STOPPING=1 came while the upload was still running" \
  bash -c "! python3 '$E2E_DIR/s3util.py' exists '$BUCKET' big.bin"
wait_daemon
check "the daemon exits 0" test "$STATUS" = 0
check "the mount is gone" bash -c "! grep -q ' $MNT ' /proc/mounts"
check "the object is complete" test "$(s3 sha256 "$BUCKET" big.bin)" = \
  "$(sha256sum <"$TMP/big.bin" | cut -d' ' -f1)"
check "the daemon finished the upload itself" \
  grep -q "background uploads: 1 submitted, 1 succeeded" "$TMP/bucketfs-mnt.log"
finish
