"""The operations of the fsx-style checker (fsx.py): how each is drawn from
a seeded generator, written to and parsed from the op log, and applied to
the file and to the in-memory model. One op is one log line,
"INDEX NAME OFFSET LENGTH"; the bytes a write carries are derived from the
seed and INDEX, so a log and its seed replay exactly."""
import mmap
import os
import random
import time

PAGE = mmap.PAGESIZE
# name -> weight in the random mix; every class can be turned off (fsx.py --no-NAME).
CLASSES = {"write": 15, "pwrite": 20, "read": 15, "truncate": 8, "mapread": 8,
           "mapwrite": 8, "reopen": 6, "fsync": 4}


class Mismatch(Exception):
    """The file, or the object in the bucket, differs from the model."""


class Op:
    def __init__(self, index, name, offset=0, length=0):
        self.index, self.name, self.offset, self.length = index, name, offset, length

    def __str__(self):
        return f"{self.index} {self.name} {self.offset} {self.length}"

    @staticmethod
    def parse(line):
        index, name, offset, length = line.split()
        if name not in CLASSES:
            raise ValueError(f"unknown op in log: {line.strip()}")
        return Op(int(index), name, int(offset), int(length))

    def data(self, seed):
        return random.Random(seed * 1_000_003 + self.index).randbytes(self.length)


def draw(rng, index, classes, size, max_len, max_op):
    """The next op for a file of `size` bytes (lengths bounded by max_op, the file by max_len)."""
    names = [n for n in classes if CLASSES[n] > 0]
    if size == 0:  # nothing to read or map yet
        names = [n for n in names if n not in ("read", "mapread", "mapwrite")] or names
    name = rng.choices(names, weights=[CLASSES[n] for n in names])[0]
    if name in ("write", "pwrite"):
        length = rng.randint(1, max_op)
        # write: at the end (appending, streaming) half the time; both bounded by max_len.
        offset = size if name == "write" and rng.random() < 0.5 else rng.randint(0, max_len - 1)
        offset = min(offset, max_len - length)
        return Op(index, name, max(offset, 0), length)
    if name == "truncate":
        return Op(index, name, rng.randint(0, max_len), 0)
    if name in ("read", "mapread", "mapwrite"):
        if size == 0:
            return Op(index, "reopen")
        offset = rng.randint(0, size - 1)
        return Op(index, name, offset, rng.randint(1, min(max_op, size - offset)))
    return Op(index, name)


def mapped(fd, offset, length, write):
    """A shared map covering [offset, offset+length), page-aligned, and the offset within it."""
    start = offset - offset % PAGE
    prot = mmap.PROT_READ | (mmap.PROT_WRITE if write else 0)
    return mmap.mmap(fd, offset + length - start, flags=mmap.MAP_SHARED, prot=prot,
                     offset=start), offset - start


def first_difference(got, want):
    """Text locating the first differing byte of two byte strings."""
    n = min(len(got), len(want))
    i = next((k for k in range(n) if got[k] != want[k]), n)
    if i == n and len(got) == len(want):
        return "identical"
    return (f"first difference at offset {i} (got {len(got)} bytes, want {len(want)}): "
            f"got {got[i:i + 16].hex()} want {want[i:i + 16].hex()}")


class Target:
    """The file under test through the mount, the model of its bytes, and
    check(), which compares the bucket's object with the model.

    A descriptor that wrote no byte (it only truncated, or did nothing) is
    completed by the kernel's release after close() returns (docs/SEMANTICS.md,
    "Durability"): for those closes the object may take up to `settle`
    seconds to match, and each such close is counted in `late`; 0 is strict."""

    def __init__(self, path, seed, check, settle=0.0):
        self.path, self.seed, self.check, self.settle = path, seed, check, settle
        self.model = bytearray()
        self.late = 0
        self.fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
        self.wrote = False

    def apply(self, op):
        """Runs op on the file and the model; raises Mismatch or OSError."""
        getattr(self, "do_" + op.name)(op)

    def put(self, offset, data):
        if offset > len(self.model):
            self.model.extend(bytes(offset - len(self.model)))
        self.model[offset:offset + len(data)] = data
        self.wrote = True

    def do_write(self, op):
        os.lseek(self.fd, op.offset, os.SEEK_SET)
        data = op.data(self.seed)
        self.expect_count(os.write(self.fd, data), len(data), op)
        self.put(op.offset, data)

    def do_pwrite(self, op):
        data = op.data(self.seed)
        self.expect_count(os.pwrite(self.fd, data, op.offset), len(data), op)
        self.put(op.offset, data)

    def do_read(self, op):
        got = os.pread(self.fd, op.length, op.offset)
        self.expect_bytes(got, self.model[op.offset:op.offset + op.length], f"pread ({op})")

    def do_truncate(self, op):
        os.ftruncate(self.fd, op.offset)
        del self.model[op.offset:]
        self.model.extend(bytes(op.offset - len(self.model)))
        self.expect_size(os.fstat(self.fd).st_size, "fstat after ftruncate")

    def do_mapread(self, op):
        m, at = mapped(self.fd, op.offset, op.length, write=False)
        with m:
            got = m[at:at + op.length]
        self.expect_bytes(got, self.model[op.offset:op.offset + op.length], f"mapped read ({op})")

    def do_mapwrite(self, op):
        data = op.data(self.seed)
        m, at = mapped(self.fd, op.offset, op.length, write=True)
        with m:
            m[at:at + op.length] = data
            m.flush()
        self.put(op.offset, data)

    def do_fsync(self, op):
        os.fsync(self.fd)
        self.check(self.model, f"object after fsync ({op})")

    def do_reopen(self, op):
        self.close(f"after close ({op})")
        self.fd = os.open(self.path, os.O_RDWR)
        self.wrote = False

    def close(self, what):
        """Closes the file, then compares the object in the bucket and a fresh read with the model."""
        fd, self.fd = self.fd, None
        os.close(fd)
        self.settled_check("object " + what, self.settle if not self.wrote else 0.0)
        with open(self.path, "rb") as f:
            self.expect_bytes(f.read(), self.model, "read through the mount " + what)

    def settled_check(self, what, settle):
        """check(), retried for up to settle seconds; a late match counts in self.late."""
        deadline, tries = time.monotonic() + settle, 0
        while True:
            try:
                self.check(self.model, what)
                self.late += 1 if tries else 0
                return
            except Mismatch:
                if time.monotonic() >= deadline:
                    raise
            tries += 1
            time.sleep(0.05)

    def expect_count(self, got, want, op):
        if got != want:
            raise Mismatch(f"{op}: wrote {got} bytes of {want}")

    def expect_size(self, got, what):
        if got != len(self.model):
            raise Mismatch(f"{what}: size {got}, model {len(self.model)}")

    @staticmethod
    def expect_bytes(got, want, what):
        if bytes(got) != bytes(want):
            raise Mismatch(f"{what}: {first_difference(bytes(got), bytes(want))}")
