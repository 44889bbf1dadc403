"""The bytes of s3sim's generated objects (tests/s3sim/preload.h), recomputed:
word i of an object is splitmix64's i-th output for a per-object seed taken
from SHA-256 of "SEED\\nBUCKET\\nKEY". The soak test checks every byte it reads
against these, and its writers write them, so no copy of the data is kept."""
import hashlib

import numpy as np

_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


def object_base(seed, bucket, key):
    digest = hashlib.sha256(f"{seed}\n{bucket}\n{key}".encode()).digest()
    return np.uint64(int.from_bytes(digest[:8], "little"))


def words(base, first, count):
    """Words [first, first + count) of the stream, as uint64 (wrapping)."""
    with np.errstate(over="ignore"):
        z = base + (np.arange(first + 1, first + count + 1, dtype=np.uint64) * _GAMMA)
        z = (z ^ (z >> np.uint64(30))) * _M1
        z = (z ^ (z >> np.uint64(27))) * _M2
        return z ^ (z >> np.uint64(31))


def object_range(base, offset, length):
    """Bytes [offset, offset + length) of the object whose stream is `base`."""
    if length <= 0:
        return b""
    first = offset // 8
    last = (offset + length + 7) // 8
    raw = words(base, first, last - first).astype("<u8").tobytes()
    start = offset - first * 8
    return raw[start:start + length]


def object_bytes(seed, bucket, key, size):
    return object_range(object_base(seed, bucket, key), 0, size)
