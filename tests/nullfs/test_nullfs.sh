#!/usr/bin/env bash
# nullfs end to end: mounts the daemon for real (page cache, then direct I/O)
# and checks that it serves the pattern of pattern.h at every offset, accepts
# and discards writes, and unmounts cleanly. The benchmark's ceiling figures
# are only worth something while this passes.
# Usage: test_nullfs.sh path/to/nullfs     (exit 77: skipped)
set -euo pipefail
export PATH="/usr/bin:/bin:$PATH"
NULLFS="$1"
[[ -x "$NULLFS" ]] || { echo "nullfs binary not found: $NULLFS"; exit 1; }
[[ -e /dev/fuse ]] || { echo "SKIP: /dev/fuse is missing"; exit 77; }
command -v fusermount3 >/dev/null || { echo "SKIP: fusermount3 is missing"; exit 77; }

TMP="$(mktemp -d /tmp/nullfs-test.XXXXXX)"
MNT="$TMP/mnt"
mkdir -p "$MNT"
PID=""
cleanup() {
  if awk -v m="$MNT" '$2 == m { f = 1 } END { exit !f }' /proc/mounts; then
    timeout 10 fusermount3 -uz "$MNT" || true
  fi
  [[ -z "$PID" ]] || kill "$PID" 2>/dev/null || true
  rmdir "$MNT" 2>/dev/null || true
  rm -rf "$TMP"
}
trap cleanup EXIT
FAILURES=0
check() {  # shell functions run in this shell (they keep PID), commands under a timeout
  local name="$1"; shift
  local runner=(timeout 120)
  if declare -F "$1" >/dev/null; then runner=(); fi
  if "${runner[@]}" "$@"; then echo "ok   $name"; else echo "FAIL $name"; FAILURES=$((FAILURES + 1)); fi
}

FILES=3
SIZE=$((5 * 1024 * 1024 + 117))  # not a multiple of a page, a read or the period

mount_nullfs() {
  "$NULLFS" "$MNT" --files "$FILES" --size "$SIZE" "$@" 2>"$TMP/nullfs.log" &
  PID=$!
  local deadline=$((SECONDS + 30))
  until awk -v m="$MNT" '$2 == m { f = 1 } END { exit !f }' /proc/mounts; do
    kill -0 "$PID" 2>/dev/null || { echo "nullfs exited:"; cat "$TMP/nullfs.log"; return 1; }
    [[ $SECONDS -lt $deadline ]] || { echo "nullfs did not mount"; return 1; }
    sleep 0.1
  done
}

unmount_nullfs() {
  timeout 30 fusermount3 -u "$MNT" || return 1
  local status=0
  wait "$PID" || status=$?
  PID=""
  [[ $status -eq 0 ]] || { echo "nullfs exited $status"; cat "$TMP/nullfs.log"; return 1; }
}

# The pattern of pattern.h, written independently: whole files, a thousand
# preads at odd offsets and sizes, 4 KiB reads, and a private mapping.
check_bytes() {
  python3 - "$MNT" "$FILES" "$SIZE" <<'PY'
import mmap, os, random, sys
mnt, files, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
PERIOD, SHIFT = (1 << 20) + 4093, 7919
table = bytes(((j * 131) ^ (j >> 8) ^ (j >> 16)) & 0xFF for j in range(PERIOD))
def expected(f):
    start = f * SHIFT % PERIOD
    out = bytearray(table[start:])
    while len(out) < size:
        out += table
    return bytes(out[:size])
names = sorted(os.listdir(os.path.join(mnt, "seq")))
assert names == [f"file-{i}" for i in range(files)], names
rng = random.Random(7)
for f in range(files):
    want = expected(f)
    path = os.path.join(mnt, "seq", f"file-{f}")
    assert os.stat(path).st_size == size
    with open(path, "rb") as fh:
        got = fh.read()
    assert got == want, f"file-{f}: whole-file read differs"
    fd = os.open(path, os.O_RDONLY)
    for _ in range(1000):
        off = rng.randrange(0, size + 10)
        n = rng.randrange(1, 3 << 20)
        assert os.pread(fd, n, off) == want[off:off + n], f"file-{f}: pread({n}, {off}) differs"
    os.lseek(fd, 0, os.SEEK_SET)
    parts = []
    while chunk := os.read(fd, 4096):
        parts.append(chunk)
    assert b"".join(parts) == want, f"file-{f}: 4 KiB reads differ"
    m = mmap.mmap(fd, 0, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ)
    assert m[:] == want, f"file-{f}: MAP_PRIVATE differs"
    m.close()
    os.close(fd)
assert not os.path.exists(os.path.join(mnt, "seq", f"file-{files}"))
assert not os.path.exists(os.path.join(mnt, "seq", "file-01"))
PY
}

check_writes() {
  dd if=/dev/zero of="$MNT/write/w" bs=1M count=3 conv=fsync status=none || return 1
  [[ $(stat -c %s "$MNT/write/w") -eq $((3 << 20)) ]] || { echo "wrong size"; return 1; }
  ! cat "$MNT/write/w" >/dev/null 2>&1 || { echo "a discarded file read back"; return 1; }
  truncate -s 5 "$MNT/write/w" && [[ $(stat -c %s "$MNT/write/w") -eq 5 ]] || return 1
  rm "$MNT/write/w" && [[ ! -e "$MNT/write/w" ]] || return 1
  ! (echo x >"$MNT/seq/file-0") 2>/dev/null || { echo "a pattern file took a write"; return 1; }
}

check "mount (page cache)" mount_nullfs
check "pattern bytes through the page cache" check_bytes
check "writes are taken and dropped" check_writes
check "unmount, daemon exits 0" unmount_nullfs
check "mount (--direct-io --keep-cache)" mount_nullfs --direct-io --keep-cache
check "pattern bytes with direct I/O" check_bytes
check "O_DIRECT read" bash -c "[[ \$(dd if='$MNT/seq/file-1' bs=1M iflag=direct status=none |
  tee '$TMP/direct' | wc -c) -eq $SIZE ]] && cmp -s '$TMP/direct' '$MNT/seq/file-1'"
check "writes are taken and dropped" check_writes
check "unmount, daemon exits 0" unmount_nullfs
if [[ $FAILURES -gt 0 ]]; then
  echo "$FAILURES check(s) failed"; cat "$TMP/nullfs.log"; exit 1
fi
echo "all checks passed"
