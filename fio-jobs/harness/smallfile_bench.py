#!/usr/bin/python3
"""Small-file benchmark: mdtest-like metadata phases, a zarr chunked array and
parallel small-file reads on bucketfs (and named variants of its options),
s3fs, rclone (--vfs-cache-mode off and writes) and the direct client (boto3),
against one S3 server, with the server's request counts per phase and the
floor each phase cannot beat (round trips x TTFB).

  fio-jobs/harness/smallfile_bench.py [--server s3sim-shaped|s3sim|s3rver] \
      [--targets bucketfs,s3fs,rclone,rclone-writes,direct] \
      [--variant NAME=OPTIONS ...] [--patterns mdtest,chunks,par] \
      [--files 500] [--file-size 64k] [--dirs 16] [--threads 1,8] \
      [--chunks 256] [--chunk-size 256k] [--par-files 2000] [--par-size 150k] \
      [--out DIR]

Patterns (every byte read back is compared with its expected content, which
is derived from the file's name and --seed):
  mdtest  N files in one directory (layout flat) and spread over --dirs
          directories (spread), on 1 and 8 threads (thread t takes files t,
          t+T, ...; no two threads touch one name). Phases, one mount per
          layout and thread count, page cache dropped before each phase:
          create (open O_CREAT, write all, close), stat (by name),
          lsstat (list each directory and stat every entry: ls -l),
          read (open, read all, close), rename (f-i -> r-i, same directory),
          unlink.
  chunks  a 1-D uint8 zarr array (zarr 2.x DirectoryStore, no compressor) of
          --chunks chunks of --chunk-size: chunk_write writes them one by one
          on one thread (each chunk: a temporary name in the chunk's
          directory, then os.replace onto the chunk's name); chunk_read reads
          them back through zarr (one chunk per selection) in a shuffled
          order, in batches of T chunks read by T threads at once; each
          thread count on a fresh mount. The direct target runs the same
          zarr code on a store of boto3 calls (PUT, GET per chunk).
  par     --par-files files of --par-size in one directory, uploaded once
          before the targets run, read whole in a shuffled order by 1 and by
          --par-threads threads, each on a fresh mount (files/s).

Per phase: ops/s, MB/s, S3 requests per op by type (s3sim's
GET /__s3sim/stats, reset before the phase), the floor and measured / floor.
After each phase that changes the bucket the listing is polled
(`bucketfs s3 ls`) until it shows the change: rclone with
--vfs-cache-mode writes uploads after close, and `visible` says how long after
the phase that took. Results: a table on stdout, DIR/results.json,
DIR/table.txt and the daemons' logs. Run as root (drop_caches, mounts).

/usr/bin/python3: zarr, numpy and boto3 are Debian's packages
(mount-tools/install-deps.sh), which a python3 of pyenv does not see.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True  # no __pycache__ in the tree
import common  # noqa: E402
from common import built, log, parse_size  # noqa: E402
from mounts import tear_down  # noqa: E402
from servers import Server  # noqa: E402
from smallfile_floor import SHAPES  # noqa: E402
from smallfile_measure import Ctx  # noqa: E402
from smallfile_patterns import upload_par  # noqa: E402
from smallfile_report import report  # noqa: E402
from smallfile_session import cleanup_target, run_target, target_order, target_specs  # noqa: E402


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--server", choices=list(SHAPES), default="s3sim-shaped")
    ap.add_argument("--targets", default="bucketfs,s3fs,rclone,rclone-writes,direct",
                    help="in this order; --variant names are added after bucketfs unless listed")
    ap.add_argument("--variant", action="append", default=[], metavar="NAME=OPTIONS",
                    help="a bucketfs mount with extra options, as target NAME "
                    "(--variant async=--async-close; write it with '=')")
    ap.add_argument("--patterns", default="mdtest,chunks,par")
    ap.add_argument("--layouts", default="flat,spread")
    ap.add_argument("--files", type=int, default=500, help="mdtest: files per layout and run")
    ap.add_argument("--file-size", default="64k")
    ap.add_argument("--dirs", type=int, default=16, help="mdtest: directories of the spread layout")
    ap.add_argument("--threads", default="1,8", help="thread counts of mdtest and chunk_read")
    ap.add_argument("--chunks", type=int, default=256)
    ap.add_argument("--chunk-size", default="256k")
    ap.add_argument("--par-files", type=int, default=2000)
    ap.add_argument("--par-size", default="150k")
    ap.add_argument("--par-threads", type=int, default=8)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--bucketfs-bin")
    ap.add_argument("--s3sim-bin")
    ap.add_argument("--autogroup-nice", type=int, metavar="N",
                    help="as bench.py: this autogroup nice value for the server and mounts")
    ap.add_argument("--out", help="results directory (default /tmp/smallfile-bench-SERVER-TIME)")
    a = ap.parse_args(argv)
    a.file_size_bytes = parse_size(a.file_size)
    a.chunk_size_bytes = parse_size(a.chunk_size)
    a.par_size_bytes = parse_size(a.par_size)
    a.thread_list = [int(x) for x in a.threads.split(",") if x]
    a.layout_list = [x for x in a.layouts.split(",") if x]
    a.pattern_list = [x for x in a.patterns.split(",") if x]
    return a


def main(argv=None):
    a = parse_args(argv)
    specs = target_specs(a)
    targets = target_order(a, specs)
    for p in a.pattern_list:
        if p not in ("mdtest", "chunks", "par"):
            sys.exit(f"smallfile_bench: unknown pattern {p}")
    if a.autogroup_nice is not None:
        common.AUTOGROUP_NICE.append(a.autogroup_nice)
    if os.geteuid() != 0:
        log("not root: the page cache cannot be dropped and mounts may fail")
    bins = {"bucketfs": built(a.bucketfs_bin, "mount-tools/bucketfs"),
            "s3sim": built(a.s3sim_bin, "tests/s3sim/s3sim") if a.server != "s3rver" else ""}
    out = a.out or f"/tmp/smallfile-bench-{a.server}-{time.strftime('%Y%m%d-%H%M%S')}"
    os.makedirs(out, exist_ok=True)
    workdir = tempfile.mkdtemp(prefix="smallfile-bench-")
    rows, failures, server = [], [], None
    try:
        try:
            server = Server(a.server, bins["s3sim"])
        except subprocess.CalledProcessError as e:
            sys.exit(f"smallfile_bench: {a.server} did not start: {(e.stderr or '').strip()} "
                     "(s3rver: S3RVER_BIN=/path/to/s3rver, as tests/fixtures/start-server.sh)")
        ctx = Ctx(a, server, bins)
        if "par" in a.pattern_list:
            upload_par(ctx)
        for name in targets:
            log(f"--- target {name}: {specs[name][0]} {' '.join(specs[name][1])}")
            try:
                run_target(ctx, workdir, name, specs[name], rows)
            except Exception as e:  # noqa: BLE001
                # A mount that does not start (an unknown option of a variant),
                # a daemon that dies, an array zarr cannot open: reported, and
                # the next target runs.
                log(f"FAILED target {name}: {traceback.format_exc()}")
                failures.append({"target": name, "options": specs[name][1],
                                 "error": f"{type(e).__name__}: {e}"})
            cleanup_target(ctx, name)
    except KeyboardInterrupt:
        log("interrupted")
        failures.append({"target": "-", "error": "interrupted"})
    finally:
        tear_down(workdir, server, out)
    report(a, targets, specs, bins, rows, failures, out)
    bad = any(r.get("mismatches") or r.get("error_count") for r in rows)
    return 1 if failures or bad else 0


if __name__ == "__main__":
    sys.exit(main())
