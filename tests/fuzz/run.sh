#!/usr/bin/env bash
# Builds the libFuzzer targets (preset fuzz: clang, ASan+UBSan) and runs each
# for FUZZ_SECONDS (default 10) over a copy of its checked-in seed corpus
# (tests/fuzz/corpus/<target>/, which also holds the regression inputs of
# fixed findings). Prints the executions per target; fails on any finding
# (the crashing input is left in FUZZ_OUT, default a temporary directory).
#   FUZZ_SECONDS=600 bash tests/fuzz/run.sh          # longer
#   FUZZ_TARGETS="sigv4_fuzz" bash tests/fuzz/run.sh  # some targets only
#   FUZZ_KEEP=1 ...                                   # merge new inputs into the seeds
#   FUZZ_SEED=0 ...                                   # a random mutation order (default 1: CI repeats itself)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
seconds="${FUZZ_SECONDS:-10}"
command -v clang++ >/dev/null || { echo "SKIP: clang++ is missing"; exit 77; }

# One build at a time in build/fuzz (ctest and a developer may both start one).
mkdir -p "$root/build"
exec 9>"$root/build/.fuzz-build.lock"
flock 9
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j "${FUZZ_BUILD_JOBS:-2}"
flock -u 9

out="${FUZZ_OUT:-$(mktemp -d /tmp/bucketfs-fuzz.XXXXXX)}"
mkdir -p "$out"
targets="${FUZZ_TARGETS:-xml_responses_fuzz sigv4_fuzz key_path_fuzz mount_options_fuzz metadata_records_fuzz}"
failed=0
total=0
printf '%-24s %12s %10s %s\n' target executions exec/s result
for t in $targets; do
  seeds="$root/tests/fuzz/corpus/$t"
  work="$out/$t.corpus"
  rm -rf "$work"
  mkdir -p "$work"
  cp -r "$seeds/." "$work/"
  dict=()
  [[ -f "$root/tests/fuzz/$t.dict" ]] && dict=(-dict="$root/tests/fuzz/$t.dict")
  status=0
  (cd "$out" && "$root/build/fuzz/tests/fuzz/$t" "$work" "${dict[@]}" -max_total_time="$seconds" \
      -seed="${FUZZ_SEED:-1}" -timeout=10 -rss_limit_mb=2048 -max_len=4096 -print_final_stats=1 \
      -artifact_prefix="$out/$t-") >"$out/$t.log" 2>&1 || status=$?
  execs=$(awk '/stat::number_of_executed_units/ { print $2 }' "$out/$t.log" | tail -1)
  rate=$(awk '/stat::average_exec_per_sec/ { print $2 }' "$out/$t.log" | tail -1)
  result=ok
  if [[ $status -ne 0 ]]; then
    result="FAILED (status $status; log $out/$t.log)"
    failed=$((failed + 1))
    grep -E "ERROR|SUMMARY|Test unit written" "$out/$t.log" | head -5 || true
  fi
  printf '%-24s %12s %10s %s\n' "$t" "${execs:-0}" "${rate:-0}" "$result"
  total=$((total + ${execs:-0}))
  if [[ "${FUZZ_KEEP:-0}" == 1 && $status -eq 0 ]]; then
    "$root/build/fuzz/tests/fuzz/$t" -merge=1 "$seeds" "$work" >/dev/null 2>&1
  fi
done
echo "total executions: $total in ${seconds}s per target"
if [[ $failed -gt 0 ]]; then echo "$failed target(s) failed; inputs in $out"; exit 1; fi
[[ -n "${FUZZ_OUT:-}" ]] || rm -rf "$out"
