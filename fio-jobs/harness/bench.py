#!/usr/bin/env python3
"""One-command benchmark: fio jobs on bucketfs, s3fs and rclone mount against
one S3 server, next to the direct client (`bucketfs s3 bench`) and nullfs
(tests/nullfs: bucketfs's FUSE settings with no data source, the FUSE ceiling
of the machine).

  fio-jobs/harness/bench.py --server s3sim|s3sim-shaped|s3rver \
      [--jobs seq1,seq8,rand4k,rand1m,small,write1,write4] [--size 1g] \
      [--targets bucketfs,direct,s3fs,rclone,nullfs,base] [--bucketfs-opt=--direct-io ...]
      [--nullfs-opt=--keep-cache ...] [--out DIR]

Per job and target: mount (daemon kept in the foreground so its pid is ours),
drop the page cache, run fio (cold), for reads run it again (warm), read the
daemon's CPU (utime+stime+children from /proc/PID/stat) around each fio run
and its VmHWM before unmounting. The direct target runs the matching
`bucketfs s3 bench` transfer (the CPU it reports for its transfers, as
the daemon's is taken around the fio run only; peak RSS via wait4). Results:
a table on stdout, DIR/results.json, DIR/chart.png (gnuplot). Mounts are
always unmounted (fusermount3 -uz) and the server killed, even on errors.
Python 3 standard library only.
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True  # no __pycache__ in the tree
import common  # noqa: E402
from bench_args import binaries, parse_args  # noqa: E402
from bench_data import prepare, remove_written  # noqa: E402
from bench_direct import measure_direct  # noqa: E402
from bench_jobs import JOBS, nullfs_opts, server_body_pool  # noqa: E402
from bench_mount import measure_mount  # noqa: E402
from bench_report import chart, table  # noqa: E402
from common import boost, log  # noqa: E402
from mounts import tear_down  # noqa: E402
from servers import Server  # noqa: E402


def own_autogroup_nice(args):
    """With --autogroup-nice, boosts the harness's own session and returns
    its previous value (the caller's shell's, put back at the end)."""
    if args.autogroup_nice is None:
        return None
    own = None
    try:
        with open("/proc/self/autogroup") as f:
            own = int(f.read().split()[-1])
    except (OSError, ValueError):
        pass
    common.AUTOGROUP_NICE.append(args.autogroup_nice)
    boost(os.getpid())  # the direct client and the uploads run in the harness's session
    return own


def run_job(args, bins, server, workdir, job, target, rid):
    """One job on one target: its rows, logged as they come."""
    if target == "direct":
        got = measure_direct(args, bins, server, job, rid)
    else:
        got = measure_mount(args, server, bins, workdir, job, target, rid)
    for r in got:
        log(f"{job} {target} {r['mode']}: {r['mb_s']:.1f} MB/s, "
            f"CPU {r['cpu_s_per_gib'] or 0:.2f} s/GiB, with server and client "
            f"{r.get('procs_cpu_s_per_gib') or 0:.2f} s/GiB "
            f"({(r.get('procs_cpu_share') or 0) * 100:.0f}% of the CPUs), machine "
            f"{r.get('machine_cpu_s_per_gib') or 0:.2f} s/GiB, "
            f"idle {(r.get('machine_idle') or 0) * 100:.0f}%")
    return got


def run_all(args, bins, server, workdir, rows, failures):
    """Every job on every target in --targets order; a failed pair is recorded
    and the next one runs."""
    run_id = time.strftime("%H%M%S")
    seen, order = {}, []
    for job in args.job_list:
        for target in args.target_list:
            log(f"--- {job} on {target}")
            # A repeated target writes new keys: fio opens without O_TRUNC, and
            # the same names would make its second run an in-place overwrite.
            rep = seen.get((job, target), 0)
            seen[(job, target)] = rep + 1
            order.append((job, target))
            rid = run_id if rep == 0 else f"{run_id}-{rep}"
            try:
                got = run_job(args, bins, server, workdir, job, target, rid)
                for r in got:
                    r["round"] = rep  # the n-th run of this target for this job
                    r["seq"] = len(order)  # position in the run
                    r["load_avg"] = os.getloadavg()  # the machine is shared: note it per row
                rows += got
            except (RuntimeError, subprocess.TimeoutExpired, OSError, KeyError, ValueError) as e:
                log(f"FAILED {job} on {target}: {e}")
                failures.append({"job": job, "target": target, "error": str(e)})
            if JOBS[job][1] == "write":
                remove_written(bins, server)


def write_results(args, bins, rows, failures, out):
    """The table on stdout and in DIR/table.txt, DIR/results.json, DIR/chart.png."""
    text = table(rows)
    load = os.getloadavg()
    targets = args.target_list
    title = f"bucketfs bench: {args.server}, size {args.size}"
    if args.bucketfs_opt:
        title += f", bucketfs {' '.join(args.bucketfs_opt)}"
    if "nullfs" in targets and nullfs_opts(args):
        title += f", nullfs {' '.join(nullfs_opts(args))}"
    title += f" (load average at the end {load[0]:.2f} {load[1]:.2f} {load[2]:.2f})"
    print(f"\n{title}\n{text}")
    for f in failures:
        print(f"FAILED {f['job']} on {f['target']}: {f['error']}")
    meta = {"server": args.server, "size_bytes": args.size_bytes, "jobs": args.job_list,
            "targets": targets, "runtime_s": args.runtime,
            "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "command": " ".join(sys.argv), "load_avg": load, "bucketfs_opts": args.bucketfs_opt,
            "bucketfs_bin": bins["bucketfs"], "direct_bin": bins["direct"],
            "base_bin": bins["base"] or None,
            "nullfs_opts": nullfs_opts(args) if "nullfs" in targets else None,
            "prewarm": args.prewarm, "autogroup_nice": args.autogroup_nice}
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump({"meta": meta, "results": rows, "failures": failures}, f, indent=1)
    with open(os.path.join(out, "table.txt"), "w") as f:
        f.write(title + "\n" + text + "\n")
    chart(rows, targets, out, title)
    print(f"results: {out}/results.json, {out}/table.txt, {out}/chart.png")


def main():
    args = parse_args(__doc__)
    own_nice = own_autogroup_nice(args)
    if os.geteuid() != 0:
        log("not root: the page cache cannot be dropped (cold runs may be warm)")
    bins = binaries(args)
    out = args.out or f"/tmp/bucketfs-bench-{args.server}-{time.strftime('%Y%m%d-%H%M%S')}"
    os.makedirs(out, exist_ok=True)
    workdir = tempfile.mkdtemp(prefix="bucketfs-bench-")
    rows, failures = [], []
    server = None
    interrupted = False

    def on_signal(signum, _frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_signal)
    try:
        server = Server(args.server, bins["s3sim"], server_body_pool(args, args.job_list))
        prepare(args, bins, server, workdir, args.job_list)
        # The upload's dirty pages would otherwise be written back during the first timed target.
        os.sync()
        run_all(args, bins, server, workdir, rows, failures)
    except KeyboardInterrupt:
        log("interrupted")
        interrupted = True
    finally:
        tear_down(workdir, server, out)
        if own_nice is not None:
            common.AUTOGROUP_NICE[0] = own_nice
            boost(os.getpid())
    write_results(args, bins, rows, failures, out)
    return 1 if failures or interrupted else 0


if __name__ == "__main__":
    sys.exit(main())
