#!/usr/bin/env bash
# The one test command (README and .ci/run call exactly this): install the
# dependencies, build Release, run every test (unit, client conformance against
# live s3rver and s3sim, mount end-to-end) and print ctest's summary.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash mount-tools/install-deps.sh
preset="${BUCKETFS_PRESET:-release}"
cmake --preset "$preset"
cmake --build --preset "$preset" -j "$(nproc)"
ctest --preset "$preset" "$@"
