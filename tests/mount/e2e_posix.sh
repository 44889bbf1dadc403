#!/usr/bin/env bash
# Mount end-to-end: files that behave like local files.
#   Symbolic links: ln -s, readlink, cat through a link, ls -l and find -type
#   l, a link to a directory, a dangling link, rm of a link, links across a
#   remount, stored as s3fs stores them (body = target, x-amz-meta-mode
#   41471), and read by s3fs (and s3fs's links read here) when s3fs is
#   installed. The requests of a walk (s3sim): none per file above 4095
#   bytes, one HEAD per smaller file, none with --no-link-probe, a HEAD and
#   a GET per link.
#   Unlink of open files: reads through the descriptor go on, the object
#   goes at the last close, a new file under the name survives it, and a
#   file unlinked while written never appears.
# Usage: e2e_posix.sh s3rver|s3sim   (BUCKETFS=path/to/bucketfs)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
setup_bucket e2e-posix

gone() { ! s3 exists "$BUCKET" "$1"; }
link_line() { ls -l "$1" | grep -q -- " $2 -> $3\$"; }

log "symbolic links"
check "mount" mount_bucket "$MNT" "s3://$BUCKET" --allow-delete
printf 'hello\n' >"$MNT/target.txt"
mkdir "$MNT/dir"
printf 'inner\n' >"$MNT/dir/inner.txt"
check "ln -s" ln -s target.txt "$MNT/l"
check "readlink" test "$(readlink "$MNT/l")" = target.txt
check "cat through the link" test "$(cat "$MNT/l")" = hello
check "stat -L follows it" test "$(stat -L -c %F "$MNT/l")" = "regular file"
check "lstat says symbolic link" test "$(stat -c '%F %s' "$MNT/l")" = "symbolic link 10"
check "ls -l shows the link" link_line "$MNT" l target.txt
check "ln -s to a directory" ln -s dir "$MNT/dl"
check "ls through the directory link" test "$(ls "$MNT/dl/")" = inner.txt
check "cat through the directory link" test "$(cat "$MNT/dl/inner.txt")" = inner
check "ln -s dangling" ln -s /nonexistent/x "$MNT/dangling"
check "readlink of the dangling link" test "$(readlink "$MNT/dangling")" = /nonexistent/x
expect_errno "cat of the dangling link" ENOENT cat "$MNT/dangling"
expect_errno "ln -s onto an existing name" EEXIST ln -s x "$MNT/target.txt"
check "find -type l" test "$(cd "$MNT" && find . -type l | sort | xargs)" = "./dangling ./dl ./l"
check "stored with s3fs's mode" test "$(s3 meta "$BUCKET" l | grep '^mode=')" = mode=41471
check "the body is the target" test "$(s3 body "$BUCKET" l)" = target.txt

log "links after a remount (nothing remembered)"
check "unmount" unmount "$MNT"
check "mount again" mount_bucket "$MNT" "s3://$BUCKET" --allow-delete
check "ls -l shows the link" link_line "$MNT" l target.txt
check "ls -l shows the directory link" link_line "$MNT" dl dir
check "ls -l shows the dangling link" link_line "$MNT" dangling /nonexistent/x
check "readlink after remount" test "$(readlink "$MNT/dl")" = dir
check "cat through the link after remount" test "$(cat "$MNT/l")" = hello
check "target.txt is a regular file" test "$(stat -c %F "$MNT/target.txt")" = "regular file"
check "rm of the link" rm "$MNT/l"
check "the link's object is gone" gone l
check "its target is not" test "$(cat "$MNT/target.txt")" = hello
expect_errno "stat of the removed link" ENOENT stat "$MNT/l"

log "interop with s3fs"
if command -v s3fs >/dev/null; then
  S3FS_MNT="$TMP/s3fs"
  mkdir -p "$S3FS_MNT"
  printf '%s:%s\n' "$AWS_ACCESS_KEY_ID" "$AWS_SECRET_ACCESS_KEY" >"$TMP/s3fs.passwd"
  chmod 600 "$TMP/s3fs.passwd"
  MOUNTS+=("$S3FS_MNT")
  check "s3fs mounts the bucket" timeout 30 s3fs "$BUCKET" "$S3FS_MNT" -o passwd_file="$TMP/s3fs.passwd" \
    -o url="$S3_ENDPOINT" -o use_path_request_style -o stat_cache_expire=1
  check "s3fs sees bucketfs's link" test "$(readlink "$S3FS_MNT/dl")" = dir
  check "s3fs follows it" test "$(cat "$S3FS_MNT/dl/inner.txt")" = inner
  check "s3fs: ln -s" ln -s target.txt "$S3FS_MNT/from-s3fs"
  sleep 1.2  # bucketfs's --metadata-ttl: its listing of the root ends
  check "bucketfs: ls -l shows s3fs's link" link_line "$MNT" from-s3fs target.txt
  check "bucketfs: readlink of s3fs's link" test "$(readlink "$MNT/from-s3fs")" = target.txt
  check "bucketfs: cat through s3fs's link" test "$(cat "$MNT/from-s3fs")" = hello
  check "s3fs unmounts" timeout 30 fusermount3 -u "$S3FS_MNT"
else
  echo "SKIP interop with s3fs: s3fs is not installed (apt-get install s3fs)"
fi

log "unlink of open files"
head -c 300000 /dev/urandom >"$TMP/data.bin"
cp "$TMP/data.bin" "$MNT/open.bin"
cp "$TMP/data.bin" "$MNT/replaced.bin"
check "read to the end after unlink, then the object goes" timeout 60 python3 - "$MNT" "$TMP/data.bin" <<'EOF'
import os, sys
mnt, expected = sys.argv[1], open(sys.argv[2], "rb").read()
path = os.path.join(mnt, "open.bin")
f = open(path, "rb")
head = f.read(1000)
os.unlink(path)
assert not os.path.exists(path), "the name is still there"
assert "open.bin" not in os.listdir(mnt), "the name is still listed"
assert os.fstat(f.fileno()).st_size == len(expected)
rest = f.read()
assert head + rest == expected, "bytes differ after unlink"
f.close()
EOF
check "open.bin is gone from the bucket" gone open.bin
check "a new file under the name survives the old descriptor's close" timeout 60 python3 - "$MNT" "$TMP/data.bin" <<'EOF'
import os, sys
mnt, expected = sys.argv[1], open(sys.argv[2], "rb").read()
path = os.path.join(mnt, "replaced.bin")
f = open(path, "rb")
os.unlink(path)
assert f.read() == expected
with open(path, "wb") as g:
    g.write(b"new file\n")
f.close()
assert open(path, "rb").read() == b"new file\n"
EOF
check "the new object is in the bucket" test "$(s3 body "$BUCKET" replaced.bin)" = "new file"
check "a file unlinked while written never appears" timeout 60 python3 - "$MNT" <<'EOF'
import os, sys
path = os.path.join(sys.argv[1], "scratch.bin")
f = open(path, "wb")
f.write(b"x" * 100000)
os.unlink(path)
assert not os.path.exists(path)
f.write(b"y" * 100000)
f.close()
assert not os.path.exists(path)
EOF
check "scratch.bin is not in the bucket" gone scratch.bin
check "unmount" unmount "$MNT"

log "--preserve-attrs: mode, owner and mtime across remounts"
check "mount --preserve-attrs" mount_bucket "$MNT" "s3://$BUCKET" --preserve-attrs --allow-overwrite
check "chmod 600" chmod 600 "$MNT/target.txt"
check "touch -d" touch -d "2001-02-03 04:05:06 UTC" "$MNT/target.txt"
if [[ $(id -u) -eq 0 ]]; then check "chown 1234:1235" chown 1234:1235 "$MNT/target.txt"; fi
check "stored as s3fs names them" test "$(s3 meta "$BUCKET" target.txt | grep -E '^(mode|mtime)=' | xargs)" = \
  "mode=33152 mtime=981173106"
check "the bytes are unchanged" test "$(cat "$MNT/target.txt")" = hello
mkdir -p "$TMP/tree/sub"
printf 'a\n' >"$TMP/tree/a"; chmod 751 "$TMP/tree/a"; touch -d "2010-01-01 00:00:00 UTC" "$TMP/tree/a"
printf 'b\n' >"$TMP/tree/sub/b"; chmod 640 "$TMP/tree/sub/b"; touch -d "2012-06-01 12:00:00 UTC" "$TMP/tree/sub/b"
attrs() { (cd "$1" && find . -type f -printf '%P %m %T@\n' | sed 's/\.[0-9]*$//' | sort); }
if command -v rsync >/dev/null; then
  check "rsync -a into the mount" timeout 60 rsync -a "$TMP/tree/" "$MNT/tree/"
else
  check "cp -a into the mount (no rsync)" cp -a "$TMP/tree" "$MNT/tree"
fi
check "unmount" unmount "$MNT"
check "mount --preserve-attrs again" mount_bucket "$MNT" "s3://$BUCKET" --preserve-attrs
check "mode and mtime after a remount" test "$(stat -c '%a %Y' "$MNT/target.txt")" = "600 981173106"
if [[ $(id -u) -eq 0 ]]; then
  check "owner after a remount" test "$(stat -c '%u:%g' "$MNT/target.txt")" = 1234:1235
fi
check "the tree's modes and mtimes round-trip" diff <(attrs "$TMP/tree") <(attrs "$MNT/tree")
check "unmount" unmount "$MNT"
check "mount without --preserve-attrs" mount_bucket "$MNT" "s3://$BUCKET"
check "without the flag: the mount's mode" test "$(stat -c '%a' "$MNT/target.txt")" = 644
check "unmount" unmount "$MNT"

if [[ "$SERVER" == s3sim ]]; then
  log "requests of a walk: ls -lR and find (s3sim's counter)"
  s3 put-many "$BUCKET" walk/large/f 200 8192
  s3 put-many "$BUCKET" walk/small/f 200 100
  s3 put-many "$BUCKET" walk/linked/f 200 8192
  s3 put-links "$BUCKET" walk/linked/l 20 f00000
  walk() {  # walk DIR [options]: WALKED = requests of ls -lR + find -type f in a fresh mount
    WALKED=-1
    mount_bucket "$MNT" "s3://$BUCKET" "${@:2}" || return 1
    reset_stats
    timeout 120 ls -lR "$MNT/$1" >/dev/null && timeout 120 find "$MNT/$1" -type f >/dev/null
    WALKED=$(requests)
    unmount "$MNT"
  }
  walk walk/large; large=$WALKED
  walk walk/small; small=$WALKED
  walk walk/small --no-link-probe; small_noprobe=$WALKED
  walk walk/linked; linked=$WALKED
  echo "requests of a walk over 200 files: 8 KiB $large, 100 B $small, 100 B with --no-link-probe" \
    "$small_noprobe; 8 KiB and 20 links $linked"
  # Each link: its HEAD (type) and the GET of its target (ls -l shows it).
  check "200 files and 20 links: a HEAD and a GET per link" test "$linked" -ge 40 -a "$linked" -lt 60
  check "200 files above 4095 bytes: no request per file" test "$large" -lt 20
  check "200 files of 100 bytes: one HEAD each" test "$small" -ge 200 -a "$small" -lt 220
  check "--no-link-probe: no request per file" test "$small_noprobe" -lt 20
fi

finish
