#!/usr/bin/env bash
# fstab-style mounts end to end: `mount -t bucketfs SOURCE DIR -o ...` runs
# the mount(8) helper mount.bucketfs (linked as /sbin/mount.bucketfs for the
# test, removed at exit), which must accept the generic options fstab lines
# carry (_netdev, nofail, noauto, user, defaults, x-systemd.*) and take the
# credentials from an env file (-o env_file=...); `umount` ends the daemon;
# an fstab line (a private one, mount -T) mounted by `mount -a` and by its mount point.
# Also --env-file's refusals: a file others can read, a missing file, a
# malformed line; and that the secret appears in no log or message.
# Usage: e2e_fstab.sh s3sim|s3rver   (root; BUCKETFS=path/to/bucketfs)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
[[ $(id -u) -eq 0 ]] || skip "mount(8) with a helper needs root"
command -v mount >/dev/null || skip "mount(8) is missing"
setup_bucket e2e-fstab

HELPER=/sbin/mount.bucketfs
if [[ -e "$HELPER" || -L "$HELPER" ]]; then
  skip "$HELPER exists already (an installed bucketfs); not replacing it"
fi
# The helper runs the bucketfs next to its resolved path: a private copy
# beside a link to the binary under test, so an installed one is never used.
mkdir -p "$TMP/helper"
cp "$REPO_ROOT/mount-tools/mount.bucketfs" "$TMP/helper/mount.bucketfs"
ln -s "$BUCKETFS" "$TMP/helper/bucketfs"
ln -s "$TMP/helper/mount.bucketfs" "$HELPER"
remove_helper() { [[ "$(readlink "$HELPER" 2>/dev/null)" == "$TMP/helper/mount.bucketfs" ]] && rm -f "$HELPER"; }
trap 'remove_helper; cleanup' EXIT

SECRET="$AWS_SECRET_ACCESS_KEY"
ENVF="$TMP/creds.env"
cat >"$ENVF" <<EOT
# credentials of the test server
export AWS_ACCESS_KEY_ID=$AWS_ACCESS_KEY_ID
AWS_SECRET_ACCESS_KEY='$SECRET'
AWS_ENDPOINT_URL="$S3_ENDPOINT"
AWS_REGION=us-east-1
BUCKETFS_SOURCE=s3://$BUCKET
SOMETHING_ELSE=1
EOT
chmod 600 "$ENVF"
head -c $((3 * 1024 * 1024 + 11)) /dev/urandom >"$TMP/data.bin"
s3 put "$BUCKET" data.bin <"$TMP/data.bin"

# mount(8) as it runs from fstab: no credentials in its environment.
run_mount() {
  env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY -u AWS_SESSION_TOKEN -u AWS_ENDPOINT_URL \
    timeout 60 mount "$@"
}
OPTS="_netdev,nofail,noauto,user,defaults,x-systemd.automount,x-systemd.device-timeout=10s"
OPTS="$OPTS,env_file=$ENVF,force_path_style,allow_delete,log_file=$TMP/bucketfs-mnt.log"

log "mount -t bucketfs with fstab's generic options"
mkdir -p "$MNT"
MOUNTS+=("$MNT")
check "mount -t bucketfs exits 0" run_mount -t bucketfs "s3://$BUCKET" "$MNT" -o "$OPTS"
check "mounted as fuse.bucketfs" grep -q " $MNT fuse.bucketfs " /proc/mounts
check "file read through the mount" cmp "$TMP/data.bin" "$MNT/data.bin"
check "write through the mount" cp "$TMP/data.bin" "$MNT/copy.bin"
check "written object is complete" test "$(s3 sha256 "$BUCKET" copy.bin)" = \
  "$(sha256sum <"$TMP/data.bin" | cut -d' ' -f1)"
PID=$(pgrep -f -- "$BUCKETFS s3://$BUCKET $MNT" | head -1 || true)
[[ -n "$PID" ]] || PID=$(pgrep -f -- "bucketfs s3://$BUCKET $MNT" | head -1 || true)
check "the daemon runs" test -n "$PID"
check "umount exits 0" timeout 60 umount "$MNT"
check "the daemon exits after umount" timeout 30 tail --pid="${PID:-1}" -f /dev/null
check "no longer mounted" bash -c "! grep -q ' $MNT ' /proc/mounts"

log "an fstab line: mount -a, then umount"
# The README's fstab line, in a private fstab (-T) so /etc/fstab is never touched;
# noauto is left out here because mount -a skips noauto entries.
FSTAB="$TMP/fstab"
printf '# test fstab\ns3://%s %s bucketfs %s 0 0\n' "$BUCKET" "$MNT" \
  "_netdev,nofail,env_file=$ENVF,force_path_style,log_file=$TMP/bucketfs-fstab.log" >"$FSTAB"
check "mount -a -T FSTAB exits 0" run_mount -a -T "$FSTAB" -t bucketfs
check "mount -a mounted the line" grep -q " $MNT fuse.bucketfs " /proc/mounts
check "file read through the fstab mount" cmp "$TMP/data.bin" "$MNT/data.bin"
check "umount of the fstab mount" timeout 60 umount "$MNT"
check "no longer mounted after umount" bash -c "! grep -q ' $MNT ' /proc/mounts"
check "mount MOUNTPOINT finds the line" run_mount -T "$FSTAB" "$MNT"
check "mounted by its mount point" grep -q " $MNT fuse.bucketfs " /proc/mounts
check "umount again" timeout 60 umount "$MNT"

log "env file refusals"
# expect_refusal NAME PATTERN MOUNT_ARGS...: mount fails, prints PATTERN, nothing is mounted.
expect_refusal() {
  local name="$1" pattern="$2"; shift 2
  local out status=0
  out=$(run_mount "$@" 2>&1) || status=$?
  if [[ $status -ne 0 && "$out" == *"$pattern"* ]] && ! grep -q " $MNT " /proc/mounts; then
    echo "ok   $name"
  else
    echo "FAIL $name: status $status, output: $out"
    FAILURES=$((FAILURES + 1))
  fi
  [[ "$out" != *"$SECRET"* ]] || { echo "FAIL $name: the secret was printed"; FAILURES=$((FAILURES + 1)); }
}
chmod 644 "$ENVF"
expect_refusal "a world-readable env file" "accessible by group or others (mode 0644)" \
  -t bucketfs "s3://$BUCKET" "$MNT" -o "env_file=$ENVF,force_path_style"
chmod 600 "$ENVF"
expect_refusal "a missing env file" "$TMP/none.env: No such file or directory" \
  -t bucketfs "s3://$BUCKET" "$MNT" -o "env_file=$TMP/none.env,force_path_style"
printf 'AWS_REGION=us-east-1\nAWS_SECRET_ACCESS_KEY="%s\n' "$SECRET" >"$TMP/bad.env"
chmod 600 "$TMP/bad.env"
expect_refusal "a malformed env file names its line" "bad.env:2: unterminated double quote" \
  -t bucketfs "s3://$BUCKET" "$MNT" -o "env_file=$TMP/bad.env,force_path_style"

log "unknown key: a warning on stderr, the mount still works"
out=$(run_mount -t bucketfs "s3://$BUCKET" "$MNT" -o "env_file=$ENVF,force_path_style" 2>&1) || true
check "warning names file, line and key" grep -q "creds.env:7: unknown key 'SOMETHING_ELSE' (ignored)" <<<"$out"
check "mounted with the warning" grep -q " $MNT fuse.bucketfs " /proc/mounts
check "umount" timeout 60 umount "$MNT"
check "the secret is in no log" bash -c "! grep -rqF -- '$SECRET' '$TMP'/bucketfs-*.log"
finish
