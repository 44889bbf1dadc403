#!/usr/bin/env bash
# Mount end-to-end: --direct-io (FOPEN_DIRECT_IO on every open) and
# --max-memory, against one server.
#   The budget reaches the read path; whole-file reads (1 MiB, O_DIRECT,
#   4 KiB and odd-sized sequential reads) return the object's bytes; a whole
#   read is one prefetch stream that fetches each byte once (the daemon's
#   per-reader stats), although without kernel readahead the reads come one
#   at a time at the application's size; on a read-write mount MAP_SHARED
#   mmap fails with ENODEV, also for a write handle (never SIGBUS), while
#   MAP_PRIVATE reads the right bytes; on a read-only mount MAP_SHARED reads
#   the right bytes (np.load mmap_mode="r", np.memmap, a safetensors file)
#   when the kernel offers FUSE_DIRECT_IO_ALLOW_MMAP (which bucketfs adds to
#   libfuse's INIT reply); a file written through the mount arrives intact.
# Usage: e2e_direct_io.sh s3rver|s3sim   (BUCKETFS=path/to/bucketfs)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
setup_bucket e2e-direct-io

log "an object of 40 MiB + 4097 bytes (not a multiple of any read size)"
SIZE=$((40 * 1024 * 1024 + 4097))
head -c "$SIZE" /dev/urandom >"$TMP/obj"
SUM=$(sha256sum <"$TMP/obj" | cut -d' ' -f1)
s3 put "$BUCKET" data/obj <"$TMP/obj"

check "mount with --direct-io --max-memory 64M" \
  mount_bucket "$MNT" "s3://$BUCKET" --direct-io --max-memory 64M
# The log reaches the file within a few seconds (spdlog flushes periodically).
check "the read path got the budget" wait_for 10 grep -q "read-ahead memory budget 64 MiB" "$LOG"

# closed_stats: the daemon's debug line for the last reader of data/obj closed.
closed_stats() { grep "closed s3://$BUCKET/data/obj:" "$LOG" | tail -1; }
# read_stats_ok COMMAND...: runs a whole-file read, then waits for its close
# line and checks it was one stream that fetched exactly the file's bytes.
read_stats_ok() {
  local before after
  before=$(grep -c "closed s3://$BUCKET/data/obj:" "$LOG" || true)
  "$@" >/dev/null || return 1
  wait_for 10 bash -c "[[ \$(grep -c 'closed s3://$BUCKET/data/obj:' '$LOG') -gt $before ]]" ||
    { echo "no close line in the log"; return 1; }
  after=$(closed_stats)
  echo "  $after"
  [[ "$after" == *" fetches of $SIZE bytes, 1 stream starts, 0 seeks,"* ]]
}

log "whole-file reads"
check "sha256sum (its own read size)" \
  test "$(timeout 60 sha256sum <"$MNT/data/obj" | cut -d' ' -f1)" = "$SUM"
check "dd bs=1M" \
  test "$(timeout 60 dd if="$MNT/data/obj" bs=1M status=none | sha256sum | cut -d' ' -f1)" = "$SUM"
check "dd bs=1M iflag=direct (O_DIRECT)" \
  test "$(timeout 60 dd if="$MNT/data/obj" bs=1M iflag=direct status=none | sha256sum |
          cut -d' ' -f1)" = "$SUM"
check "4 KiB sequential reads" \
  test "$(timeout 120 dd if="$MNT/data/obj" bs=4k status=none | sha256sum | cut -d' ' -f1)" = "$SUM"
# Odd sizes: every read straddles part and page boundaries differently.
check "4095-byte sequential reads" test "$(timeout 120 python3 -c '
import hashlib, sys
h = hashlib.sha256()
with open(sys.argv[1], "rb", buffering=0) as f:
    while True:
        b = f.read(4095)
        if not b:
            break
        h.update(b)
print(h.hexdigest())' "$MNT/data/obj")" = "$SUM"

log "one stream, each byte fetched once (reads arrive one at a time, no kernel readahead)"
check "dd bs=1M: one stream, 1.0x bytes" read_stats_ok timeout 60 dd if="$MNT/data/obj" bs=1M status=none
check "dd bs=4k: one stream, 1.0x bytes" read_stats_ok timeout 120 dd if="$MNT/data/obj" bs=4k status=none

log "mmap on a read-write mount"
# mmap_result PATH shared|private|shared-rw: the sha256 of the whole mapping,
# or the errno name of the failure, or "signal NAME" when the mapping killed
# the process (a child does the mapping). shared-rw opens O_RDWR|O_CREAT,
# writes 64 KiB and maps that (a write handle).
mmap_result() {
  timeout 60 python3 - "$1" "$2" <<'PY'
import errno, hashlib, mmap, os, signal, sys
path, kind = sys.argv[1], sys.argv[2]
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    os.close(r)
    try:
        if kind == "shared-rw":
            fd = os.open(path, os.O_RDWR | os.O_CREAT)
            os.write(fd, b"w" * 65536)
        else:
            fd = os.open(path, os.O_RDONLY)
        flags = mmap.MAP_PRIVATE if kind == "private" else mmap.MAP_SHARED
        prot = mmap.PROT_READ | (mmap.PROT_WRITE if kind == "shared-rw" else 0)
        m = mmap.mmap(fd, 0, flags=flags, prot=prot)
        out = hashlib.sha256(m).hexdigest()
    except OSError as e:
        out = errno.errorcode.get(e.errno, str(e.errno))
    os.write(w, out.encode())
    os._exit(0)
os.close(w)
out = os.read(r, 200).decode()
_, status = os.waitpid(pid, 0)
print(f"signal {signal.Signals(os.WTERMSIG(status)).name}" if os.WIFSIGNALED(status) else out)
PY
}
# The mount asks for FUSE_DIRECT_IO_ALLOW_MMAP: shared maps of direct I/O
# files work, a read handle's from the object, a write handle's from the
# bytes written so far.
check "MAP_SHARED of a read handle maps the object's bytes" \
  test "$(mmap_result "$MNT/data/obj" shared)" = "$SUM"
check "MAP_PRIVATE reads the object's bytes" test "$(mmap_result "$MNT/data/obj" private)" = "$SUM"
check "a write handle's MAP_SHARED maps the bytes written" \
  test "$(mmap_result "$MNT/data/being-written" shared-rw)" = \
  "$(python3 -c 'import hashlib; print(hashlib.sha256(b"w" * 65536).hexdigest())')"
check "the written file is intact" test "$(timeout 60 cat "$MNT/data/being-written" | wc -c)" = 65536
check "unmount (read-write)" unmount "$MNT"

log "mmap on a read-only mount (FUSE_DIRECT_IO_ALLOW_MMAP when the kernel offers it)"
# The loaders' files: an .npy (np.load mmap_mode="r", np.memmap) and a
# safetensors file (the safetensors package maps it MAP_SHARED read-only;
# it is not packaged for Debian, so its mapping is done here the same way).
timeout 60 python3 - "$TMP" <<'PY'
import json, struct, sys
import numpy as np
tmp = sys.argv[1]
rng = np.random.default_rng(5)
np.save(f"{tmp}/w.npy", rng.standard_normal((1000, 1037), dtype=np.float32))
tensors = {"a": rng.standard_normal((517, 300), dtype=np.float32),
           "b": rng.integers(0, 1 << 30, (4099,), dtype=np.int64)}
header, data, off = {}, b"", 0
for name, t in tensors.items():
    raw = t.tobytes()
    header[name] = {"dtype": {"float32": "F32", "int64": "I64"}[str(t.dtype)],
                    "shape": list(t.shape), "data_offsets": [off, off + len(raw)]}
    data += raw
    off += len(raw)
h = json.dumps(header).encode()
h += b" " * (-len(h) % 8)
with open(f"{tmp}/m.safetensors", "wb") as f:
    f.write(struct.pack("<Q", len(h)) + h + data)
for name, t in tensors.items():
    np.save(f"{tmp}/m-{name}.npy", t)
PY
s3 put "$BUCKET" data/w.npy <"$TMP/w.npy"
s3 put "$BUCKET" data/m.safetensors <"$TMP/m.safetensors"
LOG_START=$(wc -l <"$LOG")
since_mount() { tail -n "+$((LOG_START + 1))" "$LOG"; }
check "mount with --direct-io --read-only" \
  mount_bucket "$MNT" "s3://$BUCKET" --direct-io --read-only
check "the daemon logged the shared-mmap case" \
  wait_for 10 bash -c "tail -n +$((LOG_START + 1)) '$LOG' | grep -q 'shared mmap of direct-I/O files'"
since_mount | grep "shared mmap of direct-I/O files" | tail -1
if since_mount | grep -q "shared mmap of direct-I/O files allowed"; then
  check "MAP_SHARED reads the object's bytes" \
    test "$(mmap_result "$MNT/data/obj" shared)" = "$SUM"
  check "np.load(mmap_mode='r') and np.memmap read the array" timeout 60 python3 - "$MNT" "$TMP" <<'PY'
import mmap, sys
import numpy as np
mnt, tmp = sys.argv[1], sys.argv[2]
want = np.load(f"{tmp}/w.npy")
got = np.load(f"{mnt}/data/w.npy", mmap_mode="r")
assert isinstance(got, np.memmap) and got._mmap is not None
assert np.array_equal(got, want)
raw = np.memmap(f"{mnt}/data/obj", dtype=np.uint8, mode="r")
assert raw.size == int(open(f"{tmp}/obj", "rb").seek(0, 2))
assert bytes(raw[-4097:]) == open(f"{tmp}/obj", "rb").read()[-4097:]
PY
  check "a safetensors file mapped MAP_SHARED read-only gives its tensors" \
    timeout 60 python3 - "$MNT" "$TMP" <<'PY'
import json, mmap, os, struct, sys
import numpy as np
mnt, tmp = sys.argv[1], sys.argv[2]
fd = os.open(f"{mnt}/data/m.safetensors", os.O_RDONLY)
m = mmap.mmap(fd, 0, flags=mmap.MAP_SHARED, prot=mmap.PROT_READ)
n = struct.unpack("<Q", m[:8])[0]
header = json.loads(m[8:8 + n])
dtypes = {"F32": np.float32, "I64": np.int64}
for name, meta in header.items():
    a, b = meta["data_offsets"]
    t = np.frombuffer(m, dtype=dtypes[meta["dtype"]], count=(b - a) // np.dtype(dtypes[meta["dtype"]]).itemsize,
                      offset=8 + n + a).reshape(meta["shape"])
    assert np.array_equal(t, np.load(f"{tmp}/m-{name}.npy")), name
    del t
PY
else
  check "MAP_SHARED fails with ENODEV (the kernel does not offer the flag)" \
    test "$(mmap_result "$MNT/data/obj" shared)" = ENODEV
fi
check "MAP_PRIVATE reads the object's bytes (read-only)" \
  test "$(mmap_result "$MNT/data/obj" private)" = "$SUM"
check "no write handle on a read-only mount" \
  test "$(mmap_result "$MNT/data/new" shared-rw)" = EROFS
check "unmount (read-only)" unmount "$MNT"

check "mount again (read-write)" \
  mount_bucket "$MNT" "s3://$BUCKET" --direct-io --max-memory 64M

log "writes through a direct-I/O mount"
check "cp a file in" cp "$TMP/obj" "$MNT/data/copy"
check "the object in the bucket matches" test "$(s3 sha256 "$BUCKET" data/copy)" = "$SUM"
check "and reads back through the mount" \
  test "$(timeout 60 sha256sum <"$MNT/data/copy" | cut -d' ' -f1)" = "$SUM"

check "unmount" unmount "$MNT"
finish
