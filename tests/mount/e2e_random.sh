#!/usr/bin/env bash
# Mount end-to-end: random 4 KiB O_DIRECT reads (fio's rand4k shape).
#   Each read returns the object's bytes; the reader fetches no more than the
#   random floor (64 KiB) for its first reads and then only the pages each
#   read covers, since no read lands near a recent one
#   (prefetch/random_locality.h): bytes fetched <= 16 x 64 KiB + 4 KiB per
#   later read, no stream start, from the daemon's per-reader stats. Reads
#   that come back to recent blocks (a header, an index) keep fetching whole
#   floor blocks and are served from them. (Those two with
#   --random-whole-max 0.)
#   By default, far reads hold the whole object once their fetches number as
#   many GETs as it takes (16 here): s3sim then sees the 16 reads' GETs and
#   the object's 9 parts, no more, however many reads follow.
# Usage: e2e_random.sh s3rver|s3sim   (BUCKETFS=path/to/bucketfs)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
setup_bucket e2e-random

log "an object of 64 MiB + 123 bytes"
SIZE=$((64 * 1024 * 1024 + 123))
head -c "$SIZE" /dev/urandom >"$TMP/obj"
s3 put "$BUCKET" data/obj <"$TMP/obj"
check "mount (random reads fetch only what they need)" \
  mount_bucket "$MNT" "s3://$BUCKET" --random-whole-max 0

# random_reads MODE COUNT: COUNT 4 KiB O_DIRECT reads of data/obj on one
# descriptor, each compared with the local copy. far: page-aligned offsets
# spread over the object, none at 0, none within 64 KiB after the previous
# read (that would be a sequential run) and none in the 64 KiB block of one
# of the 4 reads before (that would be near); near: offsets among 4 blocks of
# 64 KiB 1 MiB apart, each in another block than the read before. Prints the
# number of reads.
random_reads() {
  timeout 120 python3 - "$MNT/data/obj" "$TMP/obj" "$1" "$2" <<'PY'
import mmap, os, random, sys
path, local, mode, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
want = open(local, "rb").read()
pages = len(want) // 4096
rng = random.Random(11)
buf = mmap.mmap(-1, 4096)  # page aligned, as O_DIRECT wants
fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
last_end, done, recent = None, 0, []
while done < count:
    if mode == "far":
        off = rng.randrange(1, pages) * 4096
        if last_end is not None and last_end <= off <= last_end + 65536:
            continue
        if off // 65536 in recent[-4:]:
            continue
    else:
        off = (1 + rng.randrange(4)) * 1024 * 1024 + rng.randrange(16) * 4096
        if recent and off // 65536 == recent[-1]:
            continue
    recent.append(off // 65536)
    n = os.preadv(fd, [buf], off)
    if n != 4096 or buf[:n] != want[off:off + n]:
        sys.exit(f"wrong bytes at {off} ({n} bytes)")
    last_end, done = off + 4096, done + 1
os.close(fd)
print(done)
PY
}

# closed_after N: the close line of the reader that follows N earlier ones.
closed_after() {
  wait_for 10 bash -c "[[ \$(grep -c 'closed s3://$BUCKET/data/obj:' '$LOG') -gt $1 ]]" &&
    grep "closed s3://$BUCKET/data/obj:" "$LOG" | sed -n "$(($1 + 1))p"
}
# stats_field LINE WORD: the number before WORD in a close line.
stats_field() { sed -E "s/.* ([0-9]+) $2.*/\1/" <<<"$1"; }

log "600 far reads: the floor for the first 16, then 4 KiB each"
check "far reads return the object's bytes" test "$(random_reads far 600)" = 600
line=$(closed_after 0)
echo "  $line"
bytes=$(sed -E 's/.* fetches of ([0-9]+) bytes.*/\1/' <<<"$line")
fetches=$(stats_field "$line" fetches)
check "one fetch per read" test "$fetches" -le 600
check "bytes fetched <= 16 x 64 KiB + 584 x 4 KiB (was 600 x 64 KiB)" \
  test "$bytes" -le $((16 * 65536 + 584 * 4096))
check "no stream start" test "$(stats_field "$line" "stream starts")" = 0

log "200 near reads among 4 blocks: whole 64 KiB blocks, most reads served from them"
check "near reads return the object's bytes" test "$(random_reads near 200)" = 200
line=$(closed_after 1)
echo "  $line"
fetches=$(stats_field "$line" fetches)
bytes=$(sed -E 's/.* fetches of ([0-9]+) bytes.*/\1/' <<<"$line")
check "whole floor blocks" test "$bytes" = $((fetches * 65536))
check "fewer fetches than reads" test "$fetches" -lt 100
check "unmount" unmount "$MNT"

log "default: 600 far reads hold the whole object after 16 fetches"
check "mount (default)" mount_bucket "$MNT" "s3://$BUCKET"
stat "$MNT/data/obj" >/dev/null  # the mount's lookups, before the count
reset_stats
check "far reads return the object's bytes" test "$(random_reads far 600)" = 600
line=$(closed_after 2)
echo "  $line"
check "16 fetches of the reader's own" test "$(stats_field "$line" fetches)" = 16
check "then it held the whole object" grep -q "then held the whole object" <<<"$line"
gets=$(curl -s "$S3_ENDPOINT/__s3sim/stats" |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["ops"].get("GetObject", 0))')
# 64 MiB + 123 bytes in 8 MiB parts: 9.
check "GETs: 16 reads' + 9 parts ($gets)" test "$gets" -le 25
check "unmount" unmount "$MNT"
finish
