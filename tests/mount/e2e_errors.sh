#!/usr/bin/env bash
# Mount end-to-end: failures are reported at mount time with a clear message
# and the documented exit status, and the fstab paths (mount.fuse3 for type
# fuse.bucketfs, mount.bucketfs for type bucketfs) and -f work.
#   unknown option          -> exit 2, names the option, nothing mounted
#   missing bucket          -> exit 1, "bucket 'x' does not exist"
#   bad credentials (s3sim) -> exit 1, "access ... was refused"
#   non-empty mountpoint    -> exit 1
# Usage: e2e_errors.sh s3rver|s3sim
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
setup_bucket e2e-errors
s3 put "$BUCKET" hello.txt 11

# expect_mount_failure NAME STATUS TEXT MOUNTPOINT COMMAND...: the command
# must exit with STATUS, print TEXT, and leave nothing mounted.
expect_mount_failure() {
  local name="$1" want="$2" text="$3" mnt="$4"; shift 4
  MOUNTS+=("$mnt")
  local out status=0
  out=$(timeout 60 "$@" 2>&1) || status=$?
  if [[ $status -eq $want && "$out" == *"$text"* ]] && ! grep -q " $mnt " /proc/mounts; then
    echo "ok   $name (exit $status: $out)"
  else
    echo "FAIL $name: want exit $want and '$text', got exit $status: $out"
    FAILURES=$((FAILURES + 1))
  fi
}

M="$TMP/mnt"
mkdir -p "$M"
common=(--endpoint-url "$S3_ENDPOINT" --force-path-style)
expect_mount_failure "unknown option" 2 "unknown option '--bogus'" "$M" \
  "$BUCKETFS" "s3://$BUCKET" "$M" "${common[@]}" --bogus
expect_mount_failure "unknown -o option" 2 "unknown mount option 'bogus'" "$M" \
  "$BUCKETFS" "s3://$BUCKET" "$M" -o "endpoint_url=$S3_ENDPOINT,force_path_style,bogus=1"
expect_mount_failure "missing bucket" 1 "bucket 'no-such-bucket' does not exist" "$M" \
  "$BUCKETFS" "s3://no-such-bucket" "$M" "${common[@]}"
expect_mount_failure "missing bucket, foreground" 1 "bucket 'no-such-bucket' does not exist" "$M" \
  "$BUCKETFS" "s3://no-such-bucket" "$M" "${common[@]}" -f
expect_mount_failure "missing mountpoint" 1 "No such file or directory" "$TMP/none/x" \
  "$BUCKETFS" "s3://$BUCKET" "$TMP/none/x" "${common[@]}"
mkdir -p "$TMP/full" && touch "$TMP/full/file"
expect_mount_failure "non-empty mountpoint" 1 "not empty" "$TMP/full" \
  "$BUCKETFS" "s3://$BUCKET" "$TMP/full" "${common[@]}"
if [[ "$SERVER" == s3sim ]]; then
  expect_mount_failure "bad credentials" 1 "was refused" "$M" \
    env AWS_SECRET_ACCESS_KEY=wrong-secret "$BUCKETFS" "s3://$BUCKET" "$M" "${common[@]}"
  expect_mount_failure "unknown access key" 1 "was refused" "$M" \
    env AWS_ACCESS_KEY_ID=nobody "$BUCKETFS" "s3://$BUCKET" "$M" "${common[@]}"
fi

log "fstab: type fuse.bucketfs (mount(8) runs mount.fuse3 -t fuse.bucketfs, which runs bucketfs)"
# mount(8) itself resets PATH for its helpers, so a test cannot point it at a
# build tree; this is the exact call it makes.
BINDIR="$(dirname "$BUCKETFS")"
F="$TMP/mnt-fstab"
mkdir -p "$F"
MOUNTS+=("$F")
check "mount.fuse3 SOURCE DIR -t fuse.bucketfs -o ..." env PATH="$BINDIR:$PATH" timeout 60 \
  mount.fuse3 "s3://$BUCKET" "$F" -t fuse.bucketfs \
  -o "rw,endpoint_url=$S3_ENDPOINT,force_path_style,allow_delete,_netdev,nofail,noatime,x-systemd.automount,log_file=$TMP/fstab1.log"
check "mounted with the fstab options" test "$(cat "$F/hello.txt" | wc -c)" -eq 11
check "/proc/mounts shows fuse.bucketfs" grep -q " $F fuse.bucketfs " /proc/mounts
check "umount" timeout 30 umount "$F"

log "fstab: type bucketfs through mount.bucketfs"
check "mount.bucketfs SOURCE DIR -o ..." env BUCKETFS_BIN="$BUCKETFS" timeout 60 \
  "$E2E_DIR/../../mount-tools/mount.bucketfs" "s3://$BUCKET" "$F" -n \
  -o "rw,defaults,endpoint_url=$S3_ENDPOINT,force_path_style,log_file=$TMP/fstab2.log"
check "mounted" test -f "$F/hello.txt"
check "umount" timeout 30 umount "$F"
check "mount.bucketfs -f (fake) mounts nothing" env BUCKETFS_BIN="$BUCKETFS" \
  "$E2E_DIR/../../mount-tools/mount.bucketfs" "s3://$BUCKET" "$F" -f -o ro
check "nothing mounted" bash -c "! grep -q ' $F ' /proc/mounts"

log "foreground: -f serves until SIGTERM, then unmounts and exits 0"
FG="$TMP/mnt-fg"
mkdir -p "$FG"
MOUNTS+=("$FG")
"$BUCKETFS" "s3://$BUCKET" "$FG" "${common[@]}" -f --log-file "$TMP/fg.log" &
fg_pid=$!
PIDS+=("$fg_pid")
check "foreground mount serves" wait_for 30 test -f "$FG/hello.txt"
kill -TERM "$fg_pid"
fg_status=0
timeout 30 tail --pid="$fg_pid" -f /dev/null || true
wait "$fg_pid" || fg_status=$?
check "exit status 0 after SIGTERM" test "$fg_status" -eq 0
check "unmounted after SIGTERM" bash -c "! grep -q ' $FG ' /proc/mounts"

finish
