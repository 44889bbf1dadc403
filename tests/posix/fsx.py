#!/usr/bin/env python3
"""fsx-style random checker of one file on a mount: a seeded mix of write,
pwrite, read, truncate (up and down), mapped read and mapped write (shared
maps), close/reopen and fsync on one O_RDWR descriptor, each checked against
an in-memory model; after every close and every fsync the object in the
bucket (read with boto3 from the same server) must equal the model, and
after every close so must a fresh read through the mount.

Usage: fsx.py --file MOUNT/PATH --bucket B --key KEY [--seed N] [--ops N]
              [--max-len BYTES] [--max-op BYTES] [--no-CLASS ...]
              [--log FILE] [--replay FILE]
  CLASS: write pwrite read truncate mapread mapwrite reopen fsync.
  --replay FILE runs the ops of a log this script wrote (same seed).
Endpoint and credentials: S3_ENDPOINT, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY.
Exit status 0 when every op and check passed, 1 on the first mismatch or
unexpected error (the seed, the op and the log's tail are printed)."""
import argparse
import errno
import os
import random
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "mount"))
from fsx_ops import CLASSES, Mismatch, Op, Target, draw, first_difference  # noqa: E402


def parse_size(text):
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    t = text.strip().lower().rstrip("ib")
    return int(t[:-1]) * units[t[-1]] if t and t[-1] in units else int(t)


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--file", required=True, help="the file on the mount (created, truncated)")
    ap.add_argument("--bucket", required=True)
    ap.add_argument("--key", required=True, help="the file's key in the bucket")
    ap.add_argument("--seed", type=int, default=None,
                    help="default: from the clock (printed); with --replay, the log's")
    ap.add_argument("--ops", type=int, default=200)
    ap.add_argument("--max-len", type=parse_size, default=256 << 10, help="largest file size")
    ap.add_argument("--max-op", type=parse_size, default=64 << 10, help="largest op length")
    ap.add_argument("--settle", type=float, default=10.0,
                    help="seconds the object may lag a close() of a descriptor that wrote "
                         "no byte (completed by the release, docs/SEMANTICS.md); 0: strict")
    ap.add_argument("--log", help="where to write the op log (default: beside --file's name in /tmp)")
    ap.add_argument("--replay", help="run the ops of this log instead of drawing them")
    for name in CLASSES:
        ap.add_argument(f"--no-{name}", action="store_true", help=f"no {name} ops")
    args = ap.parse_args(argv)
    if args.seed is None and not args.replay:
        args.seed = int(time.time() * 1000) % 1_000_000
    args.max_op = min(args.max_op, args.max_len)
    args.classes = [n for n in CLASSES if not getattr(args, "no_" + n)]
    if not args.classes:
        ap.error("every op class is turned off")
    return args


def bucket_checker(bucket, key):
    """check(model, what): raises Mismatch unless the object's body equals model."""
    import botocore.exceptions
    import s3util  # tests/mount/s3util.py: the client the mount tests check buckets with
    s3 = s3util.client()

    def get_body():
        # s3rver answers a PUT before the data is on disk, so a GET right
        # after may end its body early; a short body is a transport failure
        # of this reference read (retried), never compared with the model.
        for attempt in range(5):
            try:
                return s3.get_object(Bucket=bucket, Key=key)["Body"].read()
            except botocore.exceptions.ResponseStreamingError:
                if attempt == 4:
                    raise
                time.sleep(0.2 * (attempt + 1))

    def check(model, what):
        try:
            body = get_body()
        except s3.exceptions.NoSuchKey:
            raise Mismatch(f"{what}: s3://{bucket}/{key} does not exist") from None
        if body != bytes(model):
            raise Mismatch(f"{what}: s3://{bucket}/{key}: {first_difference(body, bytes(model))}")
    return check


def read_log(path):
    """The ops of a log this script wrote."""
    with open(path) as f:
        return [Op.parse(line) for line in f if line.strip() and not line.startswith("#")]


def drawn(args, target):
    """args.ops ops drawn from the seed, each sized for target's model as it is then."""
    rng = random.Random(args.seed)
    return (draw(rng, i, args.classes, len(target.model), args.max_len, args.max_op)
            for i in range(args.ops))


def seed_of_log(path):
    """The seed in the header of a log this script wrote, or None."""
    with open(path) as f:
        words = f.readline().split()
    return int(words[words.index("--seed") + 1]) if "--seed" in words else None


def run(args, check, out=print):
    """Runs the ops on args.file with check(model, what) for the bucket; 0 if all passed, 1 if not."""
    log_path = args.log or f"/tmp/fsx-{os.getpid()}.log"
    classes = " ".join(f"--no-{n}" for n in CLASSES if n not in args.classes)
    header = (f"# fsx.py --seed {args.seed} --ops {args.ops} --max-len {args.max_len} "
              f"--max-op {args.max_op} {classes}".rstrip())
    out(header.lstrip("# "))
    replayed = read_log(args.replay) if args.replay else None  # before the log is rewritten
    done, counts = [], {}
    with open(log_path, "w") as log:
        log.write(header + "\n")
        try:
            target = Target(args.file, args.seed, check, args.settle)
            for op in replayed if replayed is not None else drawn(args, target):
                log.write(f"{op}\n")
                log.flush()
                done.append(op)
                target.apply(op)
                counts[op.name] = counts.get(op.name, 0) + 1
            target.close("at the end")
        except (Mismatch, OSError) as e:
            what = e if isinstance(e, Mismatch) else \
                f"{errno.errorcode.get(e.errno, e.errno)} ({e.strerror}) from the mount"
            op = done[-1] if done else "opening the file"
            out(f"FAIL at op {op} (seed {args.seed}): {what}")
            out("last ops (INDEX NAME OFFSET LENGTH):")
            for o in done[-12:]:
                out(f"  {o}")
            out(f"op log: {log_path}; replay it: fsx.py --file F --bucket B --key K --replay LOG")
            return 1
    summary = ", ".join(f"{counts.get(n, 0)} {n}" for n in CLASSES if n in args.classes)
    out(f"ok: {len(done)} ops ({summary}); the object matched the model after every close"
        + (" and fsync" if "fsync" in args.classes else "")
        + (f"; {target.late} close(s) of a descriptor that wrote nothing: the object matched"
           " only after close() returned" if target.late else ""))
    return 0


def main(argv):
    args = parse_args(argv)
    if args.replay:
        args.seed = seed_of_log(args.replay) if args.seed is None else args.seed
    return run(args, bucket_checker(args.bucket, args.key))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
