#!/usr/bin/python3
"""A/B of bucketfs builds on checkpoints: each round, every build in turn gets
a fresh mount on one server, torch.save's a state dict through it and
torch.load's it back from the same mount (what a training job does when it
checks its own save); the direct client (boto3) loads the same object. Every
tensor loaded is compared with the one saved. Prints each round, the medians
and the pair ratios against the first build.

  fio-jobs/harness/checkpoint_ab.py [--server s3sim-shaped|s3sim|s3rver] \\
      [--size-mib 512] [--rounds 4] BUCKETFS_BINARY [BUCKETFS_BINARY ...]

Run it under `flock /tmp/bucketfs-bench.lock`, with nothing else on the
machine; the GET counts come from s3sim's counters (s3rver has none).
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path[:0] = [HERE, os.path.join(ROOT, "tests", "workloads")]

from common import BUCKET  # noqa: E402
from mounts import Mount  # noqa: E402
from servers import Server, Stats  # noqa: E402
import wl_jobs  # noqa: E402
from wl_source import MountSource, S3Source  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--server", default="s3sim-shaped", choices=["s3sim-shaped", "s3sim", "s3rver"])
    ap.add_argument("--size-mib", type=int, default=512)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("binaries", nargs="+")
    args = ap.parse_args()
    server = Server(args.server, os.path.join(ROOT, "build/release/tests/s3sim/s3sim"))
    env = server.env
    store = S3Source(server.endpoint, env["AWS_ACCESS_KEY_ID"], env["AWS_SECRET_ACCESS_KEY"], BUCKET)
    stats = Stats(server)
    work = tempfile.mkdtemp(prefix="checkpoint-ab-")
    names = [f"{i}:{os.path.basename(b)}" for i, b in enumerate(args.binaries)] + ["direct"]
    save, load, gets = ({n: [] for n in names} for _ in range(3))
    tensors = wl_jobs.state_dict(args.size_mib << 20, 7)
    try:
        for rnd in range(args.rounds):
            key = f"ck/model-{rnd}.pt"
            for name, binary in zip(names, args.binaries):
                subprocess.run(["sh", "-c", "echo 1 > /proc/sys/vm/drop_caches"], check=False)
                m = Mount("bucketfs", server, {"bucketfs": binary}, work, write=True, label="ab")
                try:
                    src = MountSource(m.mnt)
                    t = time.monotonic()
                    src.save_torch(tensors, key)
                    saved = time.monotonic() - t
                    size = os.path.getsize(os.path.join(m.mnt, key))
                    stats.reset()
                    t = time.monotonic()
                    loaded = src.load_torch(key)
                    took = time.monotonic() - t
                finally:
                    m.close()
                report(name, rnd, size, saved, took, loaded, tensors, stats, save, load, gets)
                del loaded
                store.delete(key)
            # The direct client loads the object the last build saved.
            store.save_torch(tensors, key)
            size = store.size(key)
            stats.reset()
            t = time.monotonic()
            loaded = store.load_torch(key)
            took = time.monotonic() - t
            report("direct", rnd, size, 0, took, loaded, tensors, stats, save, load, gets)
            del loaded
            store.delete(key)
        for n in names:
            s = f"save {statistics.median(save[n]):7.1f}" if save[n] else " " * 12
            print(f"median {n:24s} {s} load {statistics.median(load[n]):7.1f} MB/s"
                  f"  GETs {statistics.median(gets[n])}")
        for n in names[1:]:
            r = [x / y for x, y in zip(load[n], load[names[0]])]
            print(f"load ratio {n} / {names[0]}: median {statistics.median(r):.2f}"
                  f" (min {min(r):.2f}, max {max(r):.2f})")
    finally:
        server.stop()


def report(name, rnd, size, saved, took, loaded, tensors, stats, save, load, gets):
    bad = wl_jobs._bad_tensors(loaded, tensors)
    if bad:
        raise SystemExit(f"{name}: {bad} tensors differ from the ones saved")
    if saved:
        save[name].append(size / saved / 1e6)
    load[name].append(size / took / 1e6)
    ops = stats.ops()
    gets[name].append(ops.get("GetObject", 0) if ops else 0)
    print(f"{rnd} {name:24s} load {load[name][-1]:7.1f} MB/s GETs {gets[name][-1]}", flush=True)


if __name__ == "__main__":
    main()
