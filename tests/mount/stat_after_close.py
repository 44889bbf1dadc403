#!/usr/bin/env python3
"""Writers in one directory: create, write, close, then stat each file.

close() returns after FLUSH; the RELEASE that ends the upload arrives on its
own, so a stat right after close() meets that release in flight. Each stat
must give the size written. Usage: stat_after_close.py DIR SECONDS WRITERS
LISTERS; prints a line per writer and exits 1 on any wrong size.
"""
import multiprocessing as mp
import os
import random
import sys
import time


def writer(d, i, secs, out):
    rng = random.Random(i)
    n = bad = 0
    end = time.monotonic() + secs
    while time.monotonic() < end:
        size = rng.choice([1, 4097, 300001])
        path = os.path.join(d, f"{i:02d}-{n:05d}")
        n += 1
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        os.write(fd, b"x" * size)
        os.close(fd)
        got = os.stat(path).st_size
        if got != size:
            bad += 1
            print(f"WRONG {path}: stat after close says {got} bytes, {size} written", flush=True)
    out.put((i, n, bad))


def lister(d, secs):
    end = time.monotonic() + secs
    while time.monotonic() < end:
        for e in os.scandir(d):
            try:
                e.stat()
            except FileNotFoundError:
                pass


def main():
    d, secs, writers, listers = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    os.makedirs(d, exist_ok=True)
    out = mp.Queue()
    procs = [mp.Process(target=writer, args=(d, i, secs, out)) for i in range(writers)]
    procs += [mp.Process(target=lister, args=(d, secs)) for _ in range(listers)]
    for p in procs:
        p.start()
    results = [out.get() for _ in range(writers)]
    for p in procs:
        p.join()
    files = sum(r[1] for r in results)
    bad = sum(r[2] for r in results)
    print(f"{files} files written and stat'ed by {writers} writers beside {listers} listers, "
          f"{bad} wrong sizes")
    crashed = [p.exitcode for p in procs if p.exitcode != 0]
    sys.exit(1 if bad or crashed or files == 0 else 0)


if __name__ == "__main__":
    main()
