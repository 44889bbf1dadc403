#!/usr/bin/env bash
# Mount end-to-end: files open for writing behave like local files.
#   O_RDWR write then read back on the same descriptor; pwrite/pread on an
#   existing object (--allow-overwrite); a second open sees the bytes so
#   far; fsync makes the bytes so far the object and the descriptor keeps
#   writing; truncate of a closed object shrinks and grows it (s3sim: with
#   UploadPartCopy, counted; s3rver has none and falls back to GET+upload);
#   shared maps (a map then pwrite; np.memmap w+ and r+) reach the object.
#   Every check compares the bucket's object after close too.
# Usage: e2e_rw.sh s3rver|s3sim   (BUCKETFS=path/to/bucketfs)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
setup_bucket e2e-rw
OPS="$E2E_DIR/rw_ops.py"
ops() { timeout 120 python3 "$OPS" "$@"; }
part_copies() {
  curl -s "$S3_ENDPOINT/__s3sim/stats" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["ops"].get("UploadPartCopy", 0))'
}

check "mount" mount_bucket "$MNT" "s3://$BUCKET" --allow-overwrite --allow-delete --part-size 5M

log "reads through write handles"
check "O_RDWR write, lseek, read" ops rdwr-read-back "$MNT/rdwr"
s3 put "$BUCKET" existing 3000000
check "pwrite/pread on an existing object" ops pwrite-pread "$MNT/existing" "$TMP/existing.expected"
check "the object after close" same_as existing "$TMP/existing.expected"
check "a second open sees the bytes so far" ops second-open "$MNT/shared"
check "the shared file's object" test "$(s3 body "$BUCKET" shared)" = "first part,second!"

log "fsync keeps writing"
coproc CKPT { ops fsync-keep-writing "$MNT/ckpt" start; }
ckpt_pid=$CKPT_PID
ckpt_ended() { wait "$ckpt_pid"; }
read -r -t 60 line <&"${CKPT[0]}" || line=""
check "fsync returned" test "$line" = synced
check "after fsync the object holds the bytes so far" test "$(s3 body "$BUCKET" ckpt)" = "checkpoint 1"
echo go >&"${CKPT[1]}"
check "writes after fsync" ckpt_ended
check "the object after close" test "$(s3 body "$BUCKET" ckpt)" = "$(printf 'checkpoint 1\ncheckpoint 2\nend')"

log "truncate of a closed object"
s3 put "$BUCKET" big 12582912  # 12 MiB: two 5 MiB parts can be copied
s3 body "$BUCKET" big >"$TMP/big"
[[ "$SERVER" != s3sim ]] || copies_before=$(part_copies)
check "truncate shrinks" truncate -s 11M "$MNT/big"
truncate -s 11M "$TMP/big"
check "the shrunk object" same_as big "$TMP/big"
if [[ "$SERVER" == s3sim ]]; then
  check "its unchanged parts were copied server side" test "$(part_copies)" -ge $((copies_before + 2))
fi
check "truncate grows with zeros" truncate -s 13M "$MNT/big"
truncate -s 13M "$TMP/big"
check "the grown object" same_as big "$TMP/big"
check "stat shows the size" test "$(stat -c %s "$MNT/big")" = 13631488

log "shared maps"
check "map, munmap, then pwrite on the descriptor" ops mmap-then-pwrite "$MNT/mapped"
if python3 -c "import numpy" 2>/dev/null; then
  check "np.memmap w+" ops memmap "$MNT/mm" w+ "$TMP/mm.w"
  check "its object" same_as mm "$TMP/mm.w"
  check "np.memmap r+" ops memmap "$MNT/mm" r+ "$TMP/mm.r"
  check "its object after r+" same_as mm "$TMP/mm.r"
else
  echo "numpy missing: np.memmap checks skipped"
fi

log "remount"
check "unmount" unmount "$MNT"
check "mount again" mount_bucket "$MNT" "s3://$BUCKET"
check "read back after the remount" cmp "$MNT/big" "$TMP/big"
check "unmount again" unmount "$MNT"
finish
