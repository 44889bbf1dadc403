"""Dropping the page cache before a cold run, and pre-writing the memory
the run will fill."""
import os
import subprocess
import sys
import time

from common import log


def drop_caches():
    os.sync()
    try:
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
        return True
    except OSError as e:
        log(f"cannot drop the page cache ({e}); cold runs are not cold")
        return False


MADV_POPULATE_WRITE = 23  # linux/mman.h; Python's mmap module does not name it


def prewarm(nbytes):
    """Maps, writes and frees nbytes of anonymous memory (huge pages) right
    before a timed run, and returns the rate (MB/s) at which it was written.

    A VM that hands free memory back to its host (virtio-balloon free-page
    reporting) backs it again slowly, and the page cache a cold read fills
    comes from that memory: writing it just before the run makes every
    target start from warm memory; the rate shows how cold it was."""
    # In a child: in the harness itself the mapping would raise its VmHWM,
    # which every later child inherits (the direct client's peak RSS).
    code = f"""
import mmap
m = mmap.mmap(-1, {nbytes})
m.madvise(mmap.MADV_HUGEPAGE)
try:
    m.madvise({MADV_POPULATE_WRITE})
except OSError:  # kernels before 5.14: touch one byte per page
    for off in range(0, {nbytes}, 4096):
        m[off] = 1
"""
    t0 = time.monotonic()
    subprocess.run([sys.executable, "-c", code], check=True)
    return nbytes / (time.monotonic() - t0) / 1e6
