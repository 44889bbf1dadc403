"""bench.py on a mount: fio cold (and warm for reads) with the daemon's,
the server's, fio's and the machine's CPU around each run."""
import hashlib
import os
import time

from bench_jobs import JOBS, before_cold_run, fio_timeout, nullfs_opts
from common import GIB, log
from fio_run import fio_run
from mounts import Mount
from procstats import (children_cpu, fio_job_cpu, machine_cpu, machine_figures, proc_cpu,
                       procs_figures, vm_hwm)


def measure_mount(args, server, bins, workdir, job, target, run_id):
    jobfile, kind = JOBS[job]
    m = Mount(target, server, bins, workdir, kind == "write", args.bucketfs_opt,
              nullfs_opts(args), args.size_bytes)
    rows = []
    try:
        env = dict(os.environ, DIR=m.mnt, SIZE=str(args.size_bytes), RUNTIME=str(args.runtime),
                   NRFILES=str(args.small_files // 4), RUN_ID=f"{target}-{run_id}")
        if kind == "write":
            os.makedirs(os.path.join(m.mnt, "write"), exist_ok=True)
        warm_up_daemon(m, args, kind, run_id)
        modes = ["cold", "warm"] if kind == "read" and not args.no_warm else ["cold"]
        for mode in modes:
            warm_rate = before_cold_run(args, job) if mode == "cold" else None
            cpu0, mach0 = proc_cpu(m.pid), machine_cpu()
            server0, fio0 = proc_cpu(server.pid), children_cpu()
            try:
                # fio invalidates its files' page cache before a job unless told
                # not to (invalidate=1 by default), which made "warm" a second cold run.
                extra = ["--invalidate=0"] if mode == "warm" else []
                fj, wall, io_wall, io_end = fio_run(
                    jobfile, env, timeout=fio_timeout(args, job), extra=extra,
                    watch_dir=os.path.join(m.mnt, "write") if kind == "write" else None)
            finally:
                m.check_alive()
            cpu, mach1 = proc_cpu(m.pid) - cpu0, machine_cpu()
            server_cpu, fio_process_cpu = proc_cpu(server.pid) - server0, children_cpu() - fio0
            fio_cpu = fio_job_cpu(fj, fio_process_cpu)
            side = fj["write"] if kind == "write" else fj["read"]
            nbytes = side["io_bytes"]
            # Writes: bytes over the I/O wall time (first job's start to last close), so
            # fsync and close count and fio's start-up and exit do not, as for the direct client.
            mbps = nbytes / io_wall / 1e6 if kind == "write" else side["bw_bytes"] / 1e6
            rows.append({"job": job, "target": target, "mode": mode, "mb_s": mbps,
                         "iops": side.get("iops", 0), "bytes": nbytes, "wall_s": wall,
                         "io_wall_s": io_wall, "io_end": io_end,
                         "cpu_s": cpu, "cpu_s_per_gib": cpu / (nbytes / GIB) if nbytes else None,
                         "lat_p99_ms": side.get("clat_ns", {}).get("percentile", {})
                         .get("99.000000", 0) / 1e6, "prewarm_mb_s": warm_rate,
                         # fio's start-up is not the transfer: off the idle share.
                         **(machine_figures(mach0, mach1, nbytes,
                                            outside_busy_s=max(0.0, fio_process_cpu - fio_cpu),
                                            outside_wall_s=max(0.0, wall - io_wall)) or {}),
                         "fio_cpu_s_process": fio_process_cpu,
                         **procs_figures(cpu + server_cpu + fio_cpu, server_cpu, fio_cpu, nbytes,
                                         nbytes / (mbps * 1e6) if mbps else wall)})
        if args.verify and job == "seq1" and target != "nullfs":  # nullfs: its own test
            rows[0]["verified"] = verify(m.mnt, args)
        m.check_alive()
        hwm = vm_hwm(m.pid)
        for r in rows:
            r["peak_rss_mib"] = hwm / (1 << 20)
    finally:
        m.close()
    return rows


def warm_up_daemon(m, args, kind, run_id):
    """Moves --daemon-warmup bytes through a fresh mount before it is timed.

    A daemon that has been mounted a while has its buffers, threads and
    connections; this gives every mount what the direct client gets by
    pre-faulting its buffers before its timer starts. Reads read another
    object (warm/file; nullfs its last file), so nothing of the timed files
    is cached; writes write and delete write/warmup-*. The page cache is
    dropped after it, before the cold run.
    """
    n = args.daemon_warmup_bytes
    if n <= 0:
        return
    t0 = time.monotonic()
    if kind == "write":
        path = os.path.join(m.mnt, "write", f"warmup-{m.target}-{run_id}")
        chunk = os.urandom(1 << 20)
        with open(path, "wb") as f:
            left = n
            while left > 0:
                left -= f.write(chunk[:min(left, len(chunk))])
        os.unlink(path)
    else:
        rel = os.path.join("seq", "file-7") if m.target == "nullfs" else os.path.join("warm", "file")
        with open(os.path.join(m.mnt, rel), "rb", buffering=0) as f:
            left = n
            while left > 0:
                got = f.read(min(left, 1 << 20))
                if not got:
                    break
                left -= len(got)
    m.check_alive()
    log(f"{m.target}: daemon warm-up of {n} bytes ({kind}) took {time.monotonic() - t0:.1f} s")


def verify(mnt, args):
    """Whole-file compare of seq/file-0 read through the mount with the source."""
    h = hashlib.sha256()
    with open(os.path.join(mnt, "seq", "file-0"), "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    ok = h.hexdigest() == args.source_sha256
    log(f"verify seq/file-0 through the mount: {'OK' if ok else 'MISMATCH'}")
    return ok
