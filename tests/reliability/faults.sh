#!/usr/bin/env bash
# Faults on a real mount: s3sim injects every kind of fault (500/503, a
# connection reset in the middle of a body, a body cut short, a body that
# stalls) and the mount must still give the right bytes, or EIO, never a
# short file nor a wrong byte.
#
#   faults.sh [s3sim]      CI scale (RELIABILITY_SCALE=full: 1 GiB read, 1 GiB
#                          written, 10,000 keys walked)
#
# Phases: (1) 5% of requests fault: sequential and random reads equal the
# source, written files become identical objects, a listing walk is
# complete; the fault log shows every kind met (counts printed). (2) Beyond
# the retry budget: reads fail with EIO, close() of a write fails and no
# object appears. (3) Stalled bodies: abandoned after --stall-timeout and
# retried; when every attempt stalls the read fails with EIO within
# 2 x attempts x (stall-timeout + 1 s) + 1 s.
source "$(dirname "$0")/../mount/lib.sh"
FAULT_IO="$(cd "$(dirname "$0")" && pwd)/fault_io.py"
fio_() { python3 "$FAULT_IO" "$@"; }
[[ "$SERVER" == s3sim ]] || skip "fault injection needs s3sim"

if [[ "${RELIABILITY_SCALE:-ci}" == full ]]; then
  FILES=8 SIZE=$((128 << 20)) KEYS=10000 RANDOM_READS=4000
else
  FILES=4 SIZE=$((16 << 20)) KEYS=2000 RANDOM_READS=600
fi
BUCKET=faults
STALL_TIMEOUT=2
require_env

restart_server() {  # restart_server [s3sim args]: a fresh server holding BUCKET
  [[ -z "${S3_SERVER_PID:-}" ]] || stop_server
  start_server --bucket "$BUCKET" "$@"
}
served() {  # what s3sim answered since it started or reset_stats
  curl -s "$S3_ENDPOINT/__s3sim/stats" | python3 -c 'import json, sys
s = json.load(sys.stdin); o = s["ops"]
print(s["total"], "requests,", o.get("GetObject", 0) + o.get("ListObjectsV2", 0), "GETs")'
}

log "source: $FILES files of $((SIZE >> 20)) MiB"
fio_ make-source "$TMP/src" "$FILES" "$SIZE" 25

# --- (1) 5% of requests fault, every kind.
# Meeting every kind is certain, not likely: s3sim's fault sequences start
# over when the mount starts (restart-faults), its requests' faults then
# depend on their number only, and GET bodies' faults on the number of the
# GET only, whatever the order of the mount's concurrent requests. With seed
# 323 the mount's requests 37 and 99 answer 503 and 500, and its GETs with a
# body 16, 19 and 20 are cut short, reset and stalled; at CI scale the
# phase makes about 1,000 requests and over 200 such GETs (printed below).
FAULTS=(--fail-rate 0.02 --reset-rate 0.01 --truncate-rate 0.01 --stall-rate 0.02
        --stall-ms 60000 --seed 323 --fault-log "$TMP/faults.jsonl")
restart_server "${FAULTS[@]}"
fio_ put "$TMP/src" "$BUCKET" "read/"
s3 put-many "$BUCKET" "walk/k" "$KEYS" 1 ||
  s3 put-many "$BUCKET" "walk/k" "$KEYS" 1  # put-many stops at the first error: once more
curl -sf -X POST "$S3_ENDPOINT/__s3sim/restart-faults" >/dev/null
reset_stats
since=$(date +%s.%N)
M="$TMP/mnt"
mount_bucket "$M" "s3://$BUCKET" --stall-timeout "$STALL_TIMEOUT" --metadata-ttl 0
check "sequential reads equal the source" timeout 600 python3 "$FAULT_IO" seq-read "$M/read" "$TMP/src"
check "random reads equal the source" \
  timeout 600 python3 "$FAULT_IO" rand-read "$M/read" "$TMP/src" "$RANDOM_READS" 7
mkdir -p "$M/written" 2>/dev/null || true
check "writes complete" timeout 600 python3 "$FAULT_IO" write "$M/written" "$TMP/src"
walk() {
  local n
  n=$(timeout 300 find "$M/walk" -type f | wc -l)
  echo "walk: $n of $KEYS files"
  [[ "$n" == "$KEYS" ]]
}
check "listing walk is complete" walk
unmount "$M"
until=$(date +%s.%N)
mount_served=$(served)
check "written objects equal the source" \
  timeout 600 python3 "$FAULT_IO" verify-objects "$BUCKET" "written/" "$TMP/src"
counts=$(fio_ fault-counts "$TMP/faults.jsonl" "$since" "$until")
echo "faults met by the mount, by kind: $counts ($mount_served since the mount)"
for kind in internal slowdown reset truncate stall; do
  check "fault kind $kind met" python3 -c \
    "import json,sys; sys.exit(0 if json.loads(sys.argv[1]).get(sys.argv[2], 0) > 0 else 1)" \
    "$counts" "$kind"
done

# --- (2) Beyond the retry budget.
# Every GET body cut short or reset: a read gets the right bytes (each
# attempt resumes where the last stopped) or EIO, never a short file.
restart_server --reset-rate 0.5 --truncate-rate 0.5 --fault-ops GetObject --seed 3
fio_ put "$TMP/src" "$BUCKET" "read/"
M2="$TMP/mnt2"
mount_bucket "$M2" "s3://$BUCKET" --retry-attempts 2
budget=$(timeout 300 python3 "$FAULT_IO" budget-read "$M2/read" "$TMP/src") || budget="failed: $budget"
echo "beyond the budget (cut bodies): $budget"
check "cut bodies: right bytes or EIO, never a short file" test "${budget%% *}" = complete
check "cut bodies: some reads ran out of attempts (EIO)" bash -c "[[ '$budget' =~ eio\ [1-9] ]]"
unmount "$M2"

# Every GET fails: EIO at the first read.
restart_server --fail-rate 1 --fault-ops GetObject
fio_ put "$TMP/src" "$BUCKET" "read/"
M3="$TMP/mnt3"
mount_bucket "$M3" "s3://$BUCKET" --retry-attempts 3
expect_errno "read fails with EIO" EIO head -c 1 "$M3/read/src-000"
unmount "$M3"

# Every PUT and part fails: close() reports it, no object appears.
restart_server --fail-rate 1 --fault-ops PutObject,UploadPart
M4="$TMP/mnt4"
mount_bucket "$M4" "s3://$BUCKET" --retry-attempts 2
close_fails() {
  timeout 300 python3 - "$1" "$2" <<'PY'
import os, sys
try:
    with open(sys.argv[1], "wb") as f:
        f.write(os.urandom(int(sys.argv[2])))
except OSError as e:
    print(f"write/close failed as expected: {e}")
    sys.exit(0)
print("close() succeeded although every upload request failed")
sys.exit(1)
PY
}
check "small file: close() fails" close_fails "$M4/small.bin" 4096
check "large file: write or close() fails" close_fails "$M4/large.bin" $((40 << 20))
# From a listing that succeeded: a failed request must not pass for "absent".
absent() {
  local keys
  keys=$(s3 list "$BUCKET") || { echo "listing failed"; return 1; }
  ! cut -f1 <<<"$keys" | grep -qxF "$1"
}
check "no object small.bin" absent small.bin
check "no object large.bin" absent large.bin
unmount "$M4"

# --- (3) Stalled bodies.
# A stalled body is abandoned when no byte came for --stall-timeout, seen
# within a second: an attempt that stalls ends within STALL_TIMEOUT + 1 s.
# Seed 457 stalls the mount's GETs 1, 5, 18, 38 and 98 and no other of its
# first 100 (at CI scale it makes about 25, printed below): a read meets
# stalls, and no GET can meet one in each of its 6 attempts. A body stalls
# for 10 minutes: a read that did not abandon it would outlast the check's
# timeout.
restart_server --stall-rate 0.1 --stall-ms 600000 --fault-ops GetObject --seed 457 \
  --fault-log "$TMP/stalls.jsonl"
fio_ put "$TMP/src" "$BUCKET" "read/"
reset_stats
M5="$TMP/mnt5"
mount_bucket "$M5" "s3://$BUCKET" --stall-timeout "$STALL_TIMEOUT"
check "stalled bodies are abandoned and retried" \
  timeout 120 python3 "$FAULT_IO" seq-read "$M5/read" "$TMP/src"
unmount "$M5"
stalls=$(fio_ fault-counts "$TMP/stalls.jsonl" 0 1e12)
echo "faults met while reading: $stalls ($(served))"
check "stalls met while reading" python3 -c \
  "import json,sys; sys.exit(0 if json.loads(sys.argv[1]).get('stall', 0) > 0 else 1)" "$stalls"
# Every attempt stalls: a FUSE read fails after ATTEMPTS stalls and their
# backoff (under 0.5 s); the kernel asks once more for the page a failed
# read-ahead did not fill, so the application waits at most twice that.
ATTEMPTS=3
STALL_BOUND=$((2 * ATTEMPTS * (STALL_TIMEOUT + 1) + 1))
restart_server --stall-rate 1 --stall-ms 600000 --fault-ops GetObject
fio_ put "$TMP/src" "$BUCKET" "read/"
M6="$TMP/mnt6"
mount_bucket "$M6" "s3://$BUCKET" --stall-timeout "$STALL_TIMEOUT" --retry-attempts "$ATTEMPTS"
start=$(date +%s.%N)
expect_errno "every attempt stalls: EIO" EIO head -c $((1 << 20)) "$M6/read/src-000"
elapsed=$(python3 -c "import sys, time; print(f'{time.time() - float(sys.argv[1]):.1f}')" "$start")
echo "stalled read failed after ${elapsed}s ($ATTEMPTS attempts, --stall-timeout $STALL_TIMEOUT, bound ${STALL_BOUND}s)"
check "stalled read failed within ${STALL_BOUND}s" \
  python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) <= float(sys.argv[2]) else 1)" \
  "$elapsed" "$STALL_BOUND"
unmount "$M6"
finish
