"""bench.py's direct target: the `bucketfs s3 bench` transfer that matches
each fio job, the yardstick of the mounts."""
import json
import os
import subprocess
import time

from bench_jobs import before_cold_run
from common import BUCKET, GIB, log
from procstats import machine_cpu, machine_figures, proc_cpu, procs_figures


def direct_cmd(args, bins, server, job, run_id):
    b = [bins["direct"], "s3", "bench"]
    common = ["--endpoint-url", server.endpoint, "--force-path-style", "--json", "--no-progress"]
    seq = f"s3://{BUCKET}/seq/file"
    size = str(args.size_bytes)
    if job == "seq1":
        return b + ["get", seq + "-0", "--connections", str(args.conns), "--part-size", "8M"] + common
    if job == "seq8":
        return b + ["get", seq, "--objects", "8", "--connections", str(args.conns8),
                    "--part-size", "8M"] + common
    # Random reads run as long as the fio job (--runtime): a short run swings with the machine's load.
    rand = ["--runtime", str(args.runtime)]
    if job == "rand4k":
        return b + ["get-random", seq + "-0", "--block", "4K", "--iodepth", "16",
                    "--count", str(args.rand_count)] + rand + common
    if job == "rand1m":
        return b + ["get-random", seq + "-0", "--block", "1M", "--iodepth", "8",
                    "--count", str(max(64, args.rand_count // 20))] + rand + common
    # Writes: what a bucketfs mount does per file: 16 MiB parts, 4 in flight,
    # each part with x-amz-checksum-crc32c (the mount's default checksum).
    put = ["--connections", "4", "--part-size", "16M", "--checksum", "crc32c"]
    if job == "write1":
        return b + ["put", f"s3://{BUCKET}/write/direct-{run_id}", "--size", size] + put + common
    if job == "write4":
        return b + ["put", f"s3://{BUCKET}/write/direct4-{run_id}", "--objects", "4", "--size", size] \
            + put + common
    return None


def measure_direct(args, bins, server, job, run_id):
    cmd = direct_cmd(args, bins, server, job, run_id)
    if cmd is None:
        return []
    warm_rate = before_cold_run(args, job)
    log("$ " + " ".join(cmd))
    mach0, t0, server0 = machine_cpu(), time.monotonic(), proc_cpu(server.pid)
    p = subprocess.Popen(cmd, env=server.client_env(), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    _, status, ru = os.wait4(p.pid, 0)
    mach1, wall, server_cpu = machine_cpu(), time.monotonic() - t0, proc_cpu(server.pid) - server0
    out, err = p.stdout.read(), p.stderr.read()
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        raise RuntimeError(f"direct client exited {p.returncode}: {err.strip()[-800:]}")
    rep = json.loads(out.strip().splitlines()[-1])
    # The CPU of the transfers themselves, as for the daemon (its CPU during the fio
    # job); the process total, with start-up and pre-faulting, stays in the JSON.
    process_cpu = ru.ru_utime + ru.ru_stime
    cpu = rep.get("cpu_seconds", process_cpu)
    # The machine's figures over the transfers only: the process's time and
    # CPU outside its timer (start-up, HEADs, pre-faulting) are taken off.
    mach = machine_figures(mach0, mach1, rep["bytes"], outside_busy_s=max(0.0, process_cpu - cpu),
                           outside_wall_s=max(0.0, wall - rep["seconds"]))
    return [{"job": job, "target": "direct", "mode": "cold", "mb_s": rep["mb_per_s"],
             "iops": rep.get("iops", 0), "bytes": rep["bytes"], "wall_s": rep["seconds"],
             "cpu_s": cpu, "cpu_s_per_gib": cpu / (rep["bytes"] / GIB),
             "cpu_s_process": process_cpu,
             "peak_rss_mib": ru.ru_maxrss / 1024, "lat_p99_ms": rep.get("lat_p99_ms", 0),
             "connections": rep["connections"], "prewarm_mb_s": warm_rate, **(mach or {}),
             **procs_figures(cpu + server_cpu, server_cpu, 0.0, rep["bytes"], rep["seconds"])}]
