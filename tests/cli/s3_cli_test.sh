#!/usr/bin/env bash
# End-to-end test of `bucketfs s3` against a live server it starts itself:
#   bash tests/cli/s3_cli_test.sh s3rver|s3sim path/to/bucketfs
# put (single and multipart) / get (file, directory, stdout) / ls / rm /
# mb / bench, byte-exact comparisons, and the one-line error format.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
kind="$1"
bucketfs="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"
work="$(mktemp -d /tmp/bucketfs-cli-test-XXXXXX)"

server_args=()
if [ "$kind" = s3sim ]; then
  if [ -z "${S3SIM_BIN:-}" ] || [ ! -x "${S3SIM_BIN}" ]; then
    echo "SKIP: s3sim not built"; rm -rf "$work"; exit 0
  fi
  server_args=(--min-part-size 1M)
fi
# Sanitizer builds: a report of s3sim or of a `bucketfs s3` expected to fail
# must fail the test (the check runs after s3sim has stopped).
source "$here/../fixtures/sanitizer.sh"
sanitizer_capture "$work/sanitizer"
eval "$(bash "$here/../fixtures/start-server.sh" "$kind" "${server_args[@]+"${server_args[@]}"}")"
finish() {
  local status=$?
  stop_s3_server
  sanitizer_check "$work/sanitizer" || { echo "FAIL: sanitizer report(s) above"; status=1; }
  rm -rf "$work"
  exit "$status"
}
trap finish EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
s3() { "$bucketfs" s3 --no-progress "$@"; }
step() { echo "--- $*"; }

bucket="cli-$kind-$$"
step mb
s3 mb "s3://$bucket" | grep -q "make_bucket: $bucket" || fail "mb"

head -c 10000 /dev/urandom >"$work/small"
head -c $((12 * 1024 * 1024 + 321)) /dev/urandom >"$work/big"  # 3 parts of 5M
: >"$work/empty"

step put
s3 put "$work/small" "s3://$bucket/dir/small file+1.bin"
s3 put --part-size 5M --connections 4 "$work/big" "s3://$bucket/dir/big.bin"
s3 put "$work/empty" "s3://$bucket/empty"
s3 put "$work/small" "s3://$bucket/dir/sub/"  # key from the file name

step get
s3 get "s3://$bucket/dir/small file+1.bin" "$work/small.out"
cmp "$work/small" "$work/small.out" || fail "small differs"
s3 get --part-size 1M --connections 8 "s3://$bucket/dir/big.bin" "$work/big.out"
cmp "$work/big" "$work/big.out" || fail "big differs"
s3 get --part-size 1M "s3://$bucket/dir/big.bin" - >"$work/big.stdout"
cmp "$work/big" "$work/big.stdout" || fail "big via stdout differs"
mkdir "$work/into"
s3 get "s3://$bucket/dir/sub/small" "$work/into"
cmp "$work/small" "$work/into/small" || fail "get into a directory"
s3 get "s3://$bucket/empty" "$work/empty.out"
[ -f "$work/empty.out" ] && [ ! -s "$work/empty.out" ] || fail "empty object"
s3 get "s3://$bucket/dir/small file+1.bin" /dev/null

step ls
s3 ls | grep -q " $bucket\$" || fail "ls buckets"
out="$(s3 ls "s3://$bucket/dir/")"
echo "$out"
echo "$out" | grep -q "PRE sub/" || fail "ls PRE"
echo "$out" | grep -Eq " 12583233 big.bin\$" || fail "ls big size"
echo "$out" | grep -q " small file+1.bin\$" || fail "ls small"
[ "$(s3 ls --recursive --page-size 1 "s3://$bucket/" | wc -l)" = 4 ] || fail "ls --recursive paging"

step errors
if s3 get "s3://$bucket/missing" "$work/x" 2>"$work/err"; then fail "missing key succeeded"; fi
cat "$work/err"
grep -q "^bucketfs s3 get: s3://$bucket/missing: NoSuchKey (HTTP 404)" "$work/err" || fail "error line"
[ ! -e "$work/x" ] || fail "partial file left behind"
ls "$work" | grep -q bucketfs- && fail "temporary file left behind"
if s3 ls "s3://$bucket-nope/" 2>"$work/err"; then fail "missing bucket listed"; fi
grep -q "NoSuchBucket" "$work/err" || fail "NoSuchBucket line: $(cat "$work/err")"
if s3 get "not-a-url" "$work/x" 2>"$work/err"; then fail "bad url accepted"; fi
grep -q "expected s3://" "$work/err" || fail "bad url message"

step bench
s3 bench put "s3://$bucket/bench/obj" --size 12M --part-size 5M --connections 4 --objects 2 --json \
  | tee "$work/bench-put.json"
grep -q '"op":"put"' "$work/bench-put.json" || fail "bench put json"
s3 bench get "s3://$bucket/bench/obj" --part-size 2M --connections 4 --objects 2 --repeat 2 --json \
  | tee "$work/bench-get.json"
grep -q '"bytes":50331648' "$work/bench-get.json" || fail "bench get bytes"
s3 bench get-random "s3://$bucket/dir/big.bin" --block 4K --iodepth 8 --count 200
s3 bench get "s3://$bucket/dir/big.bin" --connections 2
# bench list: 10 subdirectories in 2 ranges, a file of the prefix sorting
# between "d0" and "d0/" (seen by the first range too: counted once).
for i in 0 1 2 3 4 5 6 7 8 9; do s3 put "$work/empty" "s3://$bucket/tree/d$i/f$i"; done
s3 put "$work/empty" "s3://$bucket/tree/d0-file"
s3 put "$work/empty" "s3://$bucket/tree/top"
for n in 1 2; do
  s3 bench list "s3://$bucket/tree/" --parallel "$n" --json | tee "$work/bench-list.json"
  grep -q '"keys":12,' "$work/bench-list.json" || fail "bench list --parallel $n keys"
done

step rm
s3 rm "s3://$bucket/empty" | grep -q "delete: s3://$bucket/empty" || fail "rm"
s3 rm --recursive "s3://$bucket/dir/" >/dev/null
[ -z "$(s3 ls --recursive "s3://$bucket/dir/")" ] || fail "rm --recursive left keys"
echo "PASS: bucketfs s3 against $kind"
