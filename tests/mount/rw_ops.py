#!/usr/bin/env python3
"""Operations on files open for writing, run by e2e_rw.sh on a mount.

Usage: rw_ops.py CHECK PATH [ARGS...]. Each check does one everyday file
operation and compares what the file reads with what was written; it exits 0
on agreement, 1 (with the difference on stderr) otherwise. Writes leave the
file's expected contents in PATH.expected (local, outside the mount) when
EXPECTED is given, for the script to compare with the bucket after close.
"""
import mmap
import os
import sys


def fail(what, got, want):
    print(f"{what}: got {got[:64]!r}... ({len(got)} bytes), want {want[:64]!r}... ({len(want)} bytes)",
          file=sys.stderr)
    return 1


def rdwr_read_back(path):
    """open(O_RDWR), write, lseek(0), read on the same descriptor."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
    data = os.urandom(300_000)
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    got = b""
    while chunk := os.read(fd, 65536):
        got += chunk
    os.close(fd)
    return 0 if got == data else fail("read back", got, data)


def pwrite_pread(path, expected):
    """pwrite/pread on an existing file opened O_RDWR: unchanged ranges from
    the object, changed ones from the writer."""
    with open(path, "rb") as f:
        want = bytearray(f.read())
    fd = os.open(path, os.O_RDWR)
    for off, n in ((10, 5), (len(want) // 2, 4096), (len(want) + 100, 7)):
        data = os.urandom(n)
        os.pwrite(fd, data, off)
        if off > len(want):
            want += bytes(off - len(want))
        want[off:off + n] = data
        if os.pread(fd, n, off) != data:
            return fail(f"pread at {off}", os.pread(fd, n, off), data)
    got = os.pread(fd, len(want) + 10, 0)
    os.close(fd)
    open(expected, "wb").write(want)
    return 0 if got == bytes(want) else fail("whole file", got, bytes(want))


def second_open(path):
    """A second open (read-only, then for writing) sees the bytes so far."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.write(fd, b"first part,")
    with open(path, "rb") as reader:
        got = reader.read()
    if got != b"first part,":
        return fail("second reader", got, b"first part,")
    fd2 = os.open(path, os.O_RDWR)
    os.pwrite(fd2, b"second", 11)
    if os.pread(fd2, 100, 0) != b"first part,second":
        return fail("second writer", os.pread(fd2, 100, 0), b"first part,second")
    os.close(fd2)
    os.pwrite(fd, b"!", 17)
    os.close(fd)
    with open(path, "rb") as f:
        got = f.read()
    return 0 if got == b"first part,second!" else fail("after both closed", got, b"first part,second!")


def fsync_keep_writing(path, stage):
    """Writes, fsyncs and keeps writing; the script checks the bucket between."""
    if stage == "start":
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.write(fd, b"checkpoint 1\n")
        os.fsync(fd)
        # Keep the descriptor: the script looks at the bucket, then signals.
        print("synced", flush=True)
        sys.stdin.readline()
        os.write(fd, b"checkpoint 2\n")
        os.fsync(fd)
        os.write(fd, b"end\n")
        os.close(fd)
    return 0


def mmap_then_pwrite(path):
    """A shared map of an O_RDWR descriptor, then pwrite on the descriptor
    (Python's mmap holds a dup of it, which munmap closes)."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
    os.write(fd, b"a" * 8192)
    m = mmap.mmap(fd, 8192, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
    m[0:4] = b"MMAP"
    m.flush()
    m.close()
    os.pwrite(fd, b"after", 100)
    os.close(fd)
    want = b"MMAP" + b"a" * 96 + b"after" + b"a" * (8192 - 105)
    with open(path, "rb") as f:
        got = f.read()
    return 0 if got == want else fail("map then pwrite", got, want)


def memmap(path, mode, expected):
    """np.memmap w+ (new file) or r+ (existing): writes through a shared map."""
    import numpy as np
    if mode == "w+":
        a = np.memmap(path, dtype=np.uint8, mode="w+", shape=(3 * 1024 * 1024,))
        a[:] = np.arange(a.size, dtype=np.uint64).astype(np.uint8)
    else:
        a = np.memmap(path, dtype=np.uint8, mode="r+")
        a[1000:2000] = 7
        a[-10:] = 9
    a.flush()
    want = bytes(a)
    del a
    open(expected, "wb").write(want)
    with open(path, "rb") as f:
        got = f.read()
    return 0 if got == want else fail(f"memmap {mode}", got, want)


if __name__ == "__main__":
    check, args = sys.argv[1], sys.argv[2:]
    sys.exit({"rdwr-read-back": rdwr_read_back, "pwrite-pread": pwrite_pread,
              "second-open": second_open, "fsync-keep-writing": fsync_keep_writing,
              "mmap-then-pwrite": mmap_then_pwrite, "memmap": memmap}[check](*args))
