#!/usr/bin/env bash
# Prints, for each test that failed in a build directory's last ctest run,
# its name and the end of its output. run-all.sh calls it last so that a CI
# log that keeps only its tail still names what failed and why.
# Usage: tests/print-failures.sh BUILD_DIR [LINES_PER_TEST]
set -uo pipefail
dir="${1:?usage: print-failures.sh BUILD_DIR [LINES_PER_TEST]}"
lines="${2:-40}"
failed="$dir/Testing/Temporary/LastTestsFailed.log"
log="$dir/Testing/Temporary/LastTest.log"
[ -s "$failed" ] || exit 0
echo "=== tests that failed in $dir:"
sed 's/^/  /' "$failed"
[ -f "$log" ] || exit 0
# LastTest.log holds one block per test, from "N/M Testing: name" to
# "Test Passed." or "Test Failed."; keep the end of each failed block.
awk -v keep="$lines" '
  /^[0-9]+\/[0-9]+ Testing: / { name = $3; n = 0; out = 1; next }
  /^<end of output>$/ { out = 0; next }
  /^Test Failed\./ {
    print "=== end of " name "'"'"'s output:"
    first = n > keep ? n - keep + 1 : 1
    for (i = first; i <= n; i++) print "  " buf[i]
    next
  }
  out { buf[++n] = $0 }
' "$log"
