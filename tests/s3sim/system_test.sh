#!/usr/bin/env bash
# System test of the s3sim binary: boto3 end-to-end smoke test (an
# independent SigV4 signer), fault injection met by curl and recorded in the
# fault log, fault reproducibility from the seed, the stats endpoint.
# Usage: system_test.sh path/to/s3sim
set -euo pipefail
s3sim="$1"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
tmp="$(mktemp -d /tmp/s3sim_system.XXXXXX)"
pids=()
# Sanitizer builds: each s3sim's reports go to files checked at exit, not to
# its log, which is deleted (a leak or race of a server that ends on SIGTERM
# was reported there and passed unseen).
source "$here/../fixtures/sanitizer.sh"
sanitizer_capture "$tmp/sanitizer"
cleanup() {
  local status=$?
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true  # every server has written its reports
  if ! sanitizer_check "$tmp/sanitizer"; then
    echo "FAIL: sanitizer report(s) above"
    status=1
  fi
  rm -rf "$tmp"
  exit "$status"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
start() {  # start NAME ARGS... ; sets $url
  "$s3sim" --port 0 --port-file "$tmp/$1.port" "${@:2}" >"$tmp/$1.log" 2>&1 &
  pids+=($!)
  # The port file may be written before the log line is: wait for both.
  for _ in $(seq 1 300); do
    [[ -s "$tmp/$1.port" ]] && grep -q "s3sim listening on 127.0.0.1:" "$tmp/$1.log" && break
    sleep 0.1
  done
  grep -q "s3sim listening on 127.0.0.1:" "$tmp/$1.log" || fail "$1 did not start"
  url="http://127.0.0.1:$(cat "$tmp/$1.port")"
}

if python3 -c "import boto3" 2>/dev/null; then
  start smoke --min-part-size 5
  python3 "$here/smoke_boto3.py" "$url"
else
  echo "SKIP boto3 smoke test: python3 boto3 not installed"
fi

# Faults: every non-clean curl outcome must match one fault-log line, and the
# same seed must give the same faults to the same request sequence.
run_faults() {  # run_faults NAME -> prints "seq:fault" lines
  start "$1" --anonymous-ok --preload "f/o/:1:256K" --seed 42 --fail-rate 0.1 \
    --reset-rate 0.2 --truncate-rate 0.2 --stall-rate 0.15 --stall-ms 5000 \
    --fault-ops GetObject --fault-log "$tmp/$1.faults"
  trap 'kill "${pids[-1]}" 2>/dev/null || true' EXIT  # this subshell's own exit
  local clean=0 faulty=0 out rc code size
  for _ in $(seq 1 30); do
    set +e
    out=$(curl -s -o /dev/null --max-time 1 -w "%{http_code} %{size_download}" "$url/f/o/obj-00000")
    rc=$?
    set -e
    read -r code size <<<"$out"
    if [[ $rc == 0 && $code == 200 && $size == 262144 ]]; then
      clean=$((clean + 1))
    else
      faulty=$((faulty + 1))
    fi
  done
  # HEAD is not in --fault-ops, so it never faults.
  for _ in $(seq 1 10); do
    [[ $(curl -s -o /dev/null -I -w "%{http_code}" "$url/f/o/obj-00000") == 200 ]] ||
      fail "HEAD faulted although only GetObject may"
  done
  local logged
  logged=$(wc -l <"$tmp/$1.faults")
  [[ $logged == "$faulty" ]] || fail "$faulty faulty responses but $logged fault-log lines"
  for kind in reset truncate stall; do
    grep -q "\"fault\":\"$kind\"" "$tmp/$1.faults" || fail "no $kind fault in 30 requests"
  done
  grep -qE '"fault":"(internal|slowdown)"' "$tmp/$1.faults" || fail "no 5xx fault"
  echo "faults $1: $clean clean, $faulty faulty, all logged" >&2
  # This runs in a command substitution (a subshell): stop the server here,
  # the EXIT trap of the parent does not know its pid.
  kill "${pids[-1]}" 2>/dev/null || true
  wait "${pids[-1]}" 2>/dev/null || true
  grep -oE '"seq":[0-9]+,"fault":"[a-z]+"' "$tmp/$1.faults"
}
first=$(run_faults faults1)
second=$(run_faults faults2)
[[ "$first" == "$second" ]] || fail "same seed gave different faults"

# Stats endpoint.
start stats --anonymous-ok --bucket s
curl -sf -o /dev/null -T /etc/hostname "$url/s/k"
curl -sf -o /dev/null "$url/s/k"
curl -sf -o /dev/null "$url/s?list-type=2"
stats=$(curl -sf "$url/__s3sim/stats")
[[ $stats == *'"total":3'* && $stats == *'"GetObject":1'* && $stats == *'"PutObject":1'* &&
   $stats == *'"ListObjectsV2":1'* ]] || fail "unexpected stats $stats"
curl -sf -o /dev/null -X POST "$url/__s3sim/reset-stats"
[[ $(curl -sf "$url/__s3sim/stats") == *'"total":0'* ]] || fail "reset-stats did not reset"

# x-amz-checksum-crc32c over the wire: a wrong sum is 400 BadDigest and
# stores nothing, a malformed one 400 InvalidRequest, a right one is stored
# and echoed. CRC32C("123456789") = e3069283, base64 4waSgw==.
start crc --anonymous-ok --bucket c
printf 123456789 >"$tmp/body"
put_crc() {  # put_crc KEY SUM -> "<status> <body>"
  curl -s -D "$tmp/headers" -o "$tmp/resp" -w "%{http_code}" -T "$tmp/body" \
    -H "x-amz-checksum-crc32c: $2" "$url/c/$1"
  echo " $(cat "$tmp/resp")"
}
out=$(put_crc bad AAAAAA==)
[[ $out == "400 "*"<Code>BadDigest</Code>"* ]] || fail "wrong crc32c: $out"
[[ $(curl -s -o /dev/null -w "%{http_code}" "$url/c/bad") == 404 ]] || fail "bad body stored"
out=$(put_crc malformed 'no!')
[[ $out == "400 "*"<Code>InvalidRequest</Code>"* ]] || fail "malformed crc32c: $out"
out=$(put_crc good 4waSgw==)
[[ $out == "200 "* ]] || fail "right crc32c refused: $out"
grep -qi '^x-amz-checksum-crc32c: 4waSgw==' "$tmp/headers" || fail "crc32c not echoed"
[[ $(curl -sf "$url/c/good") == 123456789 ]] || fail "good body not stored"
echo "s3sim system test: PASS"
