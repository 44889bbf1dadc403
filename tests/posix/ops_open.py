"""Conformance operations on files that more than one descriptor holds, or
that change while open: a second open of a file being written, fsync that
keeps writing, a shell's duplicated descriptor, unlink and rename of open
files. Each runs in a fresh directory d (see oplib.py)."""
import os

from oplib import dup_fd, op, open_fd, pattern, pwrite_all, read_at, read_file
from ops_data import existing


@op("second_open_read_while_writing")
def _(r, d):
    p = os.path.join(d, "f")
    fd = r.do("create", open_fd, p, os.O_WRONLY | os.O_CREAT, 0o644)
    r.do("write", os.write, fd, b"so far")
    fd2 = r.do("open O_RDONLY", open_fd, p, os.O_RDONLY)
    r.do("read second fd", os.read, fd2, 100)
    r.do("write more", os.write, fd, b" and more")
    r.do("pread second fd", read_at, fd2, 100, 0)
    r.do("close second", os.close, fd2)
    r.do("close", os.close, fd)
    r.do("read after close", read_file, p)


@op("second_open_write_while_writing")
def _(r, d):
    p = os.path.join(d, "f")
    fd = r.do("create", open_fd, p, os.O_WRONLY | os.O_CREAT, 0o644)
    r.do("write", os.write, fd, b"first writer")
    fd2 = r.do("open O_WRONLY", open_fd, p, os.O_WRONLY)
    r.do("pwrite second fd", pwrite_all, fd2, b"SECOND", 0)
    r.do("close second", os.close, fd2)
    r.do("close", os.close, fd)
    r.do("read after close", read_file, p)


@op("fsync_then_keep_writing")
def _(r, d):
    p = os.path.join(d, "f")
    fd = r.do("create", open_fd, p, os.O_WRONLY | os.O_CREAT, 0o644)
    r.do("write", os.write, fd, b"checkpoint 1;")
    r.do("fsync", os.fsync, fd)
    r.do("write after fsync", os.write, fd, b"checkpoint 2;")
    r.do("fsync again", os.fsync, fd)
    r.do("close", os.close, fd)
    r.do("read after close", read_file, p)


@op("fsync_then_read_by_name")
def _(r, d):
    p = os.path.join(d, "f")
    fd = r.do("create", open_fd, p, os.O_WRONLY | os.O_CREAT, 0o644)
    r.do("write", os.write, fd, b"durable")
    r.do("fsync", os.fsync, fd)
    r.do("read by name", read_file, p)
    r.do("close", os.close, fd)


@op("dup_close_then_write")
def _(r, d):
    # A shell's `cmd > f` duplicates the descriptor and closes one copy first.
    p = os.path.join(d, "f")
    fd = r.do("create", open_fd, p, os.O_WRONLY | os.O_CREAT, 0o644)
    fd2 = r.do("dup", dup_fd, fd)
    r.do("close original", os.close, fd)
    r.do("write on dup", os.write, fd2, b"via dup")
    r.do("close dup", os.close, fd2)
    r.do("read after close", read_file, p)


@op("unlink_open_for_reading")
def _(r, d):
    p = existing(r, d, data=pattern(50000))
    fd = r.do("open", open_fd, p, os.O_RDONLY)
    r.do("read head", os.read, fd, 100)
    r.do("unlink", os.unlink, p)
    r.do("name gone", os.path.exists, p)
    r.do("read the rest", os.read, fd, 100000)
    r.do("close", os.close, fd)


@op("unlink_open_for_writing")
def _(r, d):
    p = os.path.join(d, "f")
    fd = r.do("create", open_fd, p, os.O_RDWR | os.O_CREAT, 0o644)
    r.do("write", os.write, fd, b"scratch")
    r.do("unlink", os.unlink, p)
    r.do("write after unlink", os.write, fd, b" more")
    r.do("pread after unlink", read_at, fd, 100, 0)
    r.do("close", os.close, fd)
    r.do("name gone", os.path.exists, p)


@op("rename_open_for_writing")
def _(r, d):
    p, q = os.path.join(d, "f"), os.path.join(d, "g")
    fd = r.do("create", open_fd, p, os.O_WRONLY | os.O_CREAT, 0o644)
    r.do("write", os.write, fd, b"before")
    r.do("rename", os.rename, p, q)
    r.do("write after rename", os.write, fd, b" after")
    r.do("close", os.close, fd)
    r.do("read new name", read_file, q)
    r.do("old name gone", os.path.exists, p)


@op("rename_open_for_reading")
def _(r, d):
    p, q = existing(r, d), os.path.join(d, "g")
    fd = r.do("open", open_fd, p, os.O_RDONLY)
    r.do("rename", os.rename, p, q)
    r.do("read after rename", os.read, fd, 100)
    r.do("close", os.close, fd)
    r.do("read new name", read_file, q)


@op("read_back_while_writing_two_files")
def _(r, d):
    # Two files written at once must not mix.
    p, q = os.path.join(d, "a"), os.path.join(d, "b")
    fa = r.do("create a", open_fd, p, os.O_WRONLY | os.O_CREAT, 0o644)
    fb = r.do("create b", open_fd, q, os.O_WRONLY | os.O_CREAT, 0o644)
    r.do("write a", os.write, fa, pattern(20000, 1))
    r.do("write b", os.write, fb, pattern(30000, 2))
    r.do("close a", os.close, fa)
    r.do("close b", os.close, fb)
    r.do("read a", read_file, p)
    r.do("read b", read_file, q)
