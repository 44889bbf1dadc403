#!/usr/bin/env bash
# Installs every build and test dependency of bucketfs on Debian 12:
# Debian packages for the build, the mount and the benchmark yardsticks,
# and s3rver from npm (an independent S3 implementation the tests run against).
# Idempotent: safe to run again. The one script README, .ci/run and new users call.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"

sudo_cmd=""
if [ "$(id -u)" -ne 0 ]; then sudo_cmd="sudo"; fi

packages=(
  build-essential cmake ninja-build pkg-config git clang-format clang clang-tidy
  libfuse3-dev fuse3
  libcurl4-openssl-dev libssl-dev
  liblmdb-dev lmdb-utils
  libspdlog-dev libfmt-dev
  libpugixml-dev
  libcli11-dev
  libsystemd-dev systemd
  debootstrap systemd-container util-linux man-db
  libgtest-dev libgmock-dev googletest
  curl ca-certificates procps psmisc gdb socat openssl
  fio s3fs rclone gnuplot-nox
  prometheus tmux
  python3 python3-numpy python3-boto3 python3-torch python3-torchvision python3-pil python3-h5py
  python3-zarr
)

missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
# Node.js: the machine's own (NodeSource, which bundles npm) when present,
# Debian's otherwise; the two conflict, so never ask apt for npm beside it.
if ! command -v npm >/dev/null 2>&1; then
  missing+=(nodejs npm)
fi
if [ "${#missing[@]}" -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $sudo_cmd apt-get update -qq
  $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# s3rver, pinned, in the repository's tests/node_modules (not global, so that
# nothing outside the checkout changes).
if [ ! -x "$root/tests/node_modules/.bin/s3rver" ]; then
  echo "install-deps: installing s3rver 3.7.1 from npm"
  (cd "$root/tests" && npm install --no-audit --no-fund --silent s3rver@3.7.1)
fi

# FUSE needs the device node; on containers it may have to be created.
if [ ! -e /dev/fuse ]; then
  $sudo_cmd mknod -m 666 /dev/fuse c 10 229 || echo "install-deps: warning: /dev/fuse missing; mount tests will be skipped"
fi
echo "install-deps: done"
