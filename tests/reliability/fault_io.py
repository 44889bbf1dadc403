#!/usr/bin/env python3
"""I/O and checks of the reliability tests (tests/reliability/*.sh).

Source files are local; reads through the mount are compared with them byte
for byte, objects written through the mount are fetched with boto3 (which
retries every fault the server injects) and compared by SHA-256.

Usage:
  fault_io.py make-source DIR COUNT SIZE SEED     COUNT files src-NNN of SIZE random bytes
  fault_io.py put DIR BUCKET PREFIX               upload every file of DIR as PREFIX<name>
  fault_io.py seq-read MNTDIR DIR                 read each file in 1 MiB reads; print bytes verified
  fault_io.py rand-read MNTDIR DIR COUNT SEED     COUNT preads of 1 B..1 MiB at random offsets
                                                  (the files' cached pages dropped first)
  fault_io.py write MNTDIR DIR                    copy each file of DIR into MNTDIR (close checked)
  fault_io.py verify-objects BUCKET PREFIX DIR    each object PREFIX<name> equals DIR/name
  fault_io.py budget-read MNTDIR DIR              reads that may fail: EIO only, never a short
                                                  read taken for EOF nor a wrong byte; prints
                                                  "complete N eio M bytes B"
  fault_io.py fault-counts LOG SINCE UNTIL        {"kind": count} of faults logged in [SINCE, UNTIL)
"""
import errno
import hashlib
import json
import os
import random
import sys
import time

CHUNK = 1 << 20


def files_of(d):
    return sorted(f for f in os.listdir(d) if os.path.isfile(os.path.join(d, f)))


def client():
    import boto3
    from botocore.config import Config
    cfg = Config(s3={"addressing_style": "path"}, retries={"max_attempts": 10, "mode": "standard"},
                 read_timeout=10, connect_timeout=5, max_pool_connections=16)
    return boto3.client("s3", endpoint_url=os.environ["S3_ENDPOINT"],
                        aws_access_key_id=os.environ["AWS_ACCESS_KEY_ID"],
                        aws_secret_access_key=os.environ["AWS_SECRET_ACCESS_KEY"],
                        region_name=os.environ.get("AWS_REGION", "us-east-1"), config=cfg)


def persist(what, fn, attempts=30):
    """Runs fn until it succeeds: the server's faults hit this client too."""
    for i in range(attempts):
        try:
            return fn()
        except Exception as e:  # noqa: BLE001 - any fault of the server, retried
            last = e
            time.sleep(min(2.0, 0.05 * (2 ** i)))
    raise RuntimeError(f"{what}: {last}")


def make_source(d, count, size, seed):
    os.makedirs(d, exist_ok=True)
    rng = random.Random(seed)
    for i in range(count):
        with open(os.path.join(d, f"src-{i:03d}"), "wb") as f:
            left = size
            while left:
                n = min(left, 4 * CHUNK)
                f.write(rng.randbytes(n))
                left -= n


def put(d, bucket, prefix):
    s3 = client()
    for name in files_of(d):
        with open(os.path.join(d, name), "rb") as f:
            body = f.read()
        persist(f"put {name}", lambda: s3.put_object(Bucket=bucket, Key=prefix + name, Body=body))


def seq_read(mnt, d):
    total = 0
    for name in files_of(d):
        with open(os.path.join(d, name), "rb") as want, open(os.path.join(mnt, name), "rb") as got:
            off = 0
            while True:
                a = want.read(CHUNK)
                b = got.read(CHUNK)
                if a != b:
                    print(f"{name}: differs in the 1 MiB read at {off} "
                          f"(want {len(a)} bytes, got {len(b)})")
                    return 1
                if not a:
                    break
                off += len(a)
                total += len(a)
    print(f"sequential: {total} bytes verified")
    return 0


def rand_read(mnt, d, count, seed):
    rng = random.Random(seed)
    names = files_of(d)
    fds = {n: (os.open(os.path.join(d, n), os.O_RDONLY), os.open(os.path.join(mnt, n), os.O_RDONLY))
           for n in names}
    # The sequential reads left the files in the page cache: these reads must
    # reach the daemon.
    for _, m in fds.values():
        os.posix_fadvise(m, 0, 0, os.POSIX_FADV_DONTNEED)
    total = 0
    try:
        for _ in range(count):
            n = rng.choice(names)
            size = os.fstat(fds[n][0]).st_size
            length = rng.choice([1, 4096, 65536, 300000, CHUNK])
            off = rng.randrange(0, size)
            a = os.pread(fds[n][0], length, off)
            b = os.pread(fds[n][1], length, off)
            if a != b:
                print(f"{n}: pread({length}, {off}) differs (want {len(a)}, got {len(b)} bytes)")
                return 1
            total += len(a)
    finally:
        for a, b in fds.values():
            os.close(a)
            os.close(b)
    print(f"random: {count} reads, {total} bytes verified")
    return 0


def write(mnt, d):
    total = 0
    for name in files_of(d):
        with open(os.path.join(d, name), "rb") as src, open(os.path.join(mnt, name), "wb") as dst:
            while True:
                b = src.read(CHUNK)
                if not b:
                    break
                dst.write(b)
                total += len(b)
    print(f"written: {total} bytes")
    return 0


def verify_objects(bucket, prefix, d):
    s3 = client()
    total = 0
    for name in files_of(d):
        with open(os.path.join(d, name), "rb") as f:
            want = hashlib.sha256(f.read()).hexdigest()

        def fetch():
            return hashlib.sha256(
                s3.get_object(Bucket=bucket, Key=prefix + name)["Body"].read()).hexdigest()
        got = persist(f"get {name}", fetch)
        if got != want:
            print(f"object {prefix}{name} differs from its source")
            return 1
        total += os.path.getsize(os.path.join(d, name))
    print(f"objects: {total} bytes verified")
    return 0


def budget_read(mnt, d):
    complete = eio = total = 0
    for name in files_of(d):
        with open(os.path.join(d, name), "rb") as want, open(os.path.join(mnt, name), "rb") as got:
            size = os.fstat(want.fileno()).st_size
            off = 0
            while True:
                try:
                    b = got.read(CHUNK)
                except OSError as e:
                    if e.errno != errno.EIO:
                        print(f"{name}: read at {off} failed with {e}, not EIO")
                        return 1
                    eio += 1
                    break
                a = want.read(len(b)) if b else b""
                if a != b:
                    print(f"{name}: wrong bytes at {off}")
                    return 1
                if not b:
                    if off != size:
                        print(f"{name}: end of file after {off} of {size} bytes, without error")
                        return 1
                    complete += 1
                    break
                off += len(b)
                total += len(b)
    print(f"complete {complete} eio {eio} bytes {total}")
    return 0


def fault_counts(log, since, until):
    counts = {}
    with open(log) as f:
        for line in f:
            rec = json.loads(line)
            if since <= rec["time"] < until:
                counts[rec["fault"]] = counts.get(rec["fault"], 0) + 1
    print(json.dumps(counts, sort_keys=True))
    return 0


def main(argv):
    cmd, args = argv[1], argv[2:]
    if cmd == "make-source":
        make_source(args[0], int(args[1]), int(args[2]), int(args[3]))
        return 0
    if cmd == "put":
        put(*args)
        return 0
    if cmd == "seq-read":
        return seq_read(*args)
    if cmd == "rand-read":
        return rand_read(args[0], args[1], int(args[2]), int(args[3]))
    if cmd == "write":
        return write(*args)
    if cmd == "verify-objects":
        return verify_objects(*args)
    if cmd == "budget-read":
        return budget_read(*args)
    if cmd == "fault-counts":
        return fault_counts(args[0], float(args[1]), float(args[2]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
