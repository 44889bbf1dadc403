#!/usr/bin/env python3
"""Processes that hold a mount's files open across a daemon restart.

  handover_io.py read FILE PROGRESS   reads FILE in 1 MiB reads at a steady
      pace, writing the bytes read so far to PROGRESS; prints
      "sha256 <hex> bytes <n> max_gap_ms <ms>" (the longest wait for one read)
  handover_io.py write FILE READY GO  writes 1 MiB, touches READY, waits for
      GO, writes again and closes; prints "write <errno name|ok> close <...>"
"""
import errno
import hashlib
import os
import sys
import time


def err_name(e):
    return errno.errorcode.get(e.errno, str(e.errno))


def read(path, progress):
    h = hashlib.sha256()
    total = 0
    max_gap = 0.0
    with open(path, "rb", buffering=0) as f:
        while True:
            t = time.monotonic()
            chunk = f.read(1 << 20)
            max_gap = max(max_gap, time.monotonic() - t)
            if not chunk:
                break
            h.update(chunk)
            total += len(chunk)
            with open(progress + ".tmp", "w") as p:
                p.write(str(total))
            os.replace(progress + ".tmp", progress)
            time.sleep(0.01)
    print(f"sha256 {h.hexdigest()} bytes {total} max_gap_ms {max_gap * 1000:.0f}")


def write(path, ready, go):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.write(fd, b"a" * (1 << 20))
    open(ready, "w").close()
    while not os.path.exists(go):
        time.sleep(0.05)
    result = []
    try:
        os.write(fd, b"b" * (1 << 20))
        result.append("write ok")
    except OSError as e:
        result.append("write " + err_name(e))
    try:
        os.close(fd)
        result.append("close ok")
    except OSError as e:
        result.append("close " + err_name(e))
    print(" ".join(result))


if __name__ == "__main__":
    if sys.argv[1] == "read":
        read(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "write":
        write(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
