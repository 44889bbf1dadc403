#!/usr/bin/env bash
# CI's sanitizer stage (tests/run-all.sh runs it after the release tests):
# a cold build of each sanitizer preset and the subset of the suite that fits
# CI's time under it (docs/TESTING.md, "Sanitizers in CI"):
#   asan (ASan + LSan + UBSan)  the unit tests, the soak (faults, 60 s)
#   tsan                        the unit tests, the soak (faults, 60 s)
# Environment: BUCKETFS_SANITIZER_PRESETS (default "asan tsan"),
# BUCKETFS_SANITIZER_SOAK_SECONDS (60). Prints each step's time; exit 1 when
# a build or a test failed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
status=0
# Each ctest run replaces the last one's record, so keep the failures as they happen.
report="$root/build/sanitizer-failures.log"
mkdir -p "$root/build"
: >"$report"
failed() { status=1; bash tests/print-failures.sh "build/$1" >>"$report"; }
for preset in ${BUCKETFS_SANITIZER_PRESETS:-asan tsan}; do
  t0=$SECONDS
  cmake --preset "$preset"
  cmake --build --preset "$preset" -j "$(nproc)"
  t1=$SECONDS
  ctest --preset "$preset" -L unit --no-tests=error || failed "$preset"
  t2=$SECONDS
  SOAK_SECONDS="${BUCKETFS_SANITIZER_SOAK_SECONDS:-60}" \
    ctest --preset "$preset" -R '^soak\.s3sim$' --no-tests=error || failed "$preset"
  echo "sanitizer stage, $preset: build $((t1 - t0)) s, unit tests $((t2 - t1)) s, soak $((SECONDS - t2)) s"
done
cat "$report"
exit "$status"
