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

echo "== 1/5 dependencies"
bash mount-tools/install-deps.sh
echo "== 2/5 build (release preset)"
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)" --target bucketfs s3sim
bucketfs="$root/build/release/mount-tools/bucketfs"
export S3SIM_BIN="$root/build/release/tests/s3sim/s3sim"

echo "== 3/5 local S3 server ($server) with bucket 'demo'"
eval "$(bash tests/fixtures/start-server.sh "$server" --bucket demo)"
work="$(mktemp -d /tmp/bucketfs-quickstart-XXXXXX)"
mnt="${QUICKSTART_MNT:-/tmp/bucketfs-demo}"
mounted=0
# On failure everything stops; on success the server and the mount stay up
# for the user (instructions printed at the end).
trap 'rc=$?; if [ "$rc" -ne 0 ]; then [ "$mounted" = 1 ] && fusermount3 -uz "$mnt"; stop_s3_server; fi; rm -rf "$work"' EXIT
echo "endpoint $S3_ENDPOINT (credentials in AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY)"

echo "== 4/5 direct transfers with bucketfs s3"
head -c "$((size_mib * 1024 * 1024))" /dev/urandom >"$work/data.bin"
set -x
"$bucketfs" s3 put "$work/data.bin" s3://demo/quickstart/data.bin
"$bucketfs" s3 ls s3://demo/quickstart/
"$bucketfs" s3 get --connections 8 s3://demo/quickstart/data.bin "$work/copy.bin"
cmp "$work/data.bin" "$work/copy.bin"
"$bucketfs" s3 bench get s3://demo/quickstart/data.bin --connections 8 --repeat 3
set +x

echo "== 5/5 mount s3://demo at $mnt"
mkdir -p "$mnt"
set -x
"$bucketfs" s3://demo "$mnt" --endpoint-url "$S3_ENDPOINT" --force-path-style \
  --allow-delete --allow-overwrite --log-file "${mnt}.log"
set +x
mounted=1
ls -l "$mnt" "$mnt/quickstart"
sha_src=$(sha256sum <"$work/data.bin" | cut -d' ' -f1)
sha_mnt=$(sha256sum <"$mnt/quickstart/data.bin" | cut -d' ' -f1)
[ "$sha_src" = "$sha_mnt" ] || { echo "quickstart: bytes read through the mount differ" >&2; exit 1; }
echo "hello from bucketfs" >"$mnt/quickstart/hello.txt"
"$bucketfs" s3 ls s3://demo/quickstart/
cat <<MSG

quickstart: OK. s3://demo on $server ($S3_ENDPOINT) is mounted at $mnt
(the file read back through the mount matched; hello.txt was written through it).
  use it:     ls -l $mnt/quickstart; cp somefile $mnt/
  unmount:    fusermount3 -u $mnt      (or: umount $mnt)
  stop the server afterwards:  kill $S3_SERVER_PID
  credentials for other tools: AWS_ACCESS_KEY_ID=$AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY=... (see tests/fixtures/start-server.sh)
MSG
