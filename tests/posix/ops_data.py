"""Conformance operations on file data: writes at offsets, reads through
descriptors open for writing, second opens, truncate, shared maps, fsync
that keeps writing. Each runs in a fresh directory d (see oplib.py)."""
import mmap
import os

from oplib import (fstat_of, op, open_fd, pattern, pwrite_all, read_at, read_file, stat_of,
                   write_file)

RW_NEW = os.O_RDWR | os.O_CREAT | os.O_EXCL


def existing(r, d, name="f", data=b"0123456789"):
    """A closed file holding data (an object in S3 on a mount); its path."""
    path = os.path.join(d, name)
    r.do("create existing", write_file, path, data)
    return path


@op("write_read_back")
def _(r, d):
    p = os.path.join(d, "f")
    r.do("write", write_file, p, b"hello\n")
    r.do("stat", stat_of, p)
    r.do("read", read_file, p)


@op("zero_byte_file")
def _(r, d):
    p = os.path.join(d, "empty")
    fd = r.do("create", open_fd, p, os.O_WRONLY | os.O_CREAT, 0o644)
    r.do("close", os.close, fd)
    r.do("stat", stat_of, p)
    r.do("read", read_file, p)


@op("write_at_offsets")
def _(r, d):
    p = os.path.join(d, "f")
    fd = r.do("create", open_fd, p, os.O_WRONLY | os.O_CREAT, 0o644)
    r.do("pwrite at 70000", pwrite_all, fd, b"tail", 70000)
    r.do("pwrite at 0", pwrite_all, fd, b"head", 0)
    r.do("pwrite at 30000", pwrite_all, fd, pattern(5000), 30000)
    r.do("close", os.close, fd)
    r.do("stat", stat_of, p)
    r.do("read", read_file, p)


@op("seek_back_patch_header")
def _(r, d):
    p = os.path.join(d, "f")
    fd = r.do("create", open_fd, p, os.O_WRONLY | os.O_CREAT, 0o644)
    r.do("write 64 KiB", os.write, fd, pattern(65536))
    r.do("lseek 0", os.lseek, fd, 0, os.SEEK_SET)
    r.do("write header", os.write, fd, b"HEADER")
    r.do("lseek end", os.lseek, fd, 0, os.SEEK_END)
    r.do("close", os.close, fd)
    r.do("read", read_file, p)


@op("write_past_end_leaves_hole")
def _(r, d):
    p = os.path.join(d, "f")
    fd = r.do("create", open_fd, p, os.O_WRONLY | os.O_CREAT, 0o644)
    r.do("lseek 1 MiB", os.lseek, fd, 1 << 20, os.SEEK_SET)
    r.do("write", os.write, fd, b"x")
    r.do("close", os.close, fd)
    r.do("stat", stat_of, p)
    r.do("read", read_file, p)


@op("ftruncate_while_writing")
def _(r, d):
    p = os.path.join(d, "f")
    fd = r.do("create", open_fd, p, os.O_WRONLY | os.O_CREAT, 0o644)
    r.do("write", os.write, fd, pattern(1000))
    r.do("ftruncate up", os.ftruncate, fd, 5000)
    r.do("fstat", fstat_of, fd)
    r.do("ftruncate down", os.ftruncate, fd, 300)
    r.do("write at offset 300", os.write, fd, b"end")
    r.do("close", os.close, fd)
    r.do("read", read_file, p)


@op("o_trunc_replaces_existing")
def _(r, d):
    p = existing(r, d)
    fd = r.do("open O_TRUNC", open_fd, p, os.O_WRONLY | os.O_TRUNC)
    r.do("write", os.write, fd, b"new")
    r.do("close", os.close, fd)
    r.do("read", read_file, p)


@op("append_to_existing")
def _(r, d):
    p = existing(r, d)
    fd = r.do("open O_APPEND", open_fd, p, os.O_WRONLY | os.O_APPEND)
    r.do("write", os.write, fd, b"+more")
    r.do("close", os.close, fd)
    r.do("read", read_file, p)


@op("overwrite_in_place")
def _(r, d):
    p = existing(r, d)
    fd = r.do("open O_WRONLY", open_fd, p, os.O_WRONLY)
    r.do("pwrite at 4", pwrite_all, fd, b"ab", 4)
    r.do("close", os.close, fd)
    r.do("read", read_file, p)


@op("read_past_end_and_lseek_end")
def _(r, d):
    p = existing(r, d)
    fd = r.do("open", open_fd, p, os.O_RDONLY)
    r.do("pread past end", read_at, fd, 10, 100)
    r.do("lseek end", os.lseek, fd, 0, os.SEEK_END)
    r.do("read at end", os.read, fd, 10)
    r.do("close", os.close, fd)


@op("wrong_direction_descriptors")
def _(r, d):
    p = existing(r, d)
    fd = r.do("open O_RDONLY", open_fd, p, os.O_RDONLY)
    r.do("write on O_RDONLY", os.write, fd, b"x")
    r.do("close", os.close, fd)
    fd = r.do("open O_WRONLY", open_fd, os.path.join(d, "g"), os.O_WRONLY | os.O_CREAT, 0o644)
    r.do("read on O_WRONLY", os.read, fd, 10)
    r.do("close", os.close, fd)


@op("size_while_writing")
def _(r, d):
    p = os.path.join(d, "f")
    fd = r.do("create", open_fd, p, os.O_WRONLY | os.O_CREAT, 0o644)
    r.do("write", os.write, fd, pattern(12345))
    r.do("fstat", fstat_of, fd)
    r.do("stat by name", stat_of, p)
    r.do("listed", os.listdir, d)
    r.do("close", os.close, fd)


@op("rdwr_new_write_seek_read")
def _(r, d):
    p = os.path.join(d, "f")
    fd = r.do("open O_RDWR|O_CREAT", open_fd, p, RW_NEW, 0o644)
    r.do("write", os.write, fd, b"written then read")
    r.do("lseek 0", os.lseek, fd, 0, os.SEEK_SET)
    r.do("read", os.read, fd, 100)
    r.do("close", os.close, fd)
    r.do("read after close", read_file, p)


@op("rdwr_existing_read_first")
def _(r, d):
    p = existing(r, d)
    fd = r.do("open O_RDWR", open_fd, p, os.O_RDWR)
    r.do("read", os.read, fd, 4)
    r.do("write at position 4", os.write, fd, b"XY")
    r.do("read on", os.read, fd, 100)
    r.do("close", os.close, fd)
    r.do("read after close", read_file, p)


@op("rdwr_existing_pwrite_pread")
def _(r, d):
    p = existing(r, d, data=pattern(100000))
    fd = r.do("open O_RDWR", open_fd, p, os.O_RDWR)
    r.do("pwrite at 50000", pwrite_all, fd, b"patched", 50000)
    r.do("pread across the patch", read_at, fd, 20, 49995)
    r.do("pwrite past end", pwrite_all, fd, b"grown", 100010)
    r.do("pread the hole", read_at, fd, 20, 99995)
    r.do("fstat", fstat_of, fd)
    r.do("close", os.close, fd)
    r.do("read after close", read_file, p)


@op("rdwr_existing_ftruncate")
def _(r, d):
    p = existing(r, d)
    fd = r.do("open O_RDWR", open_fd, p, os.O_RDWR)
    r.do("ftruncate down", os.ftruncate, fd, 4)
    r.do("ftruncate up", os.ftruncate, fd, 8)
    r.do("pread", read_at, fd, 20, 0)
    r.do("close", os.close, fd)
    r.do("read after close", read_file, p)


@op("rdwr_open_close_unchanged")
def _(r, d):
    p = existing(r, d)
    fd = r.do("open O_RDWR", open_fd, p, os.O_RDWR)
    r.do("close", os.close, fd)
    r.do("read after close", read_file, p)


@op("rdwr_large_file_across_parts")
def _(r, d):
    # Past one 16 MiB part, so that a patch and a read span a part boundary.
    size = (17 << 20) + 123
    p = existing(r, d, data=pattern(size))
    fd = r.do("open O_RDWR", open_fd, p, os.O_RDWR)
    r.do("pwrite across 16 MiB", pwrite_all, fd, b"P" * 8192, (16 << 20) - 4096)
    r.do("pread across 16 MiB", read_at, fd, 16384, (16 << 20) - 8192)
    r.do("pread the end", read_at, fd, 200, size - 100)
    r.do("close", os.close, fd)
    r.do("read after close", read_file, p)


@op("truncate_closed_shrink")
def _(r, d):
    p = existing(r, d)
    r.do("truncate to 3", os.truncate, p, 3)
    r.do("stat", stat_of, p)
    r.do("read", read_file, p)


@op("truncate_closed_grow")
def _(r, d):
    p = existing(r, d)
    r.do("truncate to 20", os.truncate, p, 20)
    r.do("stat", stat_of, p)
    r.do("read", read_file, p)


@op("truncate_closed_to_zero")
def _(r, d):
    p = existing(r, d)
    r.do("truncate to 0", os.truncate, p, 0)
    r.do("stat", stat_of, p)
    r.do("read", read_file, p)


@op("truncate_missing")
def _(r, d):
    r.do("truncate", os.truncate, os.path.join(d, "missing"), 0)


def map_read(fd, length, flags):
    with mmap.mmap(fd, length, flags=flags, prot=mmap.PROT_READ) as m:
        return m[:]


def map_write(fd, length, offset, data):
    with mmap.mmap(fd, length, flags=mmap.MAP_SHARED, prot=mmap.PROT_READ | mmap.PROT_WRITE) as m:
        m[offset:offset + len(data)] = data
        m.flush()


@op("mmap_private_read")
def _(r, d):
    p = existing(r, d, data=pattern(10000))
    fd = r.do("open", open_fd, p, os.O_RDONLY)
    r.do("map private, read", map_read, fd, 10000, mmap.MAP_PRIVATE)
    r.do("close", os.close, fd)


@op("mmap_shared_read")
def _(r, d):
    p = existing(r, d, data=pattern(10000))
    fd = r.do("open", open_fd, p, os.O_RDONLY)
    r.do("map shared, read", map_read, fd, 10000, mmap.MAP_SHARED)
    r.do("close", os.close, fd)


@op("mmap_shared_read_rdwr")
def _(r, d):
    p = existing(r, d, data=pattern(10000))
    fd = r.do("open O_RDWR", open_fd, p, os.O_RDWR)
    r.do("map shared, read", map_read, fd, 10000, mmap.MAP_SHARED)
    r.do("close", os.close, fd)


@op("mmap_shared_write_new")
def _(r, d):
    p = os.path.join(d, "f")
    fd = r.do("open O_RDWR|O_CREAT", open_fd, p, RW_NEW, 0o644)
    r.do("ftruncate 8192", os.ftruncate, fd, 8192)
    r.do("map shared, write, msync", map_write, fd, 8192, 4000, b"mapped")
    r.do("close", os.close, fd)
    r.do("read after close", read_file, p)


@op("mmap_shared_write_existing")
def _(r, d):
    p = existing(r, d, data=pattern(10000))
    fd = r.do("open O_RDWR", open_fd, p, os.O_RDWR)
    r.do("map shared, write, msync", map_write, fd, 10000, 9000, b"mapped")
    r.do("pread the mapped bytes", read_at, fd, 10, 8998)
    r.do("close", os.close, fd)
    r.do("read after close", read_file, p)
