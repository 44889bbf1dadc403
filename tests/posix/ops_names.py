"""Conformance operations on names: directories, rename, unlink, long
names, symbolic links, attributes, hard links and special files. Each runs
in a fresh directory d (see oplib.py)."""
import os
import stat

from oplib import listing, lstat_of, op, open_fd, read_file, stat_of, write_file


def mode_bits(path):
    return f"{stat.S_IMODE(os.stat(path).st_mode):o}"


def mtime(path):
    return int(os.stat(path).st_mtime)


@op("mkdir_rmdir")
def _(r, d):
    p = os.path.join(d, "sub")
    r.do("mkdir", os.mkdir, p)
    r.do("stat", stat_of, p)
    r.do("listing", listing, d)
    r.do("rmdir", os.rmdir, p)
    r.do("gone", os.path.exists, p)


@op("mkdir_errors")
def _(r, d):
    p = os.path.join(d, "sub")
    r.do("mkdir", os.mkdir, p)
    r.do("mkdir again", os.mkdir, p)
    r.do("write a file in it", write_file, os.path.join(p, "f"), b"x")
    r.do("rmdir non-empty", os.rmdir, p)
    r.do("rmdir a file", os.rmdir, os.path.join(p, "f"))
    r.do("rmdir missing", os.rmdir, os.path.join(d, "missing"))
    r.do("mkdir under a file", os.mkdir, os.path.join(p, "f", "x"))
    r.do("mkdir under a missing dir", os.mkdir, os.path.join(d, "missing", "x"))


@op("nested_directories")
def _(r, d):
    r.do("makedirs a/b/c", os.makedirs, os.path.join(d, "a", "b", "c"))
    r.do("write a/b/c/f", write_file, os.path.join(d, "a", "b", "c", "f"), b"deep")
    r.do("write a/g", write_file, os.path.join(d, "a", "g"), b"shallow")
    r.do("listing a", listing, os.path.join(d, "a"))
    r.do("listing a/b", listing, os.path.join(d, "a", "b"))
    r.do("read a/b/c/f", read_file, os.path.join(d, "a", "b", "c", "f"))
    r.do("remove a/b/c/f", os.unlink, os.path.join(d, "a", "b", "c", "f"))
    r.do("rmdir a/b/c", os.rmdir, os.path.join(d, "a", "b", "c"))
    r.do("listing a/b after", listing, os.path.join(d, "a", "b"))


@op("open_errors")
def _(r, d):
    f = os.path.join(d, "f")
    r.do("create", write_file, f, b"x")
    r.do("O_EXCL on existing", open_fd, f, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    r.do("open missing", open_fd, os.path.join(d, "missing"), os.O_RDONLY)
    r.do("create in missing dir", open_fd, os.path.join(d, "no", "f"), os.O_WRONLY | os.O_CREAT, 0o644)
    r.do("file used as dir", stat_of, os.path.join(f, "x"))
    r.do("open dir for writing", open_fd, d, os.O_WRONLY)


@op("unlink_file")
def _(r, d):
    f = os.path.join(d, "f")
    r.do("create", write_file, f, b"x")
    r.do("unlink", os.unlink, f)
    r.do("gone", os.path.exists, f)
    r.do("unlink again", os.unlink, f)
    r.do("listing", listing, d)


@op("unlink_directory")
def _(r, d):
    p = os.path.join(d, "sub")
    r.do("mkdir", os.mkdir, p)
    r.do("unlink a directory", os.unlink, p)


@op("rename_file")
def _(r, d):
    a, b = os.path.join(d, "a"), os.path.join(d, "b")
    r.do("create", write_file, a, b"renamed")
    r.do("rename", os.rename, a, b)
    r.do("old gone", os.path.exists, a)
    r.do("read new", read_file, b)
    r.do("listing", listing, d)


@op("rename_onto_existing_file")
def _(r, d):
    a, b = os.path.join(d, "a"), os.path.join(d, "b")
    r.do("create a", write_file, a, b"from a")
    r.do("create b", write_file, b, b"old b")
    r.do("rename a onto b", os.rename, a, b)
    r.do("read b", read_file, b)
    r.do("listing", listing, d)


@op("rename_errors")
def _(r, d):
    a, sub = os.path.join(d, "a"), os.path.join(d, "sub")
    r.do("create", write_file, a, b"x")
    r.do("mkdir", os.mkdir, sub)
    r.do("write in sub", write_file, os.path.join(sub, "f"), b"y")
    r.do("rename missing", os.rename, os.path.join(d, "missing"), os.path.join(d, "z"))
    r.do("rename file onto dir", os.rename, a, sub)
    r.do("rename into missing dir", os.rename, a, os.path.join(d, "no", "a"))
    r.do("rename file onto itself", os.rename, a, a)
    r.do("listing", listing, d)


@op("rename_directory")
def _(r, d):
    src, dst = os.path.join(d, "src"), os.path.join(d, "dst")
    r.do("mkdir", os.makedirs, os.path.join(src, "inner"))
    r.do("write src/f", write_file, os.path.join(src, "f"), b"one")
    r.do("write src/inner/g", write_file, os.path.join(src, "inner", "g"), b"two")
    r.do("rename", os.rename, src, dst)
    r.do("old gone", os.path.exists, src)
    r.do("listing dst", listing, dst)
    r.do("read dst/inner/g", read_file, os.path.join(dst, "inner", "g"))


@op("rename_directory_onto_non_empty")
def _(r, d):
    a, b = os.path.join(d, "a"), os.path.join(d, "b")
    r.do("mkdir a", os.mkdir, a)
    r.do("write a/f", write_file, os.path.join(a, "f"), b"x")
    r.do("mkdir b", os.mkdir, b)
    r.do("write b/g", write_file, os.path.join(b, "g"), b"y")
    r.do("rename a onto b", os.rename, a, b)
    r.do("rename a into itself", os.rename, a, os.path.join(a, "inside"))


@op("long_names")
def _(r, d):
    ok, too_long = os.path.join(d, "n" * 255), os.path.join(d, "n" * 256)
    r.do("create 255 bytes", write_file, ok, b"long")
    r.do("read 255 bytes", read_file, ok)
    r.do("listing", listing, d)
    r.do("create 256 bytes", write_file, too_long, b"x")
    r.do("stat 256 bytes", stat_of, too_long)
    r.do("mkdir 256 bytes", os.mkdir, too_long)


@op("long_path")
def _(r, d):
    # 8 levels of 100-byte names: an 800-byte path, within S3's 1024-byte keys.
    p = d
    for i in range(8):
        p = os.path.join(p, f"{i:02d}" + "p" * 98)
    r.do("makedirs", os.makedirs, p)
    r.do("write", write_file, os.path.join(p, "f"), b"deep")
    r.do("read", read_file, os.path.join(p, "f"))


@op("path_over_1024_bytes")
def _(r, d):
    p = d
    for i in range(11):
        p = os.path.join(p, f"{i:02d}" + "q" * 98)
    r.do("makedirs", os.makedirs, p)
    fd = r.do("create", open_fd, os.path.join(p, "f"), os.O_WRONLY | os.O_CREAT, 0o644)
    r.do("write", os.write, fd, b"deep")
    r.do("close", os.close, fd)
    r.do("read", read_file, os.path.join(p, "f"))


@op("names_with_odd_bytes")
def _(r, d):
    names = ["with space", "ünïcödé", "semi;colon", "new\nline", "-dash", "x" * 10 + ".tar.gz"]
    for n in names:
        r.do(f"create {n!r}", write_file, os.path.join(d, n), n.encode())
    r.do("listing", listing, d)
    for n in names:
        r.do(f"read {n!r}", read_file, os.path.join(d, n))


@op("symlink_readlink_lstat")
def _(r, d):
    t, link = os.path.join(d, "target"), os.path.join(d, "link")
    r.do("create target", write_file, t, b"through the link")
    r.do("symlink", os.symlink, "target", link)
    r.do("readlink", os.readlink, link)
    r.do("lstat", lstat_of, link)
    r.do("stat follows", stat_of, link)
    r.do("read through", read_file, link)
    r.do("listing", listing, d)


@op("symlink_to_directory")
def _(r, d):
    sub = os.path.join(d, "sub")
    r.do("mkdir", os.mkdir, sub)
    r.do("write sub/f", write_file, os.path.join(sub, "f"), b"inner")
    r.do("symlink", os.symlink, "sub", os.path.join(d, "dl"))
    r.do("listing through", listing, os.path.join(d, "dl"))
    r.do("read through", read_file, os.path.join(d, "dl", "f"))
    r.do("listing", listing, d)


@op("symlink_dangling_and_errors")
def _(r, d):
    link = os.path.join(d, "dangling")
    r.do("symlink to missing", os.symlink, "/nonexistent/x", link)
    r.do("readlink", os.readlink, link)
    r.do("lstat", lstat_of, link)
    r.do("open through", open_fd, link, os.O_RDONLY)
    r.do("create f", write_file, os.path.join(d, "f"), b"x")
    r.do("symlink onto existing", os.symlink, "x", os.path.join(d, "f"))
    r.do("readlink of a file", os.readlink, os.path.join(d, "f"))
    r.do("unlink the link", os.unlink, link)
    r.do("listing", listing, d)


@op("chmod_file")
def _(r, d):
    f = os.path.join(d, "f")
    r.do("create", write_file, f, b"x")
    r.do("mode", mode_bits, f)
    r.do("chmod 600", os.chmod, f, 0o600)
    r.do("mode after", mode_bits, f)


@op("utime_file")
def _(r, d):
    f = os.path.join(d, "f")
    r.do("create", write_file, f, b"x")
    r.do("utime 2001-02-03", os.utime, f, (981173106, 981173106))
    r.do("mtime after", mtime, f)


@op("hard_link")
def _(r, d):
    a, b = os.path.join(d, "a"), os.path.join(d, "b")
    r.do("create", write_file, a, b"linked")
    r.do("link", os.link, a, b)
    r.do("read the link", read_file, b)


@op("mkfifo")
def _(r, d):
    p = os.path.join(d, "fifo")
    r.do("mkfifo", os.mkfifo, p)
    r.do("lstat", lstat_of, p)


@op("mknod_char_device")
def _(r, d):
    p = os.path.join(d, "null")
    r.do("mknod c 1 3", os.mknod, p, 0o644 | stat.S_IFCHR, os.makedev(1, 3))
    r.do("lstat", lstat_of, p)


@op("fsync_directory")
def _(r, d):
    r.do("create", write_file, os.path.join(d, "f"), b"x")
    fd = r.do("open the directory", open_fd, d, os.O_RDONLY | os.O_DIRECTORY)
    r.do("fsync", os.fsync, fd)
    r.do("close", os.close, fd)
