#!/usr/bin/env bash
# The one test command (README and .ci/run call exactly this): install the
# dependencies, build Release, check the lock contracts (the thread-safety
# preset: clang -Wthread-safety, build only) and run clang-tidy over the
# non-test sources, run every test (unit, client conformance against live
# s3rver and s3sim, mount end-to-end) and print ctest's summary.
# BUCKETFS_STATIC_CHECKS=0 skips the contract build and clang-tidy;
# BUCKETFS_LINT=0 skips clang-tidy only. After the tests comes the sanitizer
# stage (tests/sanitizers/ci-stage.sh: ASan and TSan builds, the unit tests
# and the soak under each) when the whole suite ran (no ctest arguments);
# BUCKETFS_SANITIZERS=0 skips it, =1 runs it after a subset too.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash mount-tools/install-deps.sh
preset="${BUCKETFS_PRESET:-release}"
cmake --preset "$preset"
cmake --build --preset "$preset" -j "$(nproc)"
if [ "${BUCKETFS_STATIC_CHECKS:-1}" != 0 ]; then
  cmake --preset thread-safety
  cmake --build --preset thread-safety -j "$(nproc)"
  if [ "${BUCKETFS_LINT:-1}" != 0 ]; then
    LINT_JOBS="$(nproc)" bash tests/lint/run-clang-tidy.sh build/thread-safety
  fi
fi
sanitizers_default=1
[ $# -eq 0 ] || sanitizers_default=0
status=0
ctest --preset "$preset" "$@" || status=$?
if [ "${BUCKETFS_SANITIZERS:-$sanitizers_default}" != 0 ] && [ "$preset" = release ]; then
  bash tests/sanitizers/ci-stage.sh || status=1
fi
# Last, so that the end of the log names what failed.
bash tests/print-failures.sh "build/$preset"
echo "run-all: exit $status"
exit "$status"
