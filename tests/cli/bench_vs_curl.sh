#!/usr/bin/env bash
# The yardstick check of the direct client: one 1 GiB object on a local server, read by
#   bucketfs s3 bench get --connections 8 --part-size 8M|16M
# and by 8 parallel `curl -r` range requests of 128 MiB each, in the same run.
#   bash tests/cli/bench_vs_curl.sh path/to/bucketfs [s3rver|s3sim] [rounds]
# curl's CPU is the user+sys of all eight processes (/usr/bin/time around a
# shell that runs them); bucketfs reports its own (getrusage) and is also timed.
# curl goes unsigned: s3rver serves anonymous GETs, and curl 7.88's
# --aws-sigv4 omits x-amz-content-sha256, which s3rver rejects (400).
# (s3sim needs --anonymous-ok for that; passed below.)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bucketfs="$1"
kind="${2:-s3rver}"
rounds="${3:-3}"
extra=()
[ "$kind" = s3sim ] && extra=(--anonymous-ok)
eval "$(bash "$here/../fixtures/start-server.sh" "$kind" --bucket bench "${extra[@]+"${extra[@]}"}")"
trap stop_s3_server EXIT
"$bucketfs" s3 --no-progress bench put s3://bench/big --size 1G --connections 4 --part-size 16M
size=1073741824
n=8
part=$((size / n))
curl_run() {
  for i in $(seq 0 $((n - 1))); do
    a=$((i * part))
    curl -s -f -r "$a-$((a + part - 1))" -o /dev/null -w "%{http_code} %{size_download}\n" \
      "$S3_ENDPOINT/bench/big" &
  done
  wait
}
export -f curl_run
export n part S3_ENDPOINT
for round in $(seq "$rounds"); do
  echo "== round $round"
  /usr/bin/time -f "curl x8 ranges: wall %e s, user %U s, sys %S s" bash -c curl_run | sort | uniq -c
  for ps in 8M 16M; do
    /usr/bin/time -f "bucketfs (process): wall %e s, user %U s, sys %S s" \
      "$bucketfs" s3 bench get s3://bench/big --connections 8 --part-size "$ps"
  done
done
