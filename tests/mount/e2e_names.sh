#!/usr/bin/env bash
# Mount end-to-end: odd key names (created directly in the bucket) must not
# crash the mount and must show as docs/SEMANTICS.md says; and a directory of
# 10,000 entries (s3sim; 2,500 on s3rver) is listed completely.
#   a//b        -> "a" is a directory; the empty component is not shown
#   ./x, ../y   -> not shown ("." and ".." are the directory's own links)
#   dir/        -> a marker: "dir" is an empty directory
#   300 bytes   -> not shown (NAME_MAX is 255); lookup gives ENAMETOOLONG
#   same, same/child -> "same" is the file (the file wins; same/child is hidden)
# s3rver stores keys as files, so it cannot hold most of these names: the
# odd-name part runs against s3sim only; the 10,000 entries run on both.
# Usage: e2e_names.sh s3rver|s3sim
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
require_env
# s3sim preloads 10,000 objects instantly; s3rver takes each PUT through
# node and its disk (tens per second on a busy machine), so it gets 2,500:
# still three ListObjectsV2 pages.
COUNT=10000
[[ "$SERVER" == s3sim ]] || COUNT="${E2E_S3RVER_DIR_ENTRIES:-2500}"
if [[ "$SERVER" == s3sim ]]; then
  start_server --preload "e2e-names/big/:$COUNT:1"
else
  start_server
fi
BUCKET=e2e-names
MNT="$TMP/mnt"

if [[ "$SERVER" == s3sim ]]; then
  long=$(printf 'n%.0s' $(seq 1 300))
  for key in "odd/a//b" "odd/./x" "odd/../y" "odd/dir/" "odd/$long" "odd/same" "odd/same/child" \
             "odd/plain"; do
    s3 put "$BUCKET" "$key" 5
  done
else
  s3 mkbucket "$BUCKET"
  log "creating $COUNT objects with parallel PUTs"
  s3 put-many "$BUCKET" big/obj- "$COUNT"
fi

check "mount" mount_bucket "$MNT" "s3://$BUCKET"

log "a directory of $COUNT entries"
timeout 120 ls -f "$MNT/big" | grep -v '^\.\.\?$' | sort >"$TMP/listed"
s3 list "$BUCKET" big/ | cut -f1 | sed 's#^big/##' | sort >"$TMP/expected"
check "ls lists all $COUNT names" test "$(wc -l <"$TMP/listed")" -eq "$COUNT"
check "the names are the bucket's" diff "$TMP/listed" "$TMP/expected"
check "ls -l (readdirplus) sees $COUNT files" \
  test "$(ls -l "$MNT/big" | grep -c '^-')" -eq "$COUNT"

if [[ "$SERVER" == s3sim ]]; then
  log "odd key names"
  timeout 60 ls -a "$MNT/odd" | sort >"$TMP/odd.listed"
  printf '%s\n' . .. a dir plain same | sort >"$TMP/odd.expected"
  check "odd/ shows exactly . .. a dir plain same" diff "$TMP/odd.listed" "$TMP/odd.expected"
  check "a (from a//b) is a directory" test -d "$MNT/odd/a"
  check "dir/ marker is an empty directory" test -d "$MNT/odd/dir" -a -z "$(ls -A "$MNT/odd/dir")"
  check "same is the file, same/child is hidden" test -f "$MNT/odd/same" -a ! -e "$MNT/odd/same/child"
  check "plain reads back" test "$(stat -c %s "$MNT/odd/plain")" -eq 5
  expect_errno "lookup of the 300-byte name" ENAMETOOLONG stat "$MNT/odd/$long"
  check "ls -lR of odd/ completes" bash -c "ls -lR '$MNT/odd' >/dev/null"
  check "the mount is still alive" test -d "$MNT/big"
fi

check "unmount" unmount "$MNT"
finish
