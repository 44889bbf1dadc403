#!/usr/bin/env bash
# The newcomer's first command on a fresh Debian 12 machine:
#   bash mount-tools/quickstart.sh
# Installs the dependencies, builds bucketfs (Release), starts a local S3
# server (s3sim, our fast in-memory one; QUICKSTART_SERVER=s3rver for the
# npm one) with a bucket, and moves data through it with the direct client:
# put a 256 MiB file, list it, get it back in parallel, compare, bench.
# Everything runs on 127.0.0.1; the server is stopped at the end.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
server="${QUICKSTART_SERVER:-s3sim}"
size_mib="${QUICKSTART_MIB:-256}"

echo "== 1/4 dependencies"
bash mount-tools/install-deps.sh
echo "== 2/4 build (release preset)"
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)" --target bucketfs s3sim
bucketfs="$root/build/release/mount-tools/bucketfs"
export S3SIM_BIN="$root/build/release/tests/s3sim/s3sim"

echo "== 3/4 local S3 server ($server) with bucket 'demo'"
eval "$(bash tests/fixtures/start-server.sh "$server" --bucket demo)"
work="$(mktemp -d /tmp/bucketfs-quickstart-XXXXXX)"
trap 'stop_s3_server; rm -rf "$work"' EXIT
echo "endpoint $S3_ENDPOINT (credentials in AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY)"

echo "== 4/4 direct transfers with bucketfs s3"
head -c "$((size_mib * 1024 * 1024))" /dev/urandom >"$work/data.bin"
set -x
"$bucketfs" s3 put "$work/data.bin" s3://demo/quickstart/data.bin
"$bucketfs" s3 ls s3://demo/quickstart/
"$bucketfs" s3 get --connections 8 s3://demo/quickstart/data.bin "$work/copy.bin"
cmp "$work/data.bin" "$work/copy.bin"
"$bucketfs" s3 bench get s3://demo/quickstart/data.bin --connections 8 --repeat 3
set +x
echo "quickstart: OK — bytes came back identical through $server"
