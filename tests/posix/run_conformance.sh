#!/usr/bin/env bash
# POSIX conformance of a bucketfs mount (conformance.py): one list of
# operations in a local directory and in a fresh directory of a mount with
# --allow-delete --allow-overwrite --allow-dir-rename, compared operation by
# operation against the accepted differences in expected_differences.
#
# Usage: run_conformance.sh s3rver|s3sim [--peer s3fs|rclone] [conformance.py args]
#   --peer: by hand, not in CI: the same operations on s3fs or on rclone
#   mount --vfs-cache-mode writes over the same server, figures only.
# Environment: BUCKETFS, S3SIM (as the tests in tests/mount/).
source "$(dirname "${BASH_SOURCE[0]}")/../mount/lib.sh"
POSIX_DIR="$REPO_ROOT/tests/posix"
shift || true
PEER=""
if [[ "${1:-}" == --peer ]]; then PEER="$2"; shift 2; fi

setup_bucket e2e-conformance
mkdir -p "$TMP/local"

# s3rver dies on keys of 255 bytes or more: names that long are tested on s3sim.
SKIP_OPS=()
[[ "$SERVER" == s3rver ]] && SKIP_OPS=(--skip "long_names,long_path,path_over_1024_bytes")

case "$PEER" in
  "")
    # CONFORMANCE_MOUNT_OPTS: more mount options (--preserve-attrs, with its own --expected list).
    # shellcheck disable=SC2086
    check "mount" mount_bucket "$MNT" "s3://$BUCKET" --allow-delete --allow-overwrite --allow-dir-rename \
      ${CONFORMANCE_MOUNT_OPTS:-}
    REPORT=()
    ;;
  s3fs)
    command -v s3fs >/dev/null || skip "s3fs is not installed"
    mkdir -p "$MNT"; MOUNTS+=("$MNT")
    printf '%s:%s\n' "$AWS_ACCESS_KEY_ID" "$AWS_SECRET_ACCESS_KEY" >"$TMP/s3fs.passwd"
    chmod 600 "$TMP/s3fs.passwd"
    check "s3fs mounts" timeout 30 s3fs "$BUCKET" "$MNT" -o passwd_file="$TMP/s3fs.passwd" \
      -o url="$S3_ENDPOINT" -o use_path_request_style -o endpoint=us-east-1 \
      -o logfile="$TMP/s3fs.log"
    REPORT=(--report-only)
    ;;
  rclone)
    command -v rclone >/dev/null || skip "rclone is not installed"
    mkdir -p "$MNT"; MOUNTS+=("$MNT")
    # rclone's remote "s3:" from the environment; it wants no AWS_CA_BUNDLE.
    check "rclone mounts" env -u AWS_CA_BUNDLE RCLONE_CONFIG_S3_TYPE=s3 RCLONE_CONFIG_S3_PROVIDER=Other \
      RCLONE_CONFIG_S3_ENDPOINT="$S3_ENDPOINT" RCLONE_CONFIG_S3_ACCESS_KEY_ID="$AWS_ACCESS_KEY_ID" \
      RCLONE_CONFIG_S3_SECRET_ACCESS_KEY="$AWS_SECRET_ACCESS_KEY" RCLONE_CONFIG_S3_REGION=us-east-1 \
      RCLONE_CONFIG_S3_FORCE_PATH_STYLE=true \
      rclone mount "s3:$BUCKET" "$MNT" --daemon --vfs-cache-mode writes \
      --cache-dir "$TMP/rclone-cache" --log-file "$TMP/rclone.log"
    wait_for 30 is_mounted "$MNT" || { echo "rclone did not mount"; exit 1; }
    REPORT=(--report-only)
    ;;
  *) echo "unknown peer '$PEER' (s3fs or rclone)"; exit 2 ;;
esac

check "conformance: only listed differences" timeout $((E2E_BUDGET - 30)) \
  python3 "$POSIX_DIR/conformance.py" --local "$TMP/local" --mount "$MNT" \
  "${SKIP_OPS[@]+"${SKIP_OPS[@]}"}" "${REPORT[@]+"${REPORT[@]}"}" "$@"
check "unmount" unmount "$MNT"
finish
