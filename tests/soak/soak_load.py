#!/usr/bin/env python3
"""The soak's load on one mount, and what it measures of the daemon.

Readers check every byte they read against the generated content
(preload_bytes.py); writers write generated objects through the mount and
check each one after close with boto3 (an S3 client independent of
bucketfs). Each worker is a forked process; the expected bytes of the read
set are computed once before the fork and shared.

Usage: soak_load.py --mnt MNT --bucket B --pid DAEMON_PID --metrics URL
                    --seconds N --out REPORT.json [--readers 32 --writers 8]
Prints a summary; REPORT.json holds the figures and every error met.
Exit status: 0 when no byte was wrong and no operation failed (the caller
decides which failures the injected faults explain), 1 otherwise.
"""
import argparse
import errno
import json
import mmap
import os
import random
import sys
import time
import traceback

import boto3
import botocore
from botocore.config import Config

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import daemon_probe  # noqa: E402
import preload_bytes  # noqa: E402

CHUNK = 1 << 20
# Sizes the writers choose from: empty, tiny, unaligned, one PutObject, and
# (with --part-size 5M) multipart uploads of 1 and 3 parts.
WRITE_SIZES = [0, 1, 4097, 300_001, 4 * CHUNK + 1, 11 * CHUNK + 7]


def parse_size(text):
    """s3sim's sizes: digits with an optional K, M or G (binary)."""
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    if text[-1:].upper() in units:
        return int(text[:-1]) * units[text[-1].upper()]
    return int(text)


def s3_client():
    options = dict(s3={"addressing_style": "path"},
                   retries={"max_attempts": 10, "mode": "standard"})
    if tuple(int(x) for x in botocore.__version__.split(".")[:2]) >= (1, 36):
        options.update(request_checksum_calculation="when_required",
                       response_checksum_validation="when_required")
    return boto3.client("s3", endpoint_url=os.environ["S3_ENDPOINT"],
                        aws_access_key_id=os.environ["AWS_ACCESS_KEY_ID"],
                        aws_secret_access_key=os.environ["AWS_SECRET_ACCESS_KEY"],
                        region_name=os.environ.get("AWS_REGION", "us-east-1"),
                        config=Config(**options))


class Worker:
    """One process's counters and errors, written as JSON when it ends."""

    def __init__(self, name):
        self.name = name
        self.stats = {"bytes_verified": 0, "reads": 0, "opens": 0, "listings": 0,
                      "files_written": 0, "bytes_written": 0, "objects_verified": 0}
        self.errors = []   # an operation that failed (errno, path)
        self.wrong = []    # a byte that differs: never explained by a fault

    def error(self, op, path, exc):
        self.errors.append({"worker": self.name, "op": op, "path": path,
                            "errno": errno.errorcode.get(getattr(exc, "errno", None) or 0, ""),
                            "error": str(exc)[:300], "time": time.time()})

    def mismatch(self, path, offset, length, detail):
        self.stats["wrong_total"] = self.stats.get("wrong_total", 0) + 1
        if len(self.wrong) >= 100:  # the first ones tell; a flood would fill the report
            return
        self.wrong.append({"worker": self.name, "path": path, "offset": offset,
                           "length": length, "detail": detail})


def first_difference(got, want):
    n = min(len(got), len(want))
    for i in range(n):
        if got[i] != want[i]:
            return i
    return n


def check_bytes(w, path, offset, got, want):
    if got == want:
        w.stats["bytes_verified"] += len(got)
        return True
    i = first_difference(got, want)
    w.mismatch(path, offset, len(want),
               f"got {len(got)} bytes, first difference at +{i}")
    return False


def evict(fd):
    """Drops the file's pages so the next read goes to the daemon again."""
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)


def sequential_reader(w, rng, objects, deadline, mnt):
    while time.time() < deadline:
        key, data = rng.choice(objects)
        path = os.path.join(mnt, key)
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError as e:
            w.error("open", key, e)
            continue
        w.stats["opens"] += 1
        try:
            offset, ok = 0, True
            size = rng.choice([CHUNK, 128 << 10, 4096 * 3 + 5])
            while True:
                got = os.read(fd, size)
                w.stats["reads"] += 1
                if not got:
                    break
                ok = check_bytes(w, key, offset, got, data[offset:offset + len(got)])
                if not ok:
                    break
                offset += len(got)
            if ok and offset != len(data):
                w.mismatch(key, offset, len(data) - offset, "end of file before the object's end")
            evict(fd)
        except OSError as e:
            w.error("read", key, e)
        finally:
            os.close(fd)


def random_reader(w, rng, objects, deadline, mnt, direct):
    buf = mmap.mmap(-1, CHUNK) if direct else None
    while time.time() < deadline:
        key, data = rng.choice(objects)
        path = os.path.join(mnt, key)
        try:
            fd = os.open(path, os.O_RDONLY | (os.O_DIRECT if direct else 0))
        except OSError as e:
            w.error("open", key, e)
            continue
        w.stats["opens"] += 1
        try:
            for _ in range(rng.randint(8, 64)):
                if direct:  # O_DIRECT: aligned offsets and lengths into an aligned buffer
                    length = 4096 * rng.randint(1, CHUNK // 4096)
                    offset = 4096 * rng.randint(0, max(0, (len(data) - 1) // 4096))
                    n = os.preadv(fd, [memoryview(buf)[:length]], offset)
                    got = bytes(buf[:n])
                else:
                    length = rng.randint(1, CHUNK)
                    offset = rng.randint(0, len(data) + 4096)  # sometimes past the end
                    got = os.pread(fd, length, offset)
                w.stats["reads"] += 1
                if not check_bytes(w, key, offset, got, data[offset:offset + length]):
                    break
                if time.time() >= deadline:
                    break
            if not direct:
                evict(fd)
        except OSError as e:
            w.error("read", key, e)
        finally:
            os.close(fd)


def lister(w, prefixes, mnt):
    """Each preloaded directory lists exactly its objects."""
    for prefix, names in prefixes.items():
        try:
            got = sorted(os.listdir(os.path.join(mnt, prefix)))
        except OSError as e:
            w.error("listdir", prefix, e)
            continue
        w.stats["listings"] += 1
        if got != names:
            w.mismatch(prefix, 0, 0, f"listing has {len(got)} names, expected {len(names)}")


def get_object(s3, bucket, key, tries=8):
    """The object's body through boto3; a body cut by an injected fault is read again."""
    for attempt in range(tries):
        try:
            return s3.get_object(Bucket=bucket, Key=key)["Body"].read()
        except s3.exceptions.NoSuchKey:
            return None
        except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError):
            if attempt == tries - 1:
                raise
            time.sleep(0.2 * (attempt + 1))
    return None


def writer(w, rng, index, deadline, mnt, bucket, seed):
    s3 = s3_client()
    os.makedirs(os.path.join(mnt, "w"), exist_ok=True)
    n = 0
    while time.time() < deadline:
        key = f"w/{index:02d}-{n:05d}"
        n += 1
        size = rng.choice(WRITE_SIZES)
        data = preload_bytes.object_bytes(seed, bucket, key, size)
        path = os.path.join(mnt, key)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except OSError as e:
            w.error("create", key, e)
            continue
        closed = False
        try:
            offset = 0
            while offset < size:
                step = min(size - offset, rng.choice([4096, 65536 + 17, CHUNK, 3 * CHUNK]))
                written = os.write(fd, data[offset:offset + step])
                offset += written
            closed = True
            os.close(fd)
        except OSError as e:
            w.error("close" if closed else "write", key, e)
            if not closed:
                try:
                    os.close(fd)
                except OSError as e2:
                    w.error("close", key, e2)
            # A failed close leaves no object: checked by the caller from the report.
            continue
        w.stats["files_written"] += 1
        w.stats["bytes_written"] += size
        try:
            st = os.stat(path)
            if st.st_size != size:
                w.mismatch(key, 0, size, f"stat after close says {st.st_size} bytes")
            body = get_object(s3, bucket, key)
            # A file closed without a byte written is stored at its release,
            # just after close() returns (docs/SEMANTICS.md, "Durability").
            settle = time.time() + 10
            while body is None and size == 0 and time.time() < settle:
                time.sleep(0.2)
                body = get_object(s3, bucket, key)
        except (OSError, botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError) as e:
            w.error("verify", key, e)
            continue
        if body is None:
            w.mismatch(key, 0, size, "no object after a successful close")
        elif check_bytes(w, key, 0, body, data):
            w.stats["objects_verified"] += 1


def run_worker(kind, index, args, objects, prefixes):
    w = Worker(f"{kind}{index}")
    rng = random.Random(f"{args.seed}-{kind}-{index}")
    deadline = args.start + args.seconds
    try:
        if kind == "seq":
            sequential_reader(w, rng, objects, deadline, args.mnt)
            lister(w, prefixes, args.mnt)
        elif kind == "rand":
            random_reader(w, rng, objects, deadline, args.mnt, direct=index % 4 == 0)
            lister(w, prefixes, args.mnt)
        else:
            writer(w, rng, index, deadline, args.mnt, args.bucket, args.seed)
    except Exception:  # noqa: BLE001 - a crash of the worker is an error of the test
        w.mismatch("-", 0, 0, "worker crashed: " + traceback.format_exc()[-800:])
    with open(os.path.join(args.work, f"{w.name}.json"), "w") as f:
        json.dump({"stats": w.stats, "errors": w.errors, "wrong": w.wrong}, f)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--mnt", required=True)
    p.add_argument("--bucket", required=True)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--pid", type=int, required=True)
    p.add_argument("--metrics", required=True)
    p.add_argument("--seconds", type=float, default=120)
    p.add_argument("--readers", type=int, default=32)
    p.add_argument("--writers", type=int, default=8)
    p.add_argument("--preload", action="append", default=[],
                   help="PREFIX:COUNT:SIZE as given to s3sim (bucket --bucket)")
    p.add_argument("--work", required=True)
    p.add_argument("--out", required=True)
    args = p.parse_args()

    # The read set, computed once and shared by the forked readers.
    objects, prefixes = [], {}
    for spec in args.preload:
        prefix, count, size = spec.rsplit(":", 2)
        names = [f"obj-{i:05d}" for i in range(int(count))]
        prefixes[prefix.rstrip("/")] = names
        for name in names:
            key = prefix + name
            objects.append((key, preload_bytes.object_bytes(args.seed, args.bucket, key,
                                                          parse_size(size))))
    print(f"read set: {len(objects)} objects, {sum(len(d) for _, d in objects)} bytes", flush=True)

    sampler = daemon_probe.RssSampler(args.pid)
    sampler.start()
    args.start = time.time()
    children = []
    kinds = ([("seq", i) for i in range(args.readers // 2)] +
             [("rand", i) for i in range(args.readers - args.readers // 2)] +
             [("write", i) for i in range(args.writers)])
    for kind, index in kinds:
        pid = os.fork()
        if pid == 0:
            status = 0
            try:
                run_worker(kind, index, args, objects, prefixes)
            except BaseException:  # noqa: BLE001
                traceback.print_exc()
                status = 1
            os._exit(status)
        children.append(pid)
    crashed = 0
    for pid in children:
        _, status = os.waitpid(pid, 0)
        crashed += status != 0
    elapsed = time.time() - args.start
    sampler.stop()

    stats, errors, wrong = {}, [], []
    for kind, index in kinds:
        path = os.path.join(args.work, f"{kind}{index}.json")
        try:
            with open(path) as f:
                r = json.load(f)
        except OSError:
            wrong.append({"worker": f"{kind}{index}", "detail": "no report"})
            continue
        for k, v in r["stats"].items():
            stats[k] = stats.get(k, 0) + v
        errors += r["errors"]
        wrong += r["wrong"]
    report = {"seconds": elapsed, "stats": stats, "errors": errors, "wrong": wrong,
              "crashed_workers": crashed, "rss_peak_sampled": sampler.peak,
              "rss_samples": len(sampler.samples)}
    with open(args.out, "w") as f:
        json.dump(report, f, indent=1)
    print(f"load: {elapsed:.0f} s, {stats.get('bytes_verified', 0)} bytes verified, "
          f"{stats.get('reads', 0)} reads, {stats.get('opens', 0)} opens, "
          f"{stats.get('listings', 0)} listings, {stats.get('files_written', 0)} files written "
          f"({stats.get('bytes_written', 0)} bytes), {stats.get('objects_verified', 0)} verified "
          f"in the bucket; {len(errors)} failed operations, "
          f"{stats.get('wrong_total', len(wrong))} wrong results, "
          f"peak RSS sampled {sampler.peak >> 20} MiB", flush=True)
    for e in errors[:20]:
        print("error:", json.dumps(e))
    for e in wrong[:20]:
        print("WRONG:", json.dumps(e))
    return 0 if not errors and not wrong and not crashed else 1


if __name__ == "__main__":
    sys.exit(main())
