"""CPU and memory of processes and of the machine, from /proc."""
import os

from common import GIB

TICK = os.sysconf("SC_CLK_TCK")


def proc_cpu(pid):
    """utime+stime+cutime+cstime of pid and its live children, in seconds."""
    total = 0.0
    for p in [pid] + children(pid):
        try:
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += sum(int(x) for x in fields[11:15]) / TICK
        except OSError:
            pass
    return total


def children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def vm_hwm(pid):
    best = 0
    for p in [pid] + children(pid):
        try:
            with open(f"/proc/{p}/status") as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        best = max(best, int(line.split()[1]) * 1024)
        except OSError:
            pass
    return best


def machine_cpu():
    """Jiffies of all CPUs together from /proc/stat's "cpu" line: a dict of
    busy (user, nice, system, irq, softirq), idle (idle, iowait), steal and
    total (the three). guest time is already inside user and nice."""
    with open("/proc/stat") as f:
        return parse_proc_stat(f.readline())


def parse_proc_stat(line):
    fields = line.split()
    if not fields or fields[0] != "cpu":
        raise ValueError(f"not the cpu line of /proc/stat: {line!r}")
    v = [int(x) for x in fields[1:9]] + [0] * (9 - len(fields))
    user, nice, system, idle, iowait, irq, softirq, steal = v[:8]
    busy = user + nice + system + irq + softirq
    return {"busy": busy, "idle": idle + iowait, "steal": steal,
            "total": busy + idle + iowait + steal}


def children_cpu():
    """CPU seconds (user + system) of this process's reaped children: around
    a fio run, fio's own (it reaps its workers)."""
    import resource
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def machine_figures(before, after, nbytes, outside_busy_s=0.0, outside_wall_s=0.0):
    """The whole machine over a run, from two machine_cpu() samples: busy CPU
    seconds per GiB moved (every process: server, daemon, fio, kernel
    threads, and whatever else runs on the shared VM) and the idle share of
    all CPUs (idle + iowait over all jiffies).

    outside_busy_s / outside_wall_s: a part of the interval that is not the
    transfer (the direct client's start-up and buffer pre-faulting, outside
    its timer): its busy seconds are taken off, and its wall time on every
    CPU less those busy seconds off the idle jiffies (the rest of the machine
    is taken as idle then). Returns None when nothing moved."""
    ncpu = os.cpu_count() or 1
    d = {k: after[k] - before[k] for k in ("busy", "idle", "steal", "total")}
    busy = max(0.0, d["busy"] / TICK - outside_busy_s)
    idle_out = max(0.0, ncpu * outside_wall_s - outside_busy_s)
    idle = max(0.0, d["idle"] / TICK - idle_out)
    total = max(0.0, d["total"] / TICK - ncpu * outside_wall_s)
    if not nbytes or total <= 0:
        return None
    return {"machine_cpu_s": busy, "machine_cpu_s_per_gib": busy / (nbytes / GIB),
            "machine_idle": min(1.0, idle / total), "machine_steal": d["steal"] / TICK / total}


def fio_job_cpu(fj, fallback):
    """CPU seconds of fio's jobs while they ran (usr_cpu and sys_cpu are
    percentages of job_runtime, summed over the jobs with group_reporting),
    without fio's start-up (parsing, forking, laying out and invalidating the
    files); `fallback` (the process's rusage) when fio did not report them."""
    try:
        return (fj["usr_cpu"] + fj["sys_cpu"]) / 100 * fj["job_runtime"] / 1000
    except (KeyError, TypeError):
        return fallback


def procs_figures(cpu_s, server_cpu_s, client_cpu_s, nbytes, wall_s):
    """The benchmark's own processes over a run: server + daemon (or direct
    client) + fio CPU seconds per GiB, and the share of the machine's CPUs
    they held over the transfer time (wall_s: bytes over the measured rate;
    about 1.0: the run had the machine to itself and was CPU-bound; far below
    it with an idle share near 0: other work on the VM took the rest)."""
    if not nbytes:
        return {}
    return {"procs_cpu_s": cpu_s, "procs_cpu_s_per_gib": cpu_s / (nbytes / GIB),
            "server_cpu_s": server_cpu_s, "client_cpu_s": client_cpu_s,
            "procs_cpu_share": cpu_s / wall_s / (os.cpu_count() or 1) if wall_s else None}
