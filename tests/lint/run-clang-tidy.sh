#!/usr/bin/env bash
# Runs clang-tidy (the checks of the root .clang-tidy, every finding an error)
# over the non-test sources, with the compile commands of the thread-safety
# build (clang), which must be configured first. Usage: tests/lint/run-clang-tidy.sh [build dir]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${1:-$root/build/thread-safety}"
cd "$root"

mapfile -t sources < <(git ls-files '*.cc' | grep -v -E '_test\.cc$|_fuzz\.cc$|/testing/|^tests/(conformance|fixtures)/|sanitizer_probe')
echo "clang-tidy: ${#sources[@]} files"
run-clang-tidy -quiet -p "$build" -j "${LINT_JOBS:-2}" "${sources[@]/#/$root/}"
