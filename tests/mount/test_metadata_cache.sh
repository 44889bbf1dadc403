#!/usr/bin/env bash
# Mount end-to-end for the LMDB metadata cache, against s3sim
# (its request counter proves what reached the server):
#   warm         a second `find` on the same mount sends no request
#   remount      `find` after a remount with --metadata-ttl indefinite sends none
#   negative     1000 stats of missing names: after the first pass, none
#   own-write    a file written through the mount is listed at once
#   ttl          a change made directly in the bucket appears after the TTL
# Usage: test_metadata_cache.sh s3sim   (s3rver has no request counter: skipped)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
[[ "$SERVER" == s3sim ]] || skip "needs s3sim's request counter"
CACHE="$TMP/cache"
setup_bucket e2e-metacache
for d in 0 1 2 3; do s3 put-many "$BUCKET" "dir$d/f" 50; done
s3 put "$BUCKET" top.txt 10

count() { timeout 120 find "$MNT" | wc -l; }
# Objects of 1 and 10 bytes could be symbolic links, whose type only a HEAD
# tells (the cache does not keep it): these walks are measured without the
# probe (SEMANTICS.md, "Symbolic links"; e2e_posix.sh measures it).
indefinite=(--cache "$CACHE" --metadata-ttl indefinite --negative-ttl indefinite --no-link-probe)

mount_bucket "$MNT" "s3://$BUCKET" "${indefinite[@]}"
reset_stats
cold=$(count)
log "cold find: $cold entries, $(requests) requests"
check "cold walk sees the tree" test "$cold" -eq 206  # root + top + 4 dirs + 200 files
check "cache dir is private" test "$(stat -c %a "$CACHE/metadata")" = 700
reset_stats
warm=$(count)
n=$(requests)
log "warm find: $warm entries, $n requests"
check "warm walk: same entries" test "$warm" -eq "$cold"
check "warm walk: zero requests" test "$n" -eq 0
unmount "$MNT"

mount_bucket "$MNT" "s3://$BUCKET" "${indefinite[@]}"
reset_stats
again=$(count)
n=$(requests)
log "remounted find: $again entries, $n requests"
check "remounted walk: same entries" test "$again" -eq "$cold"
check "remounted walk: zero requests" test "$n" -eq 0
# find got the files as names only (--readdirplus auto); their types and a
# stat of each after it (find -printf %s: a LOOKUP each) still come from the
# cache, with the sizes S3 listed.
reset_stats
check "names-only entries keep their type" test "$(timeout 120 find "$MNT" -type f | wc -l)" -eq 201
sizes=$(timeout 120 find "$MNT" -type f -printf '%s\n' | sort | uniq -c | tr -s ' ' | tr '\n' ';')
log "file sizes after the names-only walk: $sizes"
check "stat walk after find: the listed sizes" test "$sizes" = " 200 1; 1 10;"
check "stat walk after find: zero requests" test "$(requests)" -eq 0

stat_missing() {  # 1000 stats: 50 missing names, 20 times each
  timeout 120 python3 - "$MNT" <<'PY'
import os, sys
missing = 0
for _ in range(20):
    for i in range(50):
        try:
            os.stat(os.path.join(sys.argv[1], "dir0", f"nomod{i}.py"))
        except FileNotFoundError:
            missing += 1
sys.exit(0 if missing == 1000 else 1)
PY
}
reset_stats
check "1000 stats of missing names fail with ENOENT" stat_missing
n=$(requests)
log "first pass of missing names: $n requests"
check "missing names: dir0's cached listing answers them" test "$n" -eq 0
unmount "$MNT"
mount_bucket "$MNT" "s3://$BUCKET" "${indefinite[@]}"
reset_stats
check "1000 stats after a remount" stat_missing
check "missing names after a remount: zero requests" test "$(requests)" -eq 0

# Missing names at the root of a fresh cache: negative entries, asked once.
unmount "$MNT"
rm -rf "$CACHE"
mount_bucket "$MNT" "s3://$BUCKET" "${indefinite[@]}"
stat_root_missing() {
  timeout 120 python3 - "$MNT" <<'PY'
import os, sys
for _ in range(20):
    for i in range(50):
        try:
            os.stat(os.path.join(sys.argv[1], f"nodir{i}"))
            sys.exit(1)
        except FileNotFoundError:
            pass
PY
}
reset_stats
check "1000 stats of missing root names" stat_root_missing
n=$(requests)
log "missing root names, cold: $n requests (HEAD + LIST per name)"
check "each missing name asked once" test "$n" -le 100
unmount "$MNT"
mount_bucket "$MNT" "s3://$BUCKET" "${indefinite[@]}"
reset_stats
check "1000 stats of missing root names after a remount" stat_root_missing
check "negative entries survive the remount: zero requests" test "$(requests)" -eq 0

echo hello >"$TMP/local.txt"
check "write through the mount" cp "$TMP/local.txt" "$MNT/dir2/written.txt"
check "own write listed at once" bash -c "ls '$MNT/dir2' | grep -qx written.txt"
check "own write has its size" test "$(stat -c %s "$MNT/dir2/written.txt")" -eq 6
unmount "$MNT"
mount_bucket "$MNT" "s3://$BUCKET" "${indefinite[@]}"
check "own write listed after a remount" bash -c "ls '$MNT/dir2' | grep -qx written.txt"
unmount "$MNT"

# Short TTL: another writer's object shows up once the TTL has passed.
mount_bucket "$MNT" "s3://$BUCKET" --cache "$CACHE" --metadata-ttl 3
ls "$MNT/dir3" >/dev/null
s3 put "$BUCKET" dir3/late.txt 5
if ls "$MNT/dir3" | grep -qx late.txt; then
  log "late.txt already visible (the put took longer than the TTL)"
else
  log "late.txt not visible yet (cached listing)"
fi
sleep 4
check "bucket change appears after the TTL" bash -c "ls '$MNT/dir3' | grep -qx late.txt"
unmount "$MNT"
finish
