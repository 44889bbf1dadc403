#!/usr/bin/env bash
# Mount end-to-end: --direct-io (FOPEN_DIRECT_IO on every open) and
# --max-memory, against one server.
#   The budget reaches the read path; whole-file reads (1 MiB, O_DIRECT,
#   4 KiB and odd-sized sequential reads) return the object's bytes; a whole
#   read is one prefetch stream that fetches each byte once (the daemon's
#   per-reader stats), although without kernel readahead the reads come one
#   at a time at the application's size; MAP_SHARED mmap fails with ENODEV
#   (libfuse 3.14 cannot negotiate FUSE_DIRECT_IO_ALLOW_MMAP) while
#   MAP_PRIVATE reads the right bytes; a file written through the mount
#   arrives intact.
# Usage: e2e_direct_io.sh s3rver|s3sim   (BUCKETFS=path/to/bucketfs)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
require_env
start_server
BUCKET=e2e-direct-io
s3 mkbucket "$BUCKET"
MNT="$TMP/mnt"
LOG="$TMP/bucketfs-mnt.log"

log "an object of 40 MiB + 4097 bytes (not a multiple of any read size)"
SIZE=$((40 * 1024 * 1024 + 4097))
head -c "$SIZE" /dev/urandom >"$TMP/obj"
SUM=$(sha256sum <"$TMP/obj" | cut -d' ' -f1)
s3 put "$BUCKET" data/obj <"$TMP/obj"

check "mount with --direct-io --max-memory 64M" \
  mount_bucket "$MNT" "s3://$BUCKET" --direct-io --max-memory 64M
# The log reaches the file within a few seconds (spdlog flushes periodically).
check "the read path got the budget" wait_for 10 grep -q "read-ahead memory budget 64 MiB" "$LOG"

# closed_stats: the daemon's debug line for the last reader of data/obj closed.
closed_stats() { grep "closed s3://$BUCKET/data/obj:" "$LOG" | tail -1; }
# read_stats_ok COMMAND...: runs a whole-file read, then waits for its close
# line and checks it was one stream that fetched exactly the file's bytes.
read_stats_ok() {
  local before after
  before=$(grep -c "closed s3://$BUCKET/data/obj:" "$LOG" || true)
  "$@" >/dev/null || return 1
  wait_for 10 bash -c "[[ \$(grep -c 'closed s3://$BUCKET/data/obj:' '$LOG') -gt $before ]]" ||
    { echo "no close line in the log"; return 1; }
  after=$(closed_stats)
  echo "  $after"
  [[ "$after" == *" fetches of $SIZE bytes, 1 stream starts, 0 seeks,"* ]]
}

log "whole-file reads"
check "sha256sum (its own read size)" \
  test "$(timeout 60 sha256sum <"$MNT/data/obj" | cut -d' ' -f1)" = "$SUM"
check "dd bs=1M" \
  test "$(timeout 60 dd if="$MNT/data/obj" bs=1M status=none | sha256sum | cut -d' ' -f1)" = "$SUM"
check "dd bs=1M iflag=direct (O_DIRECT)" \
  test "$(timeout 60 dd if="$MNT/data/obj" bs=1M iflag=direct status=none | sha256sum |
          cut -d' ' -f1)" = "$SUM"
check "4 KiB sequential reads" \
  test "$(timeout 120 dd if="$MNT/data/obj" bs=4k status=none | sha256sum | cut -d' ' -f1)" = "$SUM"
# Odd sizes: every read straddles part and page boundaries differently.
check "4095-byte sequential reads" test "$(timeout 120 python3 -c '
import hashlib, sys
h = hashlib.sha256()
with open(sys.argv[1], "rb", buffering=0) as f:
    while True:
        b = f.read(4095)
        if not b:
            break
        h.update(b)
print(h.hexdigest())' "$MNT/data/obj")" = "$SUM"

log "one stream, each byte fetched once (reads arrive one at a time, no kernel readahead)"
check "dd bs=1M: one stream, 1.0x bytes" read_stats_ok timeout 60 dd if="$MNT/data/obj" bs=1M status=none
check "dd bs=4k: one stream, 1.0x bytes" read_stats_ok timeout 120 dd if="$MNT/data/obj" bs=4k status=none

log "mmap"
mmap_result() {
  timeout 60 python3 - "$MNT/data/obj" "$1" <<'PY'
import errno, hashlib, mmap, os, sys
path, kind = sys.argv[1], sys.argv[2]
fd = os.open(path, os.O_RDONLY)
flags = mmap.MAP_SHARED if kind == "shared" else mmap.MAP_PRIVATE
try:
    m = mmap.mmap(fd, 0, flags=flags, prot=mmap.PROT_READ)
except OSError as e:
    print(errno.errorcode.get(e.errno, e.errno))
    sys.exit(0)
print(hashlib.sha256(m).hexdigest())
PY
}
check "MAP_SHARED fails with ENODEV" test "$(mmap_result shared)" = ENODEV
check "MAP_PRIVATE reads the object's bytes" test "$(mmap_result private)" = "$SUM"

log "writes through a direct-I/O mount"
check "cp a file in" cp "$TMP/obj" "$MNT/data/copy"
check "the object in the bucket matches" test "$(s3 sha256 "$BUCKET" data/copy)" = "$SUM"
check "and reads back through the mount" \
  test "$(timeout 60 sha256sum <"$MNT/data/copy" | cut -d' ' -f1)" = "$SUM"

check "unmount" unmount "$MNT"
finish
