#!/usr/bin/env bash
# Mount end-to-end: 8 prefetch streams at once through the page cache.
#   8 readers of 8 files read each file's exact bytes while the streams share
#   the window and give parts back as soon as every page was read
#   (prefetch/read_coverage.h); each file is still fetched once (the daemon's
#   per-reader stats: one stream start, no seek, its size in fetches), so no
#   part went before a late readahead READ needed it.
# Usage: e2e_streams.sh s3rver|s3sim   (BUCKETFS=path/to/bucketfs)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
setup_bucket e2e-streams

log "8 objects of about 24 MiB (sizes not a multiple of a page)"
for i in $(seq 0 7); do
  head -c $((24 * 1024 * 1024 + 4096 * i + 7)) /dev/urandom >"$TMP/f$i"
  check "put f$i" s3 put "$BUCKET" "streams/f$i" <"$TMP/f$i"
done

check "mount" mount_bucket "$MNT" "s3://$BUCKET"
log "8 readers at once"
readers=()
for i in $(seq 0 7); do
  timeout 120 bash -c "dd if='$MNT/streams/f$i' bs=1M status=none | cmp - '$TMP/f$i' \
    && echo ok >'$TMP/ok.$i'" &
  readers+=($!)
done
wait "${readers[@]}" || true
check "every reader got its file's exact bytes" test "$(cat "$TMP"/ok.* 2>/dev/null | grep -c ok)" = 8

# The debug line of each reader at close: every byte fetched once, by one
# stream. Pages the kernel asks for a second time (it dropped them, or failed
# to fill them under memory pressure: CI saw 1 and 2 such READs in a file,
# a loaded machine up to 3 of up to 1 MiB) are fetched again and counted
# apart as re-reads; any other extra fetch (a late readahead READ whose part
# had gone) fails the check: size <= fetched and fetched - re-read <= size.
fetched_once() {  # fetched_once FILE SIZE
  local line fetched reread
  line=$(grep -o "closed s3://$BUCKET/streams/$1: .*" "$LOG") || return 1
  [[ $line =~ fetches\ of\ ([0-9]+)\ bytes,\ 1\ stream\ starts,\ 0\ seeks, ]] || return 1
  fetched=${BASH_REMATCH[1]}
  [[ $line =~ \(([0-9]+)\ bytes\ fetched\ again\) ]] || return 1
  reread=${BASH_REMATCH[1]}
  [[ $fetched -ge $2 && $((fetched - reread)) -le $2 ]]
}
for i in $(seq 0 7); do
  size=$(stat -c %s "$TMP/f$i")
  check "f$i: one stream fetched each byte once (besides re-reads)" wait_for 10 fetched_once "f$i" "$size"
done
rereads=$(grep -c "closed s3://$BUCKET/streams/.* [1-9][0-9]* re-reads" "$LOG" || true)
[[ $rereads -eq 0 ]] || log "note: $rereads file(s) saw pages read again by the kernel"
# On failure, show what each reader's stats said (this check failed once under load).
if [[ $FAILURES -gt 0 ]]; then
  echo "reader stats at close (expected: fetches of the file size, 1 stream start, 0 seeks):"
  grep "closed s3://$BUCKET/streams/" "$LOG" || echo "(no close lines in $LOG)"
fi
check "unmount" unmount "$MNT"
finish
