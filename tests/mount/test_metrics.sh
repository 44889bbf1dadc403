#!/usr/bin/env bash
# Mount end-to-end for observability, against s3sim:
#   option      a bad --metrics-addr is a usage error; a busy port fails
#               before mounting; both leave nothing mounted
#   scrape      /metrics is Prometheus text promtool accepts; other paths 404
#   counters    during a read, bytes read, GET requests and FUSE reads grow
#               between two scrapes
#   status      `bucketfs status --once MNT` shows the read's throughput;
#               without MOUNTPOINT it lists the mount; the live view draws in
#               tmux; a stale socket is removed and said so; unmount removes
#               the mount's socket
#   write-back  upload part-buffer memory is held during a write, within its
#               limit, shown by status, and given back after close
# Usage: test_metrics.sh s3sim
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
require_env
[[ "$SERVER" == s3sim ]] || skip "needs s3sim's pacing"
command -v promtool >/dev/null || { echo "promtool is missing (mount-tools/install-deps.sh)"; exit 1; }
command -v tmux >/dev/null || { echo "tmux is missing (mount-tools/install-deps.sh)"; exit 1; }
BUCKET=e2e-metrics
MNT="$TMP/mnt"
export BUCKETFS_CONTROL_DIR="$TMP/control"
start_server --preload "$BUCKET/big/:1:256M" --preload "$BUCKET/part/:1:64M"
PORT=$(free_port)
URL="http://127.0.0.1:$PORT/metrics"

# option
mkdir -p "$MNT"
out=$("$BUCKETFS" "s3://$BUCKET" "$MNT" --endpoint-url "$S3_ENDPOINT" --metrics-addr nonsense 2>&1) && rc=0 || rc=$?
check "bad --metrics-addr: usage error (exit 2)" test "$rc" -eq 2
check "bad --metrics-addr: says HOST:PORT" grep -q "is not HOST:PORT" <<<"$out"
python3 -c "import socket,time; s=socket.socket(); s.bind(('127.0.0.1', $PORT)); s.listen(); time.sleep(30)" &
busy=$!
PIDS+=("$busy")
wait_for 10 bash -c "exec 3<>/dev/tcp/127.0.0.1/$PORT"
out=$("$BUCKETFS" "s3://$BUCKET" "$MNT" --endpoint-url "$S3_ENDPOINT" --force-path-style \
  --metrics-addr "127.0.0.1:$PORT" 2>&1) && rc=0 || rc=$?
check "busy port: fails (exit 1)" test "$rc" -eq 1
check "busy port: says it is in use" grep -q "127.0.0.1:$PORT: the port is in use" <<<"$out"
check "busy port: nothing mounted" bash -c "! awk -v m='$MNT' '\$2 == m' /proc/mounts | grep -q ."
kill "$busy"; wait "$busy" 2>/dev/null || true

# scrape
mount_bucket "$MNT" "s3://$BUCKET" --metrics-addr "127.0.0.1:$PORT"
FILE="$MNT/big/$(timeout 30 ls "$MNT/big" | head -1)"
timeout 30 curl -sf "$URL" >"$TMP/scrape0.txt"
check "promtool accepts the exposition" timeout 30 promtool check metrics <"$TMP/scrape0.txt"
check "HELP and TYPE lines" grep -q "^# TYPE bucketfs_fuse_op_duration_seconds histogram" "$TMP/scrape0.txt"
code=$(timeout 30 curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/other")
check "other paths: 404" test "$code" = 404

# counters: scrape twice while a read runs
value() {  # value FILE NAME LABEL_FILTER: the sum of matching samples
  awk -v n="$2" -v f="$3" '$1 ~ "^"n"({|$)" && index($1, f) { s += $NF } END { printf "%.0f\n", s }' "$1"
}
# A reader paced at about 30 MB/s (1 MiB every 30 ms): the 256 MiB file
# takes about 8 s, so both scrapes and the status samples fall inside it.
timeout 120 python3 -c '
import sys, time
with open(sys.argv[1], "rb", buffering=0) as f:
    while f.read(1 << 20):
        time.sleep(0.03)' "$FILE" &
reader=$!
PIDS+=("$reader")
sleep 1
timeout 30 curl -sf "$URL" >"$TMP/scrape1.txt"
status_out=$(timeout 30 "$BUCKETFS" status --once "$MNT" 2>&1) || true
sleep 1
timeout 30 curl -sf "$URL" >"$TMP/scrape2.txt"
list_out=$(timeout 30 "$BUCKETFS" status --once 2>&1) || true
for m in "bucketfs_fuse_read_bytes_total " "bucketfs_s3_requests_total op=\"GET\"" \
         "bucketfs_fuse_ops_total op=\"read\"" "bucketfs_s3_received_bytes_total "; do
  name=${m%% *}; filter=${m#* }
  a=$(value "$TMP/scrape1.txt" "$name" "$filter"); b=$(value "$TMP/scrape2.txt" "$name" "$filter")
  check "$name${filter:+ $filter} grows during a read ($a -> $b)" test "$b" -gt "$a"
done
check "promtool accepts the exposition during a read" timeout 30 promtool check metrics <"$TMP/scrape2.txt"
log "bucketfs status --once $MNT:"; echo "$status_out"
rate=$(awk '$1 == "read" { print $2 }' <<<"$status_out")
check "status --once shows read throughput above 0 ($rate MB/s)" \
  python3 -c "import sys; sys.exit(0 if float('${rate:-0}') > 0 else 1)"
check "status --once names the mount and its source" grep -q "^$MNT  s3://$BUCKET" <<<"$status_out"
check "status without MOUNTPOINT lists the mount" grep -q "^$MNT  s3://$BUCKET" <<<"$list_out"

# the live view, in tmux
session="bucketfs-e2e-$$"
tmux new-session -d -s "$session" -x 120 -y 30 \
  "env BUCKETFS_CONTROL_DIR='$BUCKETFS_CONTROL_DIR' '$BUCKETFS' status '$MNT'"
sleep 2.5
screen=$(tmux capture-pane -p -t "$session" || true)
tmux kill-session -t "$session" 2>/dev/null || true
log "tmux capture:"; echo "$screen"
check "live view draws its header" grep -q "bucketfs status  (every 1s" <<<"$screen"
check "live view shows the mount" grep -q "^$MNT  s3://$BUCKET" <<<"$screen"
check "live view shows throughput" grep -q "^  read .* MB/s" <<<"$screen"
wait "$reader" || true

# write-back gauges: a paced writer holds part buffers while it writes
timeout 120 python3 -c '
import os, sys, time
with open(sys.argv[1], "wb", buffering=0) as f:
    for _ in range(120):
        f.write(os.urandom(1 << 20))
        time.sleep(0.04)' "$MNT/written.bin" &
writer=$!
PIDS+=("$writer")
sleep 1.5
timeout 30 curl -sf "$URL" >"$TMP/scrape_w.txt"
status_w=$(timeout 30 "$BUCKETFS" status --once "$MNT" 2>&1) || true
wait "$writer" && wrc=0 || wrc=$?
check "the writer ends well (exit $wrc)" test "$wrc" -eq 0
log "bucketfs status --once during the write:"; echo "$status_w"
limit=$(value "$TMP/scrape_w.txt" bucketfs_upload_memory_limit_bytes "")
held=$(value "$TMP/scrape_w.txt" bucketfs_upload_memory_in_use_bytes "")
check "upload memory limit is reported ($limit bytes)" test "$limit" -gt 0
check "upload memory is held during a write ($held of $limit bytes)" test "$held" -gt 0 -a "$held" -le "$limit"
check "status shows the uploads' memory" grep -q "^  memory  read-ahead .* uploads [1-9]" <<<"$status_w"
sleep 1
timeout 30 curl -sf "$URL" >"$TMP/scrape_w2.txt"
check "upload memory is given back after close" \
  test "$(value "$TMP/scrape_w2.txt" bucketfs_upload_memory_in_use_bytes "")" -eq 0
spare=$(value "$TMP/scrape_w2.txt" bucketfs_spare_memory_bytes "")
check "the written parts' buffers are kept as spare memory ($spare of $limit bytes)" \
  test "$spare" -gt 0 -a "$spare" -le "$limit"

# waste and the link operations
timeout 60 head -c 1048576 "$MNT/part/$(timeout 30 ls "$MNT/part" | head -1)" >/dev/null
ln -s big "$MNT/link" && timeout 10 readlink "$MNT/link" >/dev/null
sleep 1
timeout 30 curl -sf "$URL" >"$TMP/scrape3.txt"
wasted=$(value "$TMP/scrape3.txt" bucketfs_prefetch_wasted_bytes_total "")
check "read-ahead a reader left unread is counted as waste ($wasted bytes)" test "$wasted" -gt 0
for op in symlink readlink; do
  n=$(value "$TMP/scrape3.txt" bucketfs_fuse_ops_total "op=\"$op\"")
  check "fuse ops of type $op are counted ($n)" test "$n" -ge 1
done

# stale sockets
python3 -c "import socket; s=socket.socket(socket.AF_UNIX); s.bind('$BUCKETFS_CONTROL_DIR/gone.sock')"
out=$(timeout 30 "$BUCKETFS" status --once 2>&1) || true
check "a stale socket is reported" grep -q "removed stale control socket .*gone.sock" <<<"$out"
check "a stale socket is removed" test ! -e "$BUCKETFS_CONTROL_DIR/gone.sock"
sock=$(ls "$BUCKETFS_CONTROL_DIR"/*.sock)
check "the socket is mode 0600" test "$(stat -c %a "$sock")" = 600
unmount "$MNT"
check "unmount removes the control socket" test ! -e "$sock"
finish
