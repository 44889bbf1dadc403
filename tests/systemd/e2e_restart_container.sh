#!/usr/bin/env bash
# Restart without unmounting under a real systemd (tests/systemd/container.sh):
# bucketfs@data serves s3sim on the host's loopback; a reader on the host
# reads a 1 GiB file through the container's mount (/proc/PID/root) at a
# steady pace while
#   - `systemctl restart bucketfs@data` replaces the daemon: the mount stays
#     the same mount (same mount id), the reader finishes with the right
#     checksum, and its longest wait for one read is printed;
#   - the daemon is killed (SIGKILL): Restart=on-failure starts a new one
#     that takes the mount over, and a second reader finishes likewise;
#   - `systemctl stop` then unmounts with Result=success.
# The first run builds the container root (cached); 77 only when the Debian
# mirror is unreachable.
# Usage: e2e_restart_container.sh BUILD_DIR   (root; S3SIM=path/to/s3sim)
set -euo pipefail
build=$(cd "$1" && pwd)
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
source "$here/container.sh"

[[ $(id -u) -eq 0 ]] || { echo "FAIL: needs root (systemd-nspawn)"; exit 1; }
for tool in systemd-nspawn nsenter debootstrap; do
  command -v "$tool" >/dev/null || { echo "FAIL: $tool is missing (mount-tools/install-deps.sh)"; exit 1; }
done
S3SIM=${S3SIM:-$build/tests/s3sim/s3sim}
IO="$repo/tests/mount/handover_io.py"
failures=0
check() {
  local name=$1; shift
  if "$@"; then echo "ok   $name"; else echo "FAIL $name"; failures=$((failures + 1)); fi
}
TMP=$(mktemp -d /tmp/bucketfs-restart-test.XXXXXX)
S3_SERVER_PID=""
finish() {
  local status=$?
  if [[ $status -ne 0 || $failures -ne 0 ]] && [[ -n "$CONTAINER_PID" ]]; then
    echo "--- journal of bucketfs@data inside the container"
    container_exec journalctl -u bucketfs@data --no-pager -n 80 2>&1 || true
  fi
  container_teardown
  [[ -z "$S3_SERVER_PID" ]] || bash "$repo/tests/fixtures/stop-server.sh" "$S3_SERVER_PID" "$S3_SERVER_DIR" || true
  rm -rf "$TMP"
  exit "$status"
}
trap finish EXIT

status=0
container_build_root || status=$?
[[ $status -eq 77 ]] && { echo "SKIP: the Debian mirror cannot be reached"; exit 77; }
[[ $status -eq 0 ]] || exit 1

env_code=$(S3_SERVER_TMP="$TMP" S3SIM_BIN="$S3SIM" bash "$repo/tests/fixtures/start-server.sh" s3sim \
  --bucket data --preload data/big/:1:1G)
eval "$env_code"
want=$(AWS_ENDPOINT_URL="$S3_ENDPOINT" python3 "$repo/tests/mount/s3util.py" sha256 data big/obj-00000)

container_stage_install "$build"
container_boot
container_install_staged
container_exec sh -c 'mkdir -p /etc/bucketfs && umask 077 && cat >/etc/bucketfs/data.env' <<EOT
BUCKETFS_SOURCE=s3://data
BUCKETFS_MOUNTPOINT=/mnt/data
BUCKETFS_OPTIONS=force_path_style
AWS_ENDPOINT_URL=$S3_ENDPOINT
AWS_REGION=us-east-1
AWS_ACCESS_KEY_ID=$AWS_ACCESS_KEY_ID
AWS_SECRET_ACCESS_KEY=$AWS_SECRET_ACCESS_KEY
EOT
check "systemctl start bucketfs@data" container_exec timeout 120 systemctl start bucketfs@data
file="/proc/$CONTAINER_PID/root/mnt/data/big/obj-00000"
mount_id() { container_exec awk '$5 == "/mnt/data" { print $1 }' /proc/self/mountinfo; }
main_pid() { container_exec systemctl show -p MainPID --value bucketfs@data; }
before_id=$(mount_id)

# read_across NAME ACTION: a paced reader of the 1 GiB file; ACTION runs
# once it has read 256 MiB; then the reader must finish with the checksum.
read_across() {
  local name=$1 action=$2 progress="$TMP/progress-$1" out="$TMP/reader-$1"
  rm -f "$progress"
  timeout 600 python3 "$IO" read "$file" "$progress" >"$out" 2>&1 &
  local reader=$!
  local deadline=$((SECONDS + 120))
  until [[ "$(cat "$progress" 2>/dev/null || echo 0)" -ge $((256 << 20)) ]]; do
    [[ $SECONDS -lt $deadline ]] || { echo "reader stuck before the $name"; break; }
    sleep 0.1
  done
  local pid_before; pid_before=$(main_pid)
  local t0=$SECONDS
  eval "$action"
  wait "$reader" || true
  echo "== $name: $(cat "$out") (daemon $pid_before -> $(main_pid))"
  check "$name: the reader read 1 GiB with the right checksum" \
    grep -q "^sha256 $want bytes $((1 << 30)) " "$out"
  check "$name: a new daemon serves" test "$(main_pid)" != "$pid_before"
  check "$name: the mount is the same mount" test "$(mount_id)" = "$before_id"
}

read_across restart "container_exec timeout 120 systemctl restart bucketfs@data"
check "restart: Result=success" test "$(container_exec systemctl show -p Result --value bucketfs@data)" = success
read_across crash 'container_exec kill -9 "$(main_pid)"; sleep 0.5; container_exec sh -c "until systemctl is-active -q bucketfs@data; do sleep 0.2; done"'
# grep without -q: under pipefail an early exit of grep would fail journalctl with SIGPIPE.
took_over() { container_exec journalctl -u bucketfs@data --no-pager | grep 'took the mount over' >/dev/null; }
check "the restarted daemons say they took the mount over" took_over

check "systemctl stop bucketfs@data" container_exec timeout 120 systemctl stop bucketfs@data
check "stop: Result=success" test "$(container_exec systemctl show -p Result --value bucketfs@data)" = success
check "stop: unmounted" container_exec sh -c '! grep -q " /mnt/data " /proc/mounts'
[[ $failures -eq 0 ]] || { echo "$failures check(s) failed"; exit 1; }
echo "all checks passed"
