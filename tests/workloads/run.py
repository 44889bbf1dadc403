#!/usr/bin/python3
"""The loader suite: MLPerf-Storage-shaped workloads (unet3d, retinanet,
parquet-like, checkpoint, HDF5) through bucketfs, the direct S3 client
(boto3 on the same objects), s3fs and rclone, on one server per run; every
sample checked against its digest. Writes results.json, results.txt and
chart.png to --out. Exits 1 when a sample did not match or a bucketfs or
direct run failed.

  /usr/bin/python3 tests/workloads/run.py --scale small --server s3sim \\
      --targets bucketfs,bucketfs-order,direct --out /tmp/wl
See tests/workloads/README.md."""
import argparse
import json
import os
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path[:0] = [HERE, os.path.join(ROOT, "fio-jobs/harness"), os.path.join(ROOT, "mount-tools")]

import wl_data  # noqa: E402
import wl_jobs  # noqa: E402
import wl_report  # noqa: E402
import wl_scale as S  # noqa: E402
from common import BUCKET, built, log  # noqa: E402
from mounts import Mount, tear_down  # noqa: E402
from servers import Server, Stats  # noqa: E402
from wl_source import MountSource, S3Source  # noqa: E402

MOUNT_TARGETS = ("bucketfs", "bucketfs-order", "bucketfs-cache", "s3fs", "rclone")
# Only retinanet opens many files in an order the mount cannot guess.
ORDER_WORKLOADS = ("retinanet",)
# `local` reads the generated files where they were made (page cache warm):
# what the CPU allows each workload, with no storage in the way. It does not
# write: a checkpoint there would land in the data cache directory.
LOCAL_WORKLOADS = ("unet3d", "retinanet", "parquet", "hdf5")


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--scale", choices=sorted(S.SCALES), default="small")
    p.add_argument("--server", choices=("s3sim", "s3sim-shaped", "s3rver"), default="s3sim")
    p.add_argument("--targets", default="bucketfs,bucketfs-order,direct,s3fs,rclone",
                   help="of bucketfs,bucketfs-order,bucketfs-cache,direct,s3fs,rclone,local "
                        "(bucketfs-cache: bucketfs with --cache in a new directory, as rclone "
                        "runs with its write cache)")
    p.add_argument("--workloads", default="unet3d,retinanet,parquet,hdf5,checkpoint")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", default=None)
    p.add_argument("--cache-dir", default="/var/tmp/bucketfs-workloads",
                   help="where generated data is kept between runs")
    p.add_argument("--bucketfs-bin", default=None)
    p.add_argument("--s3sim-bin", default=None)
    p.add_argument("--bucketfs-opt", action="append", default=[],
                   help="an extra option for the bucketfs mount (repeatable)")
    return p.parse_args(argv)


def daemon_usage(pid):
    """(CPU seconds, peak RSS MiB) of a daemon so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    rss = 0
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                rss = int(line.split()[1]) / 1024
    return cpu, rss


def run_target(target, workloads, args, server, bins, workdir, manifest, store, data_root):
    rows = []
    mount = None
    try:
        if target in MOUNT_TARGETS:
            kind = "bucketfs" if target.startswith("bucketfs") else target
            opts = ("--vfs-cache-mode", "writes") if kind == "rclone" else ()
            bucketfs_opts = list(args.bucketfs_opt)
            if target == "bucketfs-cache":
                bucketfs_opts += ["--cache", tempfile.mkdtemp(prefix="bucketfs-cache-", dir=workdir)]
            mount = Mount(kind, server, bins, workdir, write=True, label=target,
                          bucketfs_opts=bucketfs_opts, rclone_opts=opts)
            source = MountSource(mount.mnt)
        elif target == "local":
            source = MountSource(data_root)
        else:
            source = store
        for w in workloads:
            if target == "bucketfs-order" and w not in ORDER_WORKLOADS:
                continue
            if target == "local" and w not in LOCAL_WORKLOADS:
                continue
            cpu0 = daemon_usage(mount.pid)[0] if mount else None
            stats = Stats(server)
            stats.reset()
            log(f"{target}: {w}")
            try:
                results = wl_jobs.WORKLOADS[w](
                    source, manifest, args.scale, target=target, store=store,
                    order_hint=mount.mnt if target == "bucketfs-order" else None)
                error = None
            except Exception as e:  # one workload failing does not stop the others
                traceback.print_exc()
                results, error = [wl_jobs.phase(w, "all", 0, 0, 0.0, 0)], f"{type(e).__name__}: {e}"
            if mount:
                mount.check_alive()
                cpu, rss = daemon_usage(mount.pid)
                gib = sum(r["bytes"] for r in results) / (1 << 30)
                for r in results:  # the workload's phases together
                    r["daemon_cpu_s_per_gib"] = (cpu - cpu0) / gib if gib else None
                    r["daemon_peak_rss_mib"] = rss
            ops = stats.ops() if target != "local" else None
            if ops:  # the server's requests by operation, all phases of the workload
                log(f"  requests: {json.dumps(ops, sort_keys=True)}")
            for r in results:
                r["target"] = target
                r["error"] = error
                r["requests"] = ops
                rows.append(r)
                log(f"  {r['phase']}: {r['samples']} samples {r['bytes'] / 1e6:.1f} MB "
                    f"{r['seconds']:.2f} s bad {r['bad']}{' ERROR ' + error if error else ''}")
    except Exception as e:
        traceback.print_exc()
        rows.append(dict(workload="mount", phase="-", target=target, samples=0, bytes=0,
                         seconds=0.0, bad=0, error=f"{type(e).__name__}: {e}"))
    finally:
        if mount:
            mount.close()
    return rows


def missing_requirements():
    try:
        import h5py, PIL, torch, torchvision  # noqa: F401,E401
    except ImportError as e:
        return f"{e.name} is missing (mount-tools/install-deps.sh installs it)"
    if not os.path.exists("/dev/fuse"):
        return "/dev/fuse is missing"
    return None


def main(argv):
    args = parse_args(argv)
    why = missing_requirements()
    if why:
        print(f"SKIP: {why}")
        return 77
    targets = [t for t in args.targets.split(",") if t]
    workloads = [w for w in args.workloads.split(",") if w]
    for t in targets:
        if t not in MOUNT_TARGETS + ("direct", "local"):
            sys.exit(f"run.py: unknown target {t}")
    for w in workloads:
        if w not in wl_jobs.WORKLOADS:
            sys.exit(f"run.py: unknown workload {w} (known: {', '.join(wl_jobs.WORKLOADS)})")
    out = args.out or tempfile.mkdtemp(prefix="bucketfs-workloads-")
    os.makedirs(out, exist_ok=True)
    bins = {}
    if any(t.startswith("bucketfs") for t in targets):
        bins["bucketfs"] = built(args.bucketfs_bin, "mount-tools/bucketfs")
    s3sim_bin = built(args.s3sim_bin, "tests/s3sim/s3sim") if args.server != "s3rver" else ""
    log(f"generating {args.scale} data (seed {args.seed}) in {args.cache_dir}")
    data_root = wl_data.generate(args.scale, args.seed, args.cache_dir)
    manifest = wl_data.load_manifest(data_root)
    workdir = tempfile.mkdtemp(prefix="bucketfs-wl-")
    server = None
    rows = []
    try:
        server = Server(args.server, s3sim_bin)
        env = server.client_env()
        store = S3Source(server.endpoint, env["AWS_ACCESS_KEY_ID"], env["AWS_SECRET_ACCESS_KEY"],
                         BUCKET)
        t = time.monotonic()
        n = wl_data.upload(store, data_root, workloads)
        log(f"uploaded {n} objects in {time.monotonic() - t:.1f} s")
        for target in targets:
            for key in (S.ckpt_dir(target) + ".keep",):
                store.client().put_object(Bucket=BUCKET, Key=key, Body=b"")
            rows += run_target(target, workloads, args, server, bins, workdir, manifest, store,
                               data_root)
    finally:
        tear_down(workdir, server, out)
    text = wl_report.table(rows)
    print(text)
    meta = dict(scale=args.scale, server=args.server, seed=args.seed, targets=targets,
                workloads=workloads, command=" ".join([sys.executable] + sys.argv))
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(dict(meta, rows=rows), f, indent=1)
    with open(os.path.join(out, "results.txt"), "w") as f:
        f.write(text + "\n")
    wl_report.chart(rows, targets, out, f"loaders, {args.scale} scale, {args.server}")
    log(f"results in {out}")
    failed = wl_report.failures(rows)
    for msg in failed:
        print("FAIL: " + msg)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
