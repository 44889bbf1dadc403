#!/usr/bin/env bash
# --async-close keeps the bytes of a failed background upload: on a store
# that refuses every PutObject (s3sim --fail-rate 1 --fault-ops PutObject),
# a file closed at once, `bucketfs sync` reports the failure, the bytes wait
# in CACHE/staging/failed as NNN.data with a NNN.info naming the key and the
# error, and the metrics count it; a successful upload leaves no copy.
# Usage: test_async_kept.sh s3sim   (s3rver cannot be told to fail: skipped)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
[[ "$SERVER" == s3sim ]] || skip "needs s3sim's fault injection"
setup_bucket e2e-kept --fail-rate 1 --fault-ops PutObject
CACHE="$TMP/cache"
KEPT="$CACHE/staging/failed"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

check "mount with --async-close" mount_bucket "$MNT" "s3://$BUCKET" --async-close \
  --cache "$CACHE" --metrics-addr "127.0.0.1:$PORT"
python3 -c 'import sys; sys.stdout.buffer.write(bytes(range(256)) * 400)' > "$TMP/expected"
check "close() of the file returns at once" cp "$TMP/expected" "$MNT/precious.bin"
check "bucketfs sync reports the failed upload" \
  bash -c "! timeout 120 '$BUCKETFS' sync '$MNT' 2>'$TMP/sync.err'"
log "bucketfs sync said: $(cat "$TMP/sync.err")"
data=$(ls "$KEPT"/*.data 2>/dev/null | head -1)
check "the bytes are kept in $KEPT" test -n "$data"
check "the kept copy holds every byte written" cmp "$TMP/expected" "$data"
info="${data%.data}.info"
log "$(basename "$info"): $(tr '\n' '|' <"$info")"
check "its note names the object" grep -qx "s3://$BUCKET/precious.bin" "$info"
check "its note gives the size" grep -qx "size 102400" "$info"
check "its note gives the error" grep -q "^error " "$info"
check "the kept files are 0600" test "$(stat -c %a "$data")" = 600
check "no object was created" bash -c "! timeout 60 python3 '$E2E_DIR/s3util.py' exists '$BUCKET' precious.bin"
metrics=$(curl -s "http://127.0.0.1:$PORT/metrics")
check "metrics count the failed upload" \
  grep -q '^bucketfs_background_uploads_total{result="failed"} 1' <<<"$metrics"
check "metrics count the kept copy" grep -q '^bucketfs_background_uploads_kept_total 1' <<<"$metrics"
check "unmount" unmount "$MNT"
check "the copy outlives the mount" test -s "$data"
finish
