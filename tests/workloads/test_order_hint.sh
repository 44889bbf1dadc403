#!/usr/bin/env bash
# The read order end to end (order_e2e.py): a loader announces the order it
# will open files in over the mount's control socket; s3sim's counters and
# the mount's metrics prove the fetches ahead follow it, bounded.
# Usage: test_order_hint.sh s3sim   (s3rver has no request counters: skipped)
source "$(dirname "${BASH_SOURCE[0]}")/../mount/lib.sh"
[[ "$SERVER" == s3sim ]] || skip "needs s3sim's request counters"
export BUCKETFS_CONTROL_DIR="$TMP/control"
setup_bucket e2e-order
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mount_bucket "$MNT" "s3://$BUCKET" --metrics-addr "127.0.0.1:$PORT"
check "order_e2e.py" timeout 240 python3 "$REPO_ROOT/tests/workloads/order_e2e.py" \
  "$MNT" "$S3_ENDPOINT" "$BUCKET" "http://127.0.0.1:$PORT/metrics"
unmount "$MNT"
finish
