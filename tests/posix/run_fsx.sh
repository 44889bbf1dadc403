#!/usr/bin/env bash
# The fsx-style random checker (fsx.py) on a bucketfs mount with
# --allow-overwrite: one file, a seeded mix of ops checked against a model,
# and the object in the bucket compared with the model after every close.
#
# Usage: run_fsx.sh s3rver|s3sim [fsx.py args: --seed N --ops N --no-CLASS ...]
#   e.g. run_fsx.sh s3sim --ops 10000 --seed 7 --max-len 40m
# A failing run keeps its op log as /tmp/fsx-SERVER-seedN.log (printed).
# Environment: BUCKETFS, S3SIM (as the tests in tests/mount/).
source "$(dirname "${BASH_SOURCE[0]}")/../mount/lib.sh"
POSIX_DIR="$REPO_ROOT/tests/posix"
shift || true

setup_bucket e2e-fsx
check "mount" mount_bucket "$MNT" "s3://$BUCKET" --allow-overwrite --allow-delete

status=0
timeout $((E2E_BUDGET - 30)) python3 "$POSIX_DIR/fsx.py" --file "$MNT/fsx.bin" --bucket "$BUCKET" \
  --key fsx.bin --log "$TMP/fsx.log" "$@" || status=$?
if [[ $status -eq 0 ]]; then
  echo "ok   fsx: the file and the object match the model"
else
  seed=$(sed -n 's/^# fsx.py --seed \([0-9]*\).*/\1/p' "$TMP/fsx.log")
  cp "$TMP/fsx.log" "/tmp/fsx-$SERVER-seed$seed.log" && echo "op log kept: /tmp/fsx-$SERVER-seed$seed.log"
  echo "FAIL fsx (status $status)"
  FAILURES=$((FAILURES + 1))
fi
check "unmount" unmount "$MNT"
finish
