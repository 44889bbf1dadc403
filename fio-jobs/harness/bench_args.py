"""bench.py's command line: its flags, what they derive, and the binaries
they name."""
import argparse
import sys

from bench_jobs import JOBS
from common import built, parse_size

TARGETS = ("bucketfs", "base", "direct", "s3fs", "rclone", "nullfs")


def parse_args(description, argv=None):
    """The flags, with size_bytes, daemon_warmup_bytes, job_list and
    target_list derived; exits on an unknown job or target."""
    ap = argparse.ArgumentParser(description=description,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--server", choices=["s3sim", "s3sim-shaped", "s3rver"], default="s3sim")
    ap.add_argument("--jobs", default="seq1,seq8,rand4k,rand1m,small,write1,write4")
    ap.add_argument("--targets", default="bucketfs,direct,s3fs,rclone",
                    help="run in this order; a target may repeat (bucketfs,nullfs,nullfs,bucketfs "
                    "alternates; the x nullfs column uses the last nullfs row)")
    ap.add_argument("--size", default="1g", help="file size of seq/rand/write jobs (1g, 256m)")
    ap.add_argument("--runtime", type=int, default=15, help="seconds of each random-read fio run")
    ap.add_argument("--rand-count", type=int, default=4000,
                    help="direct client: at least this many 4K GETs (it runs --runtime seconds, "
                    "like fio)")
    ap.add_argument("--small-files", type=int, default=4000, help="files of the small job (4 x N/4)")
    ap.add_argument("--conns", type=int, default=16, help="direct seq1: connections (bucketfs reader: 16 parts in flight)")
    ap.add_argument("--conns8", type=int, default=8, help="direct seq8: connections per stream")
    ap.add_argument("--prewarm", action="store_true",
                    help="before each cold run, write and free the memory it will fill (the "
                    "job's bytes + 1 GiB; writes twice the job's bytes + 1 GiB, the server's): on a VM "
                    "that returns free memory to its host, "
                    "targets otherwise fill page-cache pages of different coldness")
    ap.add_argument("--autogroup-nice", type=int, metavar="N",
                    help="give the harness's sessions (server, mounts, fio, direct client) "
                    "this autogroup nice value, e.g. -10: with kernel.sched_autogroup_enabled=1 "
                    "a nice-19 build in another session otherwise gets an equal share of the CPU")
    ap.add_argument("--no-warm", action="store_true", help="skip the warm (page cache kept) read runs")
    ap.add_argument("--daemon-warmup", default="256m",
                    help="bytes each fresh mount reads (or writes) untimed before its runs, as a "
                    "daemon that has been up a while would have; 0: time the first bytes of a "
                    "just-started daemon")
    ap.add_argument("--no-verify", dest="verify", action="store_false",
                    help="skip the checksum of seq/file-0 read through each mount")
    ap.add_argument("--timeout", type=int, help="seconds before a fio run is abandoned "
                    "(default: 180 + runtime + the job's bytes at 2 MB/s)")
    ap.add_argument("--bucketfs-bin")
    ap.add_argument("--base-bin", help="bucketfs binary of the target base: a bucketfs mount "
                    "with the same options, for an A/B of two daemons in one run "
                    "(--targets base,direct,bucketfs,bucketfs,direct,base)")
    ap.add_argument("--direct-bin", help="bucketfs binary whose `s3 bench` is the direct client "
                    "(default: --bucketfs-bin); A/B runs of two mounts keep one yardstick")
    ap.add_argument("--bucketfs-opt", action="append", default=[], metavar="OPT",
                    help="extra option of the bucketfs mount, repeatable; write it with '=' "
                    "(--bucketfs-opt=--direct-io, --bucketfs-opt=--max-memory=1G)")
    ap.add_argument("--nullfs-opt", action="append", default=[], metavar="OPT",
                    help="extra option of the nullfs mount, repeatable (--nullfs-opt=--keep-cache); "
                    "--bucketfs-opt=--direct-io applies to nullfs too")
    ap.add_argument("--s3sim-bin")
    ap.add_argument("--nullfs-bin")
    ap.add_argument("--out", help="results directory (default /tmp/bucketfs-bench-<server>-<time>)")
    args = ap.parse_args(argv)
    args.size_bytes = parse_size(args.size)
    args.daemon_warmup_bytes = parse_size(args.daemon_warmup) if args.daemon_warmup != "0" else 0
    args.job_list = [j for j in args.jobs.split(",") if j]
    args.target_list = [t for t in args.targets.split(",") if t]
    for j in args.job_list:
        if j not in JOBS:
            sys.exit(f"bench: unknown job {j} (known: {','.join(JOBS)})")
    for t in args.target_list:
        if t not in TARGETS:
            sys.exit(f"bench: unknown target {t}")
    if "base" in args.target_list and not args.base_bin:
        sys.exit("bench: target base needs --base-bin")
    return args


def binaries(args):
    """target or server name -> binary: given ones, else the newest build."""
    bins = {
        "bucketfs": built(args.bucketfs_bin, "mount-tools/bucketfs"),
        "s3sim": built(args.s3sim_bin, "tests/s3sim/s3sim") if args.server != "s3rver" else "",
        "nullfs": built(args.nullfs_bin, "tests/nullfs/nullfs")
        if "nullfs" in args.target_list else "",
    }
    bins["direct"] = args.direct_bin or bins["bucketfs"]
    bins["base"] = args.base_bin or ""
    return bins
