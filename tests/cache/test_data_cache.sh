#!/usr/bin/env bash
# Mount end-to-end for the local data cache and FUSE passthrough, against
# s3sim (its request counters prove what reached the server):
#   epoch2       a fresh mount on the same cache, page cache dropped, reads
#                every file with zero requests, through passthrough; again
#                with --no-passthrough (served by the daemon)
#   corrupt      a cache file damaged on disk is detected, fetched again and
#                never served (nor handed to passthrough); a deleted one too
#   overwrite    an object overwritten in the bucket is read anew after the TTL
#   evict        4 readers under --max-cache-size 24M: the cache stays within it
#   kill         a daemon killed mid-fill leaves a cache the next mount uses
#   written      files written through the mount (multipart, small, then one
#                overwritten) read back on a fresh mount with no GET
# Usage: test_data_cache.sh s3sim   (s3rver has no request counter: skipped)
source "$(dirname "${BASH_SOURCE[0]}")/../mount/lib.sh"
[[ "$SERVER" == s3sim ]] || skip "needs s3sim's request counter"
[[ $(id -u) -eq 0 ]] || skip "drops the page cache (needs root)"
MiB=$((1 << 20))
CACHE="$TMP/cache"
setup_bucket e2e-datacache --conn-mbps 40
s3 put-many "$BUCKET" data/f 4 $((8 * MiB))
s3 put-many "$BUCKET" small/s 40 $((128 << 10))
s3 put "$BUCKET" big/f $((96 * MiB))

stats_field() {  # stats_field ops.GetObject | body_bytes
  curl -s "$S3_ENDPOINT/__s3sim/stats" | python3 -c '
import json, sys
d = json.load(sys.stdin)
for k in sys.argv[1].split("."):
    d = d.get(k, 0) if isinstance(d, dict) else 0
print(d)' "$1"
}
gets() { stats_field ops.GetObject; }
drop_caches() { sync; echo 3 >/proc/sys/vm/drop_caches; }
read_tree() { (cd "$MNT" && timeout 120 find data small -type f -print0 | sort -z |
  timeout 120 xargs -0 sha256sum); }
cache_bytes() { du -sb --apparent-size "$CACHE/data/objects" 2>/dev/null | cut -f1; }
cache_alloc() { du -sB1 "$1/data/objects" 2>/dev/null | cut -f1; }
daemon_cpu() {  # utime + stime of this test's daemon, in clock ticks
  local pid; pid=$(daemon_pids | head -1)
  awk '{ print $14 + $15 }' "/proc/$pid/stat"
}
# Passthrough opens logged since the mark (the log is appended mount after mount).
mark_log() { MARK=$(wc -l <"$LOG"); }
passthrough_opens() { tail -n +$((MARK + 1)) "$LOG" | grep -c 'passthrough (backing id' || true; }
common=(--cache "$CACHE" --metadata-ttl indefinite --no-link-probe)

# --- epoch 1 fills the cache on the way to the reader
mount_bucket "$MNT" "s3://$BUCKET" "${common[@]}"
reset_stats
read_tree >"$TMP/epoch1.sums"
check "the log names the read mode" grep -q "read mode: FUSE passthrough" "$LOG"
e1_gets=$(gets)
log "epoch 1: $e1_gets GETs, $(stats_field body_bytes) body bytes"
check "epoch 1 reads every file" test "$(wc -l <"$TMP/epoch1.sums")" -eq 44
# body_bytes also counts the listings' XML (a few KiB); a block fetched twice is 1 MiB.
check "epoch 1: no byte fetched twice to fill the cache" \
  test "$(stats_field body_bytes)" -lt $((4 * 8 * MiB + 40 * (128 << 10) + 256 * 1024))
check "cache directory is private" test "$(stat -c %a "$CACHE/data/objects")" = 700
check "cache files are private" bash -c \
  "test -z \"\$(find '$CACHE/data/objects' -type f ! -perm 600)\""
unmount "$MNT"

# --- epoch 2: a fresh mount, the page cache dropped: zero requests
mark_log
mount_bucket "$MNT" "s3://$BUCKET" "${common[@]}"
drop_caches
reset_stats
cpu0=$(daemon_cpu)
read_tree >"$TMP/epoch2.sums"
cpu=$(( $(daemon_cpu) - cpu0 ))
log "epoch 2 (passthrough): $(stats_field total) requests, daemon CPU $cpu ticks"
check "epoch 2: same bytes" cmp "$TMP/epoch1.sums" "$TMP/epoch2.sums"
check "epoch 2: zero requests" test "$(stats_field total)" -eq 0
unmount "$MNT"
# Counted once the daemon has ended: its log is flushed by then, not per line.
pt_opens=$(passthrough_opens)
log "epoch 2: $pt_opens opens through passthrough"
check "epoch 2: every open went through passthrough" test "$pt_opens" -eq 44

mark_log
mount_bucket "$MNT" "s3://$BUCKET" "${common[@]}" --no-passthrough
drop_caches
reset_stats
read_tree >"$TMP/served.sums"
check "the log names the served mode" grep -q "read mode: served by the daemon (--no-passthrough)" "$LOG"
log "epoch 2 (served): $(stats_field total) requests"
check "served epoch 2: same bytes" cmp "$TMP/epoch1.sums" "$TMP/served.sums"
check "served epoch 2: zero requests" test "$(stats_field total)" -eq 0
unmount "$MNT"
check "served epoch 2: no passthrough" test "$(passthrough_opens)" -eq 0

# --- a damaged cache file is fetched again, never served; a missing one too
mapfile -t files < <(find "$CACHE/data/objects" -type f -size $((8 * MiB))c | sort)
check "four 8 MiB cache files" test "${#files[@]}" -eq 4
printf 'XXXXXXXXXXXXXXXX' | dd of="${files[0]}" bs=1 seek=$((3 * MiB + 5)) conv=notrunc 2>/dev/null
rm -f "${files[1]}"
mount_bucket "$MNT" "s3://$BUCKET" "${common[@]}"
drop_caches
reset_stats
read_tree >"$TMP/repaired.sums"
log "after damage: $(gets) GETs, $(stats_field body_bytes) body bytes"
check "damaged and missing files: the right bytes" cmp "$TMP/epoch1.sums" "$TMP/repaired.sums"
check "damaged and missing files: fetched again" test "$(gets)" -ge 2
check "the bad block was detected" grep -q "failed their checksum" "$LOG"
check "only those two were fetched" test "$(stats_field body_bytes)" -le $((16 * MiB))
reset_stats
drop_caches
read_tree >"$TMP/repaired2.sums"
check "repaired: zero requests after" test "$(stats_field total)" -eq 0
check "repaired: same bytes" cmp "$TMP/epoch1.sums" "$TMP/repaired2.sums"
unmount "$MNT"

# --- an overwritten object is fetched anew once the metadata TTL has passed
mount_bucket "$MNT" "s3://$BUCKET" --cache "$CACHE" --metadata-ttl 1 --no-link-probe
old=$(timeout 60 sha256sum <"$MNT/data/f00000" | cut -d' ' -f1)
s3 put "$BUCKET" data/f00000 $((5 * MiB))
new=$(s3 sha256 "$BUCKET" data/f00000)
sleep 2
got=$(timeout 60 sha256sum <"$MNT/data/f00000" | cut -d' ' -f1)
check "overwritten object: the new bytes after the TTL" test "$got" = "$new"
check "overwritten object: they differ from the old" test "$old" != "$new"
got=$(timeout 60 sha256sum <"$MNT/data/f00000" | cut -d' ' -f1)
check "overwritten object: the new bytes again (cached)" test "$got" = "$new"
unmount "$MNT"

# --- eviction: 4 readers under a 24 MiB limit
SMALLC="$TMP/cache-small"
mount_bucket "$MNT" "s3://$BUCKET" --cache "$SMALLC" --max-cache-size 24M --metadata-ttl 60
peak=0
(cd "$MNT/data" && ls | timeout 120 xargs -P4 -n1 cat >/dev/null; cd "$MNT/small" &&
  ls | timeout 120 xargs -P4 -n4 cat >/dev/null) &
readers=$!
while kill -0 "$readers" 2>/dev/null; do
  b=$(cache_alloc "$SMALLC"); b=${b:-0}
  ((b > peak)) && peak=$b
  sleep 0.05
done
wait "$readers"
b=$(cache_alloc "$SMALLC"); ((b > peak)) && peak=$b
log "eviction: peak $peak bytes on disk under a 24 MiB limit"
check "eviction: the cache stayed within its limit" test "$peak" -le $((24 * MiB + MiB))
check "eviction: it did fill" test "$peak" -ge $((8 * MiB))
unmount "$MNT"

# --- a daemon killed mid-fill: the next mount uses what was written
KILLC="$TMP/cache-kill"
mount_bucket "$MNT" "s3://$BUCKET" --cache "$KILLC" --metadata-ttl indefinite
(timeout 120 cat "$MNT/big/f" >/dev/null 2>&1 || true) &
reader=$!
at_kill=0
for _ in $(seq 400); do
  at_kill=$(cache_alloc "$KILLC"); at_kill=${at_kill:-0}
  ((at_kill >= 16 * MiB)) && break
  sleep 0.02
done
for pid in $(daemon_pids); do kill -9 "$pid"; done
wait "$reader" || true
fusermount3 -uz "$MNT" 2>/dev/null || true
log "killed the daemon with $at_kill bytes of big/f on disk"
want=$(s3 sha256 "$BUCKET" big/f)
mount_bucket "$MNT" "s3://$BUCKET" --cache "$KILLC" --metadata-ttl indefinite
drop_caches
reset_stats
got=$(timeout 120 sha256sum <"$MNT/big/f" | cut -d' ' -f1)
check "after the kill: the right bytes" test "$got" = "$want"
fetched=$(stats_field body_bytes)
log "after the kill: $fetched bytes fetched of $((96 * MiB))"
if ((at_kill < 96 * MiB)); then
  check "after the kill: the cached part was used" test "$fetched" -lt $((96 * MiB))
fi
reset_stats
drop_caches
got=$(timeout 120 sha256sum <"$MNT/big/f" | cut -d' ' -f1)
check "after the kill: complete, zero requests next time" test "$(stats_field total)" -eq 0
unmount "$MNT"

# --- written: what the mount wrote is cached as it is uploaded
WC="$TMP/cache-written"
head -c $((40 * MiB)) /dev/urandom >"$TMP/w-big"
head -c $((300 << 10)) /dev/urandom >"$TMP/w-small"
head -c $((20 * MiB)) /dev/urandom >"$TMP/w-again"
mount_bucket "$MNT" "s3://$BUCKET" --cache "$WC" --metadata-ttl indefinite --no-link-probe --allow-overwrite
mkdir -p "$MNT/written"
cp "$TMP/w-big" "$MNT/written/big"
cp "$TMP/w-small" "$MNT/written/small"
cp "$TMP/w-small" "$MNT/written/again"
cp "$TMP/w-again" "$MNT/written/again"  # overwritten: only the new bytes may come back
unmount "$MNT"
check "written: the bucket holds what was written" \
  test "$(s3 sha256 "$BUCKET" written/big)" = "$(sha256sum <"$TMP/w-big" | cut -d' ' -f1)"
mark_log
mount_bucket "$MNT" "s3://$BUCKET" --cache "$WC" --metadata-ttl indefinite --no-link-probe --allow-overwrite
drop_caches
reset_stats
for f in big small again; do
  check "written: $f reads back right" cmp "$TMP/w-$f" "$MNT/written/$f"
done
log "written, read back: $(gets) GETs, $(stats_field body_bytes) body bytes"
check "written: read back with no GET" test "$(gets)" -eq 0
unmount "$MNT"
check "written: read back through passthrough" test "$(passthrough_opens)" -eq 3

finish
