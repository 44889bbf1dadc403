# Shared helpers of the mount end-to-end tests (sourced, not run).
#
# Each test script starts its own S3 server (s3rver or s3sim) on a free
# loopback port in a temporary directory, mounts with the built bucketfs
# binary, and always unmounts and stops everything in an EXIT trap. Every
# command that touches a mount runs under `timeout`, so a hung mount fails
# the test instead of blocking CI.
#
# Environment: BUCKETFS (the binary), S3SIM (the s3sim binary; the s3sim
# variant is skipped without it). Exit status 77 means "skipped".

set -euo pipefail

# Debian's python3 first: install-deps.sh puts boto3, numpy and torch there
# (a pyenv or venv python3 earlier on PATH may lack them).
export PATH="/usr/bin:/bin:$PATH"

E2E_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$E2E_DIR/../.." && pwd)"
SERVER="${1:-s3rver}"
BUCKETFS="${BUCKETFS:-}"
S3SIM="${S3SIM:-}"
SKIP=77
# A server started by hand in the caller's shell is not this test's to stop.
unset S3_SERVER_PID S3_SERVER_DIR

# Sanitizer builds run everything several times slower: tests/CMakeLists.txt
# sets E2E_SCALE, and every `timeout SECONDS ...` of these scripts (also in
# their `bash -c` commands) then allows that many times as long.
SCALE="${E2E_SCALE:-1}"
if [[ "$SCALE" != 1 ]]; then
  timeout() {
    if [[ "$1" =~ ^[0-9]+$ ]]; then set -- "$(($1 * SCALE))" "${@:2}"; fi
    command timeout "$@"
  }
  export SCALE
  export -f timeout
fi

TMP="$(mktemp -d /tmp/bucketfs-e2e.XXXXXX)"
# Sanitizer builds: reports of the daemon and s3sim fail the test (cleanup).
source "$REPO_ROOT/tests/fixtures/sanitizer.sh"
sanitizer_capture "$TMP/sanitizer"
MOUNTS=()
PIDS=()
FAILURES=0

# Reads only /proc/mounts: a stat of a hung FUSE mount would hang cleanup.
is_mounted() { awk -v m="$1" '$2 == m { found = 1 } END { exit !found }' /proc/mounts; }

# This test's bucketfs daemons (their arguments hold $TMP).
daemon_pids() {
  ps -eo pid=,args= | awk -v t="$TMP/" -v b="$BUCKETFS" \
    'index($0, b) && index($0, t) && !index($0, "awk") { print $1 }'
}

# Ends every mount of this test at once: aborts its FUSE connection (when
# fusectl is mounted), kills this test's bucketfs daemons by pid (a dead
# daemon fails every pending request instead of leaving it in D state), then
# detaches the mountpoints.
abort_mounts() {
  local dev mnt pid
  awk -v t="$TMP/" 'index($5, t) == 1 { print $3, $5 }' /proc/self/mountinfo |
    while read -r dev mnt; do
      [[ -w "/sys/fs/fuse/connections/${dev#*:}/abort" ]] &&
        echo 1 >"/sys/fs/fuse/connections/${dev#*:}/abort" 2>/dev/null || true
    done
  for pid in $(daemon_pids); do
    kill -9 "$pid" 2>/dev/null || true
  done
  awk -v t="$TMP/" 'index($5, t) == 1 { print $5 }' /proc/self/mountinfo |
    while read -r mnt; do command timeout 10 fusermount3 -uz "$mnt" 2>/dev/null || true; done
}

cleanup() {
  local status=$? m
  [[ -z "${WATCHDOG:-}" ]] || kill "$WATCHDOG" 2>/dev/null || true
  for m in "${MOUNTS[@]+"${MOUNTS[@]}"}"; do
    if is_mounted "$m"; then command timeout 20 fusermount3 -u "$m" 2>/dev/null || true; fi
  done
  # Unmounted daemons end by themselves (and LeakSanitizer checks them at
  # exit); only those still running after 20 s are killed. Cleanup's own
  # timeouts are not scaled: it must end within the 30 s between the
  # watchdog (E2E_BUDGET) and ctest's TIMEOUT.
  local deadline=$((SECONDS + 20))
  while [[ -n "$(daemon_pids)" && $SECONDS -lt $deadline ]]; do sleep 0.2; done
  abort_mounts
  local p
  for p in "${PIDS[@]+"${PIDS[@]}"}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]+"${PIDS[@]}"}"; do
    command timeout 10 tail --pid="$p" -f /dev/null 2>/dev/null || kill -9 "$p" 2>/dev/null || true
  done
  if ! sanitizer_check "$TMP/sanitizer"; then
    echo "FAIL: sanitizer report(s) above"
    status=1
  fi
  # Never recurse into a mount that is still there (it would delete objects).
  if grep -q " $TMP/" /proc/mounts; then
    echo "cleanup: a mount under $TMP is still present; leaving $TMP"
  elif [[ "${BUCKETFS_KEEP_TMP:-0}" == 1 ]]; then
    echo "cleanup: BUCKETFS_KEEP_TMP=1: leaving $TMP"
  else
    rm -rf "$TMP" 2>/dev/null || true
  fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# A hung mount must fail the test, not CI: past the budget (below ctest's
# TIMEOUT of 300 s) the watchdog aborts the mounts, which unblocks whatever
# waits on them, and stops the script (its EXIT trap then cleans up).
E2E_BUDGET="${E2E_BUDGET:-270}"
(
  trap 'kill "$s" 2>/dev/null; exit 0' TERM
  sleep "$E2E_BUDGET" </dev/null >/dev/null 2>&1 &  # no pipe of ours outlives the test
  s=$!
  wait "$s"
  echo "WATCHDOG: over ${E2E_BUDGET}s, aborting the mounts"
  abort_mounts
  kill -TERM $$
) &
WATCHDOG=$!

skip() { echo "SKIP: $*"; exit "$SKIP"; }
log() { echo "== $*"; }

# check NAME COMMAND...: runs the command (under a timeout), records the result.
check() {
  local name="$1"; shift
  local runner=(timeout 120)
  # Shell functions and commands given their own timeout bound their own time
  # (wrapping `timeout 1200 ...` in 120 s cut it short under sanitizers).
  if declare -F "$1" >/dev/null || [[ "$1" == timeout ]]; then runner=(); fi
  if "${runner[@]}" "$@"; then
    echo "ok   $name"
  else
    echo "FAIL $name"
    FAILURES=$((FAILURES + 1))
  fi
}

# expect_errno NAME ERRNO_NAME COMMAND...: the command must fail, and its
# stderr must carry strerror(ERRNO) (e.g. EPERM -> "Operation not permitted").
expect_errno() {
  local name="$1" errname="$2"; shift 2
  local text
  text=$(python3 -c "import errno,os,sys; print(os.strerror(getattr(errno, sys.argv[1])))" "$errname")
  local out status=0
  out=$(timeout 60 "$@" 2>&1) || status=$?
  if [[ $status -ne 0 && "$out" == *"$text"* ]]; then
    echo "ok   $name ($errname)"
  else
    echo "FAIL $name: expected $errname ($text), got status $status: $out"
    FAILURES=$((FAILURES + 1))
  fi
}

finish() {
  if [[ $FAILURES -gt 0 ]]; then
    echo "$FAILURES check(s) failed"
    for f in "$TMP"/*.log; do
      [[ -f "$f" ]] || continue
      echo "--- tail of $f"; tail -n 30 "$f"
    done
    exit 1
  fi
  echo "all checks passed"
  exit 0
}

find_bucketfs() {
  if [[ -z "$BUCKETFS" ]]; then
    local c
    for c in "$REPO_ROOT"/build/mount-tools/bucketfs "$REPO_ROOT"/build-*/mount-tools/bucketfs; do
      [[ -x "$c" ]] && { BUCKETFS="$c"; break; }
    done
  fi
  [[ -x "$BUCKETFS" ]] || { echo "bucketfs binary not found (set BUCKETFS)"; exit 1; }
}

require_env() {
  find_bucketfs
  [[ -e /dev/fuse ]] || skip "/dev/fuse is missing"
  command -v fusermount3 >/dev/null || skip "fusermount3 is missing"
  python3 -c "import boto3" 2>/dev/null || skip "python3-boto3 is missing (apt-get install python3-boto3)"
}

wait_for() {  # wait_for SECONDS COMMAND... (SECONDS times E2E_SCALE)
  local deadline=$((SECONDS + $1 * SCALE)); shift
  until "$@" 2>/dev/null; do
    [[ $SECONDS -lt $deadline ]] || return 1
    sleep 0.1
  done
}

# start_server [server args...]: starts $SERVER with tests/fixtures/start-server.sh
# (its directory under $TMP) and exports S3_ENDPOINT and the credentials it
# accepts (also as AWS_* for bucketfs and boto3).
start_server() {
  export AWS_REGION=us-east-1
  unset AWS_PROFILE AWS_SESSION_TOKEN AWS_ENDPOINT_URL 2>/dev/null || true
  export AWS_CONFIG_FILE="$TMP/no-config" AWS_SHARED_CREDENTIALS_FILE="$TMP/no-credentials"
  case "$SERVER" in
    s3rver)
      export S3RVER_BIN="$REPO_ROOT/tests/node_modules/.bin/s3rver"
      [[ -x "$S3RVER_BIN" ]] || skip "s3rver is not installed (run mount-tools/install-deps.sh)"
      ;;
    s3sim)
      [[ -n "$S3SIM" && -x "$S3SIM" ]] || {
        local c
        for c in "$REPO_ROOT"/build/tests/s3sim/s3sim "$REPO_ROOT"/build-*/tests/s3sim/s3sim; do
          [[ -x "$c" ]] && { S3SIM="$c"; break; }
        done
      }
      [[ -n "$S3SIM" && -x "$S3SIM" ]] || skip "s3sim is not built (target s3sim)"
      export S3SIM_BIN="$S3SIM"
      ;;
    *) echo "unknown server '$SERVER' (s3rver or s3sim)"; exit 2 ;;
  esac
  local env
  env=$(S3_SERVER_TMP="$TMP" S3_SERVER_WAIT=$((60 * SCALE)) \
        bash "$REPO_ROOT/tests/fixtures/start-server.sh" "$SERVER" "$@") ||
    { echo "$SERVER did not start"; exit 1; }
  eval "$env"
  # Every command of the tests names its endpoint; a default would hide one that does not.
  unset AWS_ENDPOINT_URL
  PIDS+=("$S3_SERVER_PID")
  ln -sf "$S3_SERVER_DIR/server.log" "$TMP/server.log"
  echo "server $SERVER at $S3_ENDPOINT"
}

# stop_server: stops the server start_server started last and waits for it.
stop_server() {
  S3_SERVER_STOP_WAIT=$((10 * SCALE)) bash "$REPO_ROOT/tests/fixtures/stop-server.sh" \
    "$S3_SERVER_PID" "$S3_SERVER_DIR"
  local p kept=()
  for p in "${PIDS[@]+"${PIDS[@]}"}"; do [[ "$p" == "$S3_SERVER_PID" ]] || kept+=("$p"); done
  PIDS=("${kept[@]+"${kept[@]}"}")
}

s3() { timeout 120 python3 "$E2E_DIR/s3util.py" "$@"; }
# same_as KEY [FILE]: the object KEY of $BUCKET holds exactly FILE's bytes
# (standard input without FILE).
same_as() { test "$(s3 sha256 "$BUCKET" "$1")" = "$(sha256sum <"${2:-/dev/stdin}" | cut -d' ' -f1)"; }

# setup_bucket BUCKET [start_server args...]: the start most tests share:
# checks the environment, starts the server and creates BUCKET. Sets BUCKET,
# MNT (the test's mountpoint) and LOG (the log mount_bucket writes for MNT).
setup_bucket() {
  BUCKET="$1"; shift
  require_env
  start_server "$@"
  s3 mkbucket "$BUCKET"
  MNT="$TMP/mnt"
  LOG="$TMP/bucketfs-mnt.log"
}

# s3sim only: the requests it answered since it started or reset_stats.
requests() { curl -s "$S3_ENDPOINT/__s3sim/stats" | python3 -c 'import json,sys; print(json.load(sys.stdin)["total"])'; }
reset_stats() { curl -s -X POST "$S3_ENDPOINT/__s3sim/reset-stats" >/dev/null; }

# mount_bucket MOUNTPOINT SOURCE [bucketfs options...]: mounts (detached)
# and registers the mountpoint for cleanup. Returns bucketfs's status.
mount_bucket() {
  local mnt="$1" source="$2"; shift 2
  mkdir -p "$mnt"
  MOUNTS+=("$mnt")
  timeout 60 "$BUCKETFS" "$source" "$mnt" --endpoint-url "$S3_ENDPOINT" --force-path-style \
    --log-file "$TMP/bucketfs-$(basename "$mnt").log" --log-level debug "$@"
}

# mount_pid MOUNTPOINT: the pid of the bucketfs daemon serving it (empty if none).
mount_pid() { pgrep -f -- "$BUCKETFS .* $1( |$)" | head -1 || true; }

# free_port: a loopback TCP port nothing listens on now.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# dump_stacks PID: every thread's stack of a daemon that should have ended,
# so that a hang on a machine we cannot log into says where it waits.
dump_stacks() {
  command -v gdb >/dev/null || { echo "(no gdb: no stacks)"; return 0; }
  echo "--- threads of $1"
  command timeout 60 gdb -p "$1" -batch -nx -ex "set pagination off" \
    -ex "thread apply all bt 30" 2>/dev/null | grep -E '^(Thread|#)' | head -400 || true
}

# unmount MOUNTPOINT: unmounts and waits until the daemon has finished
# (uploads flushed), so the bucket can be inspected afterwards.
# A failure says which step failed and shows the daemon's last log lines: a
# bare non-zero status under `set -e` ends the script without a word.
unmount() {
  local mnt="$1"
  local pid log="$TMP/bucketfs-$(basename "$1").log"
  pid=$(mount_pid "$mnt")
  local dev
  dev=$(awk -v m="$mnt" '$5 == m { print $3 }' /proc/self/mountinfo | head -1)
  if ! timeout 30 fusermount3 -u "$mnt"; then
    echo "FAIL unmount $mnt: fusermount3 -u failed or took over 30 s; open files:"
    timeout 10 fuser -vm "$mnt" 2>&1 | head -20 || true
    fusermount3 -uz "$mnt" || true
    [[ ! -f "$log" ]] || { echo "--- tail of $log"; tail -n 40 "$log"; }
    return 1
  fi
  if [[ -n "$pid" ]] && ! timeout 60 tail --pid="$pid" -f /dev/null; then
    echo "FAIL unmount $mnt: daemon $pid still running 60 s after the unmount"
    [[ ! -f "$log" ]] || { echo "--- tail of $log"; tail -n 40 "$log"; }
    local holders
    holders=$(grep -l " $dev / $mnt " /proc/[0-9]*/mountinfo 2>/dev/null | head -5 || true)
    if [[ -n "$dev" && -n "$holders" ]]; then
      echo "the mount lives on in another mount namespace (its daemon sees no unmount), of:"
      for f in $holders; do
        f=${f%/mountinfo}; echo "  pid ${f#/proc/}: $(tr '\0' ' ' <"$f/cmdline" 2>/dev/null | head -c 120)"
      done
    fi
    dump_stacks "$pid"
    return 1
  fi
}

# sums DIR: "sha256  relative/path" for every file, sorted.
sums() { (cd "$1" && timeout 120 find . -type f -print0 | sort -z | timeout 300 xargs -0 -r sha256sum); }
