#!/usr/bin/env bash
# bucketfs@.service under a real systemd: a Debian bookworm root booted with
# systemd-nspawn (tests/systemd/container.sh), bucketfs installed into it
# with cmake --install, s3sim on the host's loopback (the container shares
# the host's network). Checks that
#   - `systemctl start bucketfs@data` returns only once the mount answers
#     (a stat and a read right after it work), MAINPID is the daemon and
#     the status line says what it serves;
#   - `systemctl stop` unmounts, with Result=success and exit status 0.
# The first run builds the root (debootstrap, minutes; cached in
# /var/cache/bucketfs-test); 77 only when the Debian mirror is unreachable.
# Usage: e2e_unit_container.sh BUILD_DIR   (root; S3SIM=path/to/s3sim)
set -euo pipefail
build=$(cd "$1" && pwd)
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
source "$here/container.sh"

[[ $(id -u) -eq 0 ]] || { echo "FAIL: needs root (systemd-nspawn)"; exit 1; }
for tool in systemd-nspawn nsenter debootstrap; do
  command -v "$tool" >/dev/null || { echo "FAIL: $tool is missing (mount-tools/install-deps.sh)"; exit 1; }
done
[[ -e /dev/fuse ]] || { echo "FAIL: /dev/fuse is missing"; exit 1; }
S3SIM=${S3SIM:-$build/tests/s3sim/s3sim}
BUCKETFS=$build/mount-tools/bucketfs

failures=0
check() {
  local name=$1; shift
  if "$@"; then echo "ok   $name"; else echo "FAIL $name"; failures=$((failures + 1)); fi
}
TMP=$(mktemp -d /tmp/bucketfs-container-test.XXXXXX)
S3_SERVER_PID=""
finish() {
  local status=$?
  if [[ $status -ne 0 || $failures -ne 0 ]] && [[ -n "$CONTAINER_PID" ]]; then
    echo "--- journal of bucketfs@data inside the container"
    container_exec journalctl -u bucketfs@data --no-pager -n 50 2>&1 || true
  fi
  container_teardown
  [[ -z "$S3_SERVER_PID" ]] || bash "$repo/tests/fixtures/stop-server.sh" "$S3_SERVER_PID" "$S3_SERVER_DIR" || true
  rm -rf "$TMP"
  exit "$status"
}
trap finish EXIT

started=$SECONDS
status=0
container_build_root || status=$?
[[ $status -eq 77 ]] && { echo "SKIP: the Debian mirror cannot be reached"; exit 77; }
[[ $status -eq 0 ]] || exit 1
echo "root ready after $((SECONDS - started)) s"

echo "== s3sim on the host's loopback, a bucket with a file"
env_code=$(S3_SERVER_TMP="$TMP" S3SIM_BIN="$S3SIM" bash "$repo/tests/fixtures/start-server.sh" s3sim --bucket data)
eval "$env_code"
head -c $((5 * 1024 * 1024 + 7)) /dev/urandom >"$TMP/file.bin"
"$BUCKETFS" s3 put "$TMP/file.bin" s3://data/dir/file.bin --endpoint-url "$S3_ENDPOINT" \
  --force-path-style --no-progress >/dev/null
want_sum=$(sha256sum <"$TMP/file.bin" | cut -d' ' -f1)

echo "== boot the container, install bucketfs"
container_stage_install "$build"
boot_started=$SECONDS
container_boot
echo "booted in $((SECONDS - boot_started)) s"
container_install_staged
check "bucketfs runs inside" container_exec bucketfs --version
container_exec sh -c 'mkdir -p /etc/bucketfs && umask 077 && cat >/etc/bucketfs/data.env' <<EOT
BUCKETFS_SOURCE=s3://data
BUCKETFS_MOUNTPOINT=/mnt/data
BUCKETFS_OPTIONS=force_path_style,allow_delete
AWS_ENDPOINT_URL=$S3_ENDPOINT
AWS_REGION=us-east-1
AWS_ACCESS_KEY_ID=$AWS_ACCESS_KEY_ID
AWS_SECRET_ACCESS_KEY=$AWS_SECRET_ACCESS_KEY
EOT

echo "== systemctl start returns once the mount answers"
check "systemctl start bucketfs@data" container_exec timeout 120 systemctl start bucketfs@data
# Right after start returned: no waiting, no retry.
check "the mountpoint is the mount" container_exec sh -c \
  'test "$(stat -c %d /mnt/data)" != "$(stat -c %d /mnt)"'
check "a file reads through it at once" \
  test "$(container_exec sh -c 'sha256sum </mnt/data/dir/file.bin' | cut -d' ' -f1)" = "$want_sum"
main_pid=$(container_exec systemctl show -p MainPID --value bucketfs@data)
check "MAINPID is the bucketfs daemon" \
  test "$(container_exec cat /proc/"$main_pid"/comm 2>/dev/null)" = bucketfs
status_text=$(container_exec systemctl show -p StatusText --value bucketfs@data)
check "the status line says what it serves ($status_text)" \
  grep -q '^serving s3://data at /mnt/data: read ' <<<"$status_text"
check "a write through the mount" container_exec sh -c 'echo hello >/mnt/data/hello.txt'

echo "== systemctl stop unmounts cleanly"
check "systemctl stop bucketfs@data" container_exec timeout 120 systemctl stop bucketfs@data
check "Result=success" test "$(container_exec systemctl show -p Result --value bucketfs@data)" = success
check "exit status 0" test "$(container_exec systemctl show -p ExecMainStatus --value bucketfs@data)" = 0
check "unmounted" container_exec sh -c '! grep -q " /mnt/data " /proc/mounts'
check "the written file reached the bucket" test \
  "$("$BUCKETFS" s3 get s3://data/hello.txt - --endpoint-url "$S3_ENDPOINT" --force-path-style --no-progress)" = hello

echo "test took $((SECONDS - started)) s"
[[ $failures -eq 0 ]] || { echo "$failures check(s) failed"; exit 1; }
echo "all checks passed"
