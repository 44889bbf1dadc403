#!/usr/bin/env bash
# Mount end-to-end: data in and out of a real mount, against one server.
#   cp -r of a nested tree in and out (sha256 identical, also after a
#   remount), ls -lR against the bucket's own listing, stat, unlink with
#   --allow-delete and its refusal (EPERM) without, mkdir/rmdir, rename of a
#   file and the refusal of a directory rename (EXDEV), concurrent readers of
#   one file, and a read-only mount (EROFS).
# Usage: e2e_basic.sh s3rver|s3sim   (BUCKETFS=path/to/bucketfs)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
setup_bucket e2e-basic

log "a local tree: nested directories, empty to multipart-sized files"
SRC="$TMP/src"
mkdir -p "$SRC/a/b/c" "$SRC/a/d" "$SRC/e"
: >"$SRC/empty"
printf 'hello\n' >"$SRC/a/hello.txt"
head -c 4096 /dev/urandom >"$SRC/a/b/4k.bin"
head -c $((1024 * 1024 + 3)) /dev/urandom >"$SRC/a/b/c/1m.bin"
head -c $((20 * 1024 * 1024 + 5)) /dev/urandom >"$SRC/a/d/20m.bin"  # > one 16 MiB part
for i in $(seq 1 20); do echo "file $i" >"$SRC/e/f$i.txt"; done

log "mount and cp -r in"
check "mount exits 0 once serving" mount_bucket "$MNT" "s3://$BUCKET" --allow-delete
check "mountpoint is a FUSE mount" grep -q " $MNT fuse.bucketfs " /proc/mounts
# The daemon raises the mount's kernel readahead before INIT (fuse/mount_readahead.h);
# the BDI file is writable by root only.
readahead_kb() {
  local dev
  dev=$(awk -v m="$MNT" '$5 == m { d = $3 } END { print d }' /proc/self/mountinfo)
  cat "/sys/class/bdi/$dev/read_ahead_kb"
}
if [[ $(id -u) -eq 0 ]]; then
  check "kernel readahead is 16 MiB" test "$(readahead_kb)" = 16384
fi
check "cp -r into the mount" cp -r "$SRC" "$MNT/tree"
sums "$SRC" >"$TMP/src.sums"
check "checksums through the same mount" diff <(sums "$MNT/tree") "$TMP/src.sums"
check "objects are in the bucket" s3 exists "$BUCKET" tree/a/d/20m.bin
check "object body matches" test "$(s3 sha256 "$BUCKET" tree/a/d/20m.bin)" = \
  "$(sha256sum <"$SRC/a/d/20m.bin" | cut -d' ' -f1)"

log "remount (no caches) and cp -r out"
check "unmount" unmount "$MNT"
check "mount again" mount_bucket "$MNT" "s3://$BUCKET" --allow-delete
check "cp -r out of the mount" cp -r "$MNT/tree" "$TMP/out"
check "checksums after the round trip" diff <(sums "$TMP/out") "$TMP/src.sums"

log "ls -lR against the bucket's listing"
s3 list "$BUCKET" | awk -F'\t' '{print $1 "\t" $2}' >"$TMP/bucket.list"
(cd "$MNT" && timeout 120 find . -type f -printf '%P\t%s\n' | sort) >"$TMP/mount.list"
check "every object is a file with its size" diff "$TMP/mount.list" "$TMP/bucket.list"
check "ls -lR lists every file" test "$(ls -lR "$MNT" | grep -c '^-')" -eq "$(wc -l <"$TMP/bucket.list")"

log "stat"
check "file size" test "$(stat -c %s "$MNT/tree/a/d/20m.bin")" -eq $((20 * 1024 * 1024 + 5))
check "file type and mode" test "$(stat -c '%F %a' "$MNT/tree/a/hello.txt")" = "regular file 644"
check "directory type and mode" test "$(stat -c '%F %a' "$MNT/tree/a/b")" = "directory 755"
check "owner is the mounting user" test "$(stat -c %u "$MNT/tree/a/hello.txt")" -eq "$(id -u)"
expect_errno "stat of a missing name" ENOENT stat "$MNT/tree/nope"

log "unlink with --allow-delete"
check "rm a file" rm "$MNT/tree/e/f1.txt"
check "gone from the mount" test ! -e "$MNT/tree/e/f1.txt"
check "gone from the bucket" bash -c "! python3 '$E2E_DIR/s3util.py' exists '$BUCKET' tree/e/f1.txt"

log "mkdir / rmdir"
check "mkdir" mkdir "$MNT/newdir"
check "new directory is listed" bash -c "ls '$MNT' | grep -qx newdir"
check "rmdir of the empty directory" rmdir "$MNT/newdir"
check "gone after rmdir" test ! -e "$MNT/newdir"
check "mkdir, then write a file in it" bash -c "mkdir '$MNT/d2' && echo x >'$MNT/d2/f'"
check "the file is in the bucket" s3 exists "$BUCKET" d2/f
expect_errno "rmdir of a non-empty directory" ENOTEMPTY rmdir "$MNT/d2"

log "rename"
check "rename a file" mv "$MNT/tree/a/hello.txt" "$MNT/tree/a/renamed.txt"
check "new name has the content" test "$(cat "$MNT/tree/a/renamed.txt")" = hello
check "old key is gone" bash -c "! python3 '$E2E_DIR/s3util.py' exists '$BUCKET' tree/a/hello.txt"
check "new key exists" s3 exists "$BUCKET" tree/a/renamed.txt
expect_errno "rename of a directory without --allow-dir-rename" EXDEV \
  python3 -c "import os, sys; os.rename(sys.argv[1], sys.argv[2])" "$MNT/tree/a/b" "$MNT/tree/a/b2"

log "concurrent readers of one file"
want=$(sha256sum <"$SRC/a/d/20m.bin" | cut -d' ' -f1)
readers=()
for i in $(seq 1 8); do
  timeout 120 bash -c "sha256sum <'$MNT/tree/a/d/20m.bin' | cut -d' ' -f1 >'$TMP/reader.$i'" &
  readers+=($!)
done
wait "${readers[@]}" || true
check "8 parallel readers got identical bytes" \
  test "$(cat "$TMP"/reader.* | sort -u)" = "$want"
check "unmount" unmount "$MNT"

log "without --allow-delete: unlink refused"
MNT2="$TMP/mnt-nodelete"
check "mount without --allow-delete" mount_bucket "$MNT2" "s3://$BUCKET"
expect_errno "rm without --allow-delete" EPERM rm "$MNT2/tree/e/f2.txt"
check "object still there" s3 exists "$BUCKET" tree/e/f2.txt
check "unmount" unmount "$MNT2"

log "read-only mount"
MNT3="$TMP/mnt-ro"
check "mount --read-only" mount_bucket "$MNT3" "s3://$BUCKET" --read-only --allow-delete
check "reads work" test "$(cat "$MNT3/tree/e/f2.txt")" = "file 2"
expect_errno "write on a read-only mount" EROFS bash -c "echo x >'$MNT3/new.txt'"
expect_errno "mkdir on a read-only mount" EROFS mkdir "$MNT3/newdir"
expect_errno "rm on a read-only mount" EROFS rm "$MNT3/tree/e/f2.txt"
check "unmount" unmount "$MNT3"

log "a prefix mount"
MNT4="$TMP/mnt-prefix"
check "mount s3://bucket/tree/a" mount_bucket "$MNT4" "s3://$BUCKET/tree/a"
check "prefix is the root" test -f "$MNT4/renamed.txt" -a -d "$MNT4/b/c"
check "unmount" unmount "$MNT4"

finish
