"""The vocabulary of the POSIX conformance operations (ops_data.py,
ops_names.py): a registry of named operations and a Recorder that turns each
step's outcome (a value or an errno name) into text two file systems can be
compared on.

An operation is a function op(r, d): d is a fresh, empty directory of its
own, and every step goes through r so that its outcome is recorded under a
label. Only what POSIX defines goes into the record (values, errno names,
bytes, sizes, file types), never inode numbers or times that differ between
any two file systems."""
import errno
import functools
import hashlib
import os
import stat

OPS = {}  # name -> function, in definition order


def op(name):
    """Registers the decorated function as operation `name`."""
    def register(fn):
        if name in OPS:
            raise ValueError(f"operation {name} is defined twice")
        OPS[name] = fn
        return fn
    return register


class Failed:
    """The outcome of a step that failed: later steps given it are skipped."""

    def __repr__(self):
        return "<failed>"


FAILED = Failed()


class Fd(int):
    """A descriptor: recorded as "fd", since its number says nothing about the file system."""


def open_fd(path, flags, mode=0o644):
    return Fd(os.open(path, flags, mode))


def dup_fd(fd):
    return Fd(os.dup(fd))


def show(value):
    """Text for a step's value: bytes as text or a digest, ints as decimal."""
    if value is None:
        return "ok"
    if isinstance(value, Fd):
        return "fd"
    if isinstance(value, (bytes, bytearray)):
        value = bytes(value)
        if len(value) <= 48:
            return "b" + repr(value)[1:]
        return f"{len(value)} bytes sha256:{hashlib.sha256(value).hexdigest()[:16]}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(show(v) for v in value) + "]"
    return str(value)


class Recorder:
    """The steps of one operation, each "label: outcome"."""

    def __init__(self, sink=None):
        """sink(line), if given, hears each step as it is recorded (so a
        process killed in the middle of an operation leaves its steps so far)."""
        self.steps = []
        self.sink = sink

    def add(self, line):
        self.steps.append(line)
        if self.sink:
            self.sink(line)

    def do(self, label, fn, *args):
        """Runs fn(*args) and records its value or errno; returns the value or FAILED."""
        if any(a is FAILED for a in args):
            self.add(f"{label}: skipped")
            return FAILED
        try:
            value = fn(*args)
        except OSError as e:
            self.add(f"{label}: {errno.errorcode.get(e.errno, e.errno)}")
            return FAILED
        except (ValueError, BufferError) as e:  # mmap's on an empty file: still an outcome
            self.add(f"{label}: {type(e).__name__}: {e}")
            return FAILED
        self.add(f"{label}: {show(value)}")
        return value


@functools.lru_cache(maxsize=8)
def pattern_block(seed):
    return bytes((i * 7 + 3 + seed) % 251 for i in range(65536))


def pattern(size, seed=0):
    """size bytes of a pattern that differs at every offset within 251 bytes."""
    block = pattern_block(seed)
    return (block * (size // len(block) + 1))[:size]


def kind(st):
    """A stat result as "type size" (no size for directories)."""
    m = st.st_mode
    if stat.S_ISREG(m):
        return f"file {st.st_size}"
    if stat.S_ISDIR(m):
        return "dir"
    if stat.S_ISLNK(m):
        return f"link {st.st_size}"
    if stat.S_ISFIFO(m):
        return "fifo"
    if stat.S_ISCHR(m):
        return "chardev"
    return f"mode {m:o}"


def stat_of(path):
    return kind(os.stat(path))


def lstat_of(path):
    return kind(os.lstat(path))


def fstat_of(fd):
    return kind(os.fstat(fd))


def write_file(path, data):
    """Creates (or replaces) path with data and closes it; returns len(data)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        n = os.write(fd, data)
    finally:
        os.close(fd)
    return n


def read_file(path):
    with open(path, "rb") as f:
        return f.read()


def pwrite_all(fd, data, offset):
    return os.pwrite(fd, data, offset)


def read_at(fd, size, offset):
    return os.pread(fd, size, offset)


def listing(path):
    """The directory's names, sorted, each with its type as readdir gives it."""
    out = []
    with os.scandir(path) as it:
        for e in it:
            t = "link" if e.is_symlink() else "dir" if e.is_dir(follow_symlinks=False) else "file"
            out.append(f"{e.name}:{t}")
    return " ".join(sorted(out))
