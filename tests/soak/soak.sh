#!/usr/bin/env bash
# Soak: one mount under sustained mixed load on s3sim injecting 1% faults.
#   load       32 readers (half sequential, half random, a quarter of those
#              O_DIRECT) check every byte against the generated content, and
#              list their directories; 8 writers write new objects (empty to
#              3 parts) checked after close with boto3 (soak_load.py)
#   errors     none may reach an application, except a close() whose
#              CompleteMultipartUpload got the injected 500/503 (not retried:
#              not idempotent), and that object must then be absent
#   memory     the daemon's peak RSS (VmHWM) within --max-memory plus
#              --max-upload-memory plus SOAK_RSS_MARGIN (release builds)
#   resources  after the load, with the kernel's unused inodes dropped: open
#              handles 0, inodes and descriptors other than store connections
#              back to their values before the load; store connections within
#              the connection pool's bound
#   faults     every injected kind (500/503, reset, truncate, stall) was met
# Environment: SOAK_SECONDS (load duration, default 120; longer by hand:
# SOAK_SECONDS=3600 bash tests/soak/soak.sh s3sim), SOAK_SEED (1),
# SOAK_RSS_MARGIN_MIB (192). Usage: soak.sh s3sim
SOAK_SECONDS="${SOAK_SECONDS:-120}"
# The watchdog must outlast the load (the preload and settling take ~2 min more).
if [[ -z "${E2E_BUDGET:-}" || "${E2E_BUDGET}" -lt $((SOAK_SECONDS * ${E2E_SCALE:-1} + 240)) ]]; then
  export E2E_BUDGET=$((SOAK_SECONDS * ${E2E_SCALE:-1} + 240))
fi
source "$(dirname "${BASH_SOURCE[0]}")/../mount/lib.sh"
[[ "$SERVER" == s3sim ]] || skip "needs s3sim's fault injection"
python3 -c "import numpy" 2>/dev/null || skip "python3-numpy is missing"
[[ -w /proc/sys/vm/drop_caches ]] || skip "needs root: writes /proc/sys/vm/drop_caches"
SOAK_DIR="$REPO_ROOT/tests/soak"
SEED="${SOAK_SEED:-1}"
MARGIN_MIB="${SOAK_RSS_MARGIN_MIB:-192}"
READ_BUDGET_MIB=256
UPLOAD_BUDGET_MIB=128
MAX_CONNECTIONS=64  # the client's connection pool bound (s3/client_config.h)
BUCKET=soak
# The read set: 3-part objects (8M ranged reads), odd sizes, many small files.
PRELOAD=(big/:12:24M odd/:12:3000017 small/:200:50001)
FAULT_LOG="$TMP/faults.jsonl"

server_args=(--seed "$SEED" --fault-log "$FAULT_LOG"
  --fail-rate 0.005 --reset-rate 0.002 --truncate-rate 0.002 --stall-rate 0.001 --stall-ms 60000)
for p in "${PRELOAD[@]}"; do server_args+=(--preload "$BUCKET/$p"); done
require_env
start_server "${server_args[@]}"
MNT="$TMP/mnt"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
METRICS="http://127.0.0.1:$PORT/metrics"
mount_bucket "$MNT" "s3://$BUCKET" --metrics-addr "127.0.0.1:$PORT" --log-level info \
  --max-memory "${READ_BUDGET_MIB}M" --max-upload-memory "${UPLOAD_BUDGET_MIB}M" --part-size 5M
PID=$(daemon_pids | head -1)
[[ -n "$PID" ]] || { echo "FAIL: no daemon"; exit 1; }
probe() { timeout 120 python3 "$SOAK_DIR/daemon_probe.py" "$@" --pid "$PID" --metrics "$METRICS"; }

# Warm-up: one of each operation, so pools and threads started on first use
# are part of the baseline; then the kernel's unused inodes are dropped.
timeout 60 cat "$MNT/small/obj-00000" >/dev/null
timeout 60 ls "$MNT/odd" >/dev/null
timeout 60 mkdir -p "$MNT/w"
timeout 60 cp "$MNT/small/obj-00001" "$MNT/w/warm-up"
probe snapshot >"$TMP/start.json"
# settle_to OUT BASELINE SECONDS: the daemon back to BASELINE (daemon_probe.py).
settle_to() { probe settle --baseline "$2" --timeout "$3" >"$1"; }
check "baseline settles" settle_to "$TMP/baseline.json" "$TMP/start.json" 30
[[ -s "$TMP/baseline.json" ]] || cp "$TMP/start.json" "$TMP/baseline.json"
log "before the load: $(cat "$TMP/baseline.json")"

load_args=()
for p in "${PRELOAD[@]}"; do load_args+=(--preload "$p"); done
mkdir -p "$TMP/work"
status=0
timeout $((SOAK_SECONDS + 600)) python3 "$SOAK_DIR/soak_load.py" --mnt "$MNT" --bucket "$BUCKET" \
  --seed "$SEED" --pid "$PID" --metrics "$METRICS" --seconds "$SOAK_SECONDS" \
  --work "$TMP/work" --out "$TMP/report.json" "${load_args[@]}" || status=$?
check "the load ran to its end" test -s "$TMP/report.json"
probe snapshot >"$TMP/after-load.json"
log "right after the load: $(cat "$TMP/after-load.json")"

# Errors: each must be a close() whose CompleteMultipartUpload met an injected fault.
check "no wrong byte, no worker crashed, every failure explained by a fault" \
  timeout 120 python3 "$SOAK_DIR/explain_errors.py" "$TMP/report.json" "$FAULT_LOG" "$BUCKET"

check "resources back to the baseline" settle_to "$TMP/end.json" "$TMP/baseline.json" 60
log "after the load, kernel inodes dropped: $(cat "$TMP/end.json")"
field() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))$2)" "$1"; }
sockets=$(field "$TMP/end.json" '["fds"]["socket"]')
check "store connections within the pool bound ($sockets <= $MAX_CONNECTIONS + baseline)" \
  test "$sockets" -le $((MAX_CONNECTIONS + $(field "$TMP/baseline.json" '["fds"]["socket"]')))
peak=$(field "$TMP/end.json" '["rss_peak_bytes"]')
limit=$(((READ_BUDGET_MIB + UPLOAD_BUDGET_MIB + MARGIN_MIB) << 20))
if [[ "$SCALE" == 1 ]]; then
  check "peak RSS $((peak >> 20)) MiB <= budgets $READ_BUDGET_MIB + $UPLOAD_BUDGET_MIB + margin $MARGIN_MIB MiB" \
    test "$peak" -le "$limit"
else
  log "sanitizer build: peak RSS $((peak >> 20)) MiB not checked (shadow memory and quarantine)"
fi

# Every kind of fault was injected and met.
log "faults injected, by kind and operation:"
python3 - "$FAULT_LOG" <<'EOF' | tee "$TMP/fault-kinds.txt"
import collections, json, sys
by = collections.Counter()
for line in open(sys.argv[1]):
    f = json.loads(line)
    by[(f["fault"], f["op"])] += 1
for (kind, op), n in sorted(by.items()):
    print(f"  {kind:10} {op:28} {n}")
EOF
for kind in internal slowdown reset truncate stall; do
  check "fault kind met: $kind" grep -q "^  $kind " "$TMP/fault-kinds.txt"
done

unmount "$MNT" || { echo "FAIL unmount"; FAILURES=$((FAILURES + 1)); }
[[ $status -eq 0 ]] || log "soak_load.py exit status $status (judged above)"
finish
