#!/usr/bin/env bash
# Mount end-to-end for the requests each operation costs (docs/SEMANTICS.md,
# "Requests per operation"), against s3sim shaped with a time to first byte
# (its counters prove what reached the server and how much overlapped):
#   parallel  8 threads looking up different names of one directory have
#             their requests in flight at once (not one LOOKUP at a time)
#   listed    after `ls`, stats of every name (missing ones too) cost nothing
#             and reading every file costs one GET each
#   assisted  a directory that gets many lookups is listed once; the names
#             that follow, missing ones included, cost nothing
#   own       in a directory made by the mount, create+write+close of small
#             files is one PutObject each; renaming one is copy + delete
#   async     --async-close: after 8 writers closed 200 files, `bucketfs sync`
#             (fsync of the directory) returns once every object is in the
#             bucket, identical
# Usage: test_round_trips.sh s3sim   (s3rver has no request counter: skipped)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
[[ "$SERVER" == s3sim ]] || skip "needs s3sim's request counters"
setup_bucket e2e-roundtrips --ttfb-ms 40
s3 put-many "$BUCKET" "par/f" 64
s3 put-many "$BUCKET" "listed/f" 40
s3 put-many "$BUCKET" "assisted/f" 300

stats() { curl -s "$S3_ENDPOINT/__s3sim/stats"; }
op() {  # op NAME: requests of one operation since the last reset
  stats | python3 -c 'import json,sys; print(json.load(sys.stdin)["ops"].get(sys.argv[1], 0))' "$1"
}
max_in_flight() { stats | python3 -c 'import json,sys; print(json.load(sys.stdin)["max_in_flight"])'; }

# stat_names DIR FIRST LAST THREADS [--missing]: stats fN..fN in THREADS threads.
stat_names() {
  timeout 120 python3 - "$@" <<'PY'
import os, sys, threading
d, first, last, threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
missing = "--missing" in sys.argv
names = [os.path.join(d, (f"nope{i}" if missing else f"f{i:05d}")) for i in range(first, last)]
bad = []
def work(part):
    for n in part:
        try:
            os.stat(n)
            if missing: bad.append(n)
        except FileNotFoundError:
            if not missing: bad.append(n)
ts = [threading.Thread(target=work, args=(names[k::threads],)) for k in range(threads)]
[t.start() for t in ts]; [t.join() for t in ts]
sys.exit(1 if bad else 0)
PY
}

# --- parallel: 8 threads start looking up different names of one directory
# at once; their first lookups must reach S3 together (the directory's
# listing, fetched after a few lookups, answers the rest).
mount_bucket "$MNT" "s3://$BUCKET" --metadata-ttl 60
reset_stats
check "8 threads stat 64 names" stat_names "$MNT/par" 0 64 8
n=$(max_in_flight)
log "parallel lookups: $(op HeadObject) HEAD, $(op ListObjectsV2) LIST, at most $n in flight"
check "lookups of one directory overlap (>= 8 requests in flight)" test "$n" -ge 8
unmount "$MNT"

# One-byte objects could be symbolic links, which costs a HEAD each at the
# first stat; the listing's own cost is measured without that probe
# (SEMANTICS.md, "Symbolic links"; e2e_posix.sh measures it).
mount_bucket "$MNT" "s3://$BUCKET" --metadata-ttl 60 --no-link-probe
# --- listed
check "ls lists 40 files" test "$(timeout 60 ls "$MNT/listed" | wc -l)" -eq 40
reset_stats
check "stat of the 40 listed names" stat_names "$MNT/listed" 0 40 4
check "stat of 20 names not listed fails" stat_names "$MNT/listed" 0 20 4 --missing
log "stats after ls: $(stats)"
check "stats after ls: zero requests" test "$(requests)" -eq 0
check "read every listed file" timeout 60 bash -c "cat '$MNT'/listed/* | wc -c | grep -qx 40"
log "reads after ls: $(stats)"
check "reads after ls: one GET per file" test "$(op GetObject)" -eq 40
check "reads after ls: nothing but GETs" test "$(requests)" -eq 40

# --- assisted
reset_stats
check "stat of 300 names one by one" stat_names "$MNT/assisted" 0 300 1
heads=$(op HeadObject)
log "300 lookups in one directory: $(stats)"
check "the directory was listed and most lookups cost nothing (< 60 HEADs)" test "$heads" -lt 60
reset_stats
check "stat of 50 missing names fails" stat_names "$MNT/assisted" 0 50 8 --missing
check "missing names answered from the listing: zero requests" test "$(requests)" -eq 0

# --- own: a directory made here, small files written, one renamed.
check "mkdir" mkdir "$MNT/own"
reset_stats
check "write 20 small files" timeout 60 bash -c \
  "for i in \$(seq 20); do printf 'chunk %s' \$i > '$MNT/own/c'\$i.partial || exit 1; done"
log "20 small files written: $(stats)"
check "one PutObject per file" test "$(op PutObject)" -eq 20
check "nothing but PutObject" test "$(requests)" -eq 20
reset_stats
check "rename one" mv "$MNT/own/c1.partial" "$MNT/own/c1"
log "rename of a file just written: $(stats)"
check "rename: one CopyObject" test "$(op CopyObject)" -eq 1
check "rename: one DeleteObject" test "$(op DeleteObject)" -eq 1
check "rename: nothing else" test "$(requests)" -eq 2
check "renamed object holds its bytes" test "$(cat "$MNT/own/c1")" = "chunk 1"
check "old name is gone" test ! -e "$MNT/own/c1.partial"
unmount "$MNT"

# --- async: 8 writers, 25 files each, then fsync of the directory.
mount_bucket "$MNT" "s3://$BUCKET" --async-close
check "mkdir for async" mkdir "$MNT/async"
write_async() {
  timeout 120 python3 - "$MNT/async" <<'PY'
import os, sys, threading
d = sys.argv[1]
def work(t):
    for i in range(25):
        with open(os.path.join(d, f"t{t}-{i}"), "wb") as f:
            f.write(bytes([t, i]) * 5000)
ts = [threading.Thread(target=work, args=(t,)) for t in range(8)]
[t.start() for t in ts]; [t.join() for t in ts]
PY
}
check "200 files written and closed" write_async
check "bucketfs sync (fsync of the directory) succeeds" timeout 120 "$BUCKETFS" sync "$MNT/async"
objects=$(s3 list "$BUCKET" async/ | wc -l)
log "after fsync(dir): $objects objects under async/"
check "every object is in the bucket once fsync(dir) returned" test "$objects" -eq 200
check "an object holds the bytes written" test "$(s3 sha256 "$BUCKET" async/t3-7)" = \
  "$(python3 -c 'import hashlib; print(hashlib.sha256(bytes([3, 7]) * 5000).hexdigest())')"
check "read back through the mount" cmp <(python3 -c 'import sys; sys.stdout.buffer.write(bytes([5, 24]) * 5000)') "$MNT/async/t5-24"
# Write to a temporary name, close, rename, read back at once (zarr's way):
# the rename returns before the upload, the read waits for it.
write_rename_read() {
  timeout 120 python3 - "$MNT/async" <<'PY'
import os, sys
d = sys.argv[1]
for i in range(20):
    data = bytes([i]) * (1000 + i)
    tmp = os.path.join(d, f"chunk{i}.partial")
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, os.path.join(d, f"chunk{i}"))
    with open(os.path.join(d, f"chunk{i}"), "rb") as f:
        if f.read() != data:
            sys.exit(f"chunk{i}: wrong bytes right after the rename")
PY
}
reset_stats
check "write, rename, read back 20 chunks" write_rename_read
check "bucketfs sync after the renames" timeout 120 "$BUCKETFS" sync "$MNT/async"
log "20 chunks written and renamed: $(stats)"
check "no temporary name is left in the bucket" test "$(s3 list "$BUCKET" async/chunk | grep -c partial || true)" -eq 0
check "every chunk is in the bucket" test "$(s3 list "$BUCKET" async/chunk | wc -l)" -eq 20
unmount "$MNT"
finish
