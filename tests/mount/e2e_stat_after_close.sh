#!/usr/bin/env bash
# Mount end-to-end: a stat right after close() gives the size written, while
# the release that ends the file's upload may still be under way (it is sent
# after close() returns) and while other processes list the directory.
# Writers alone, then writers beside listers (stat_after_close.py).
# Usage: e2e_stat_after_close.sh s3sim|s3rver   (BUCKETFS=path/to/bucketfs)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
setup_bucket e2e-stat-after-close
check "mount" mount_bucket "$MNT" "s3://$BUCKET"
check "8 writers: every stat after close gives the size written" \
  timeout 120 python3 "$E2E_DIR/stat_after_close.py" "$MNT/alone" 15 8 0
check "8 writers beside 4 listers: the same" \
  timeout 120 python3 "$E2E_DIR/stat_after_close.py" "$MNT/listed" 15 8 4
unmount "$MNT"
finish
