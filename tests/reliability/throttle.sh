#!/usr/bin/env bash
# Throttling: s3sim limits the bucket's request rate (503 SlowDown beyond
# it) and bucketfs paces its requests to what the store admits. At a small
# scale, runs fio-jobs/harness/throttle_bench.py (read, write and walk
# phases, fresh server and mount) and asserts its bounds: goodput at least
# THROTTLE_GOODPUT of the limit and at most THROTTLE_503 of requests
# answered 503, for every phase; then checks the mount's metrics show the
# pacing. RELIABILITY_SCALE=full runs the benchmark's full sizes.
source "$(dirname "$0")/../mount/lib.sh"
[[ "$SERVER" == s3sim ]] || skip "the rate limit is s3sim's"
require_env
[[ -n "$S3SIM" && -x "$S3SIM" ]] || skip "s3sim is not built"
BENCH="$REPO_ROOT/fio-jobs/harness/throttle_bench.py"
if [[ "${RELIABILITY_SCALE:-ci}" == full ]]; then
  SCALE_ARGS=()
else
  # The read is long enough (about 7 s) that its start weighs little in its goodput.
  SCALE_ARGS=(--read-size 512M --write-size 256M --walk-dirs 60 --walk-files 10 --rate 20)
fi
GOODPUT_CHECK=(--check-goodput "${THROTTLE_GOODPUT:-0.8}")
# A sanitizer build (E2E_SCALE) may not reach the limit at all: its own CPU
# cost, not the pacing, then bounds goodput, so only the 503 share is judged.
[[ "$SCALE" == 1 ]] || GOODPUT_CHECK=()
check "throttled phases meet the bounds" timeout 900 python3 "$BENCH" \
  --bucketfs "$BUCKETFS" --s3sim "$S3SIM" --modes adaptive "${SCALE_ARGS[@]}" \
  "${GOODPUT_CHECK[@]+"${GOODPUT_CHECK[@]}"}" --check-503 "${THROTTLE_503:-0.1}"

# The metrics show the throttling and the learned rate.
start_server --bucket thr --rate-limit 10 --preload thr/m/:60:5000
PORT=$((20000 + RANDOM % 20000))
mount_bucket "$TMP/mnt" "s3://thr" --metrics-addr "127.0.0.1:$PORT"
timeout 120 find "$TMP/mnt/m" -type f -exec cat {} + >/dev/null
metrics=$(curl -s "http://127.0.0.1:$PORT/metrics")
grep -E "^bucketfs_s3_(throttled_total|paced_requests_total|paced_rate)" <<<"$metrics" || true
value() { awk -v n="$1" '$1 == n { print int($2) }' <<<"$metrics"; }
check "throttled answers counted" test "$(value bucketfs_s3_throttled_total)" -gt 0
check "paced requests counted" test "$(value bucketfs_s3_paced_requests_total)" -gt 0
check "a paced rate is set" test "$(value bucketfs_s3_paced_rate)" -gt 0
unmount "$TMP/mnt"
finish
