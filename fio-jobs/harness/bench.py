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
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from close_watch import CloseWatch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
JOBDIR = os.path.join(ROOT, "fio-jobs")
BUCKET = "bench"
TICK = os.sysconf("SC_CLK_TCK")
GIB = 1 << 30

# job name -> fio file, kind, direct-client equivalent (built in direct_cmd).
JOBS = {
    "seq1": ("read/seq_read_1t_1m_1g.fio", "read"),
    "seq8": ("read/seq_read_8t_1m_1g.fio", "read"),
    "rand4k": ("read/rand_read_4k_4t_qd4.fio", "read"),
    "rand1m": ("read/rand_read_1m_4t_qd2.fio", "read"),
    "small": ("read/small_files_128k_shuffled.fio", "read"),
    "write1": ("write/seq_write_1t_1m_1g.fio", "write"),
    "write4": ("write/seq_write_4t_1m_1g.fio", "write"),
}


AUTOGROUP_NICE = []  # [n] with --autogroup-nice


def boost(pid):
    """With --autogroup-nice, sets the nice value of pid's session group.

    With kernel.sched_autogroup_enabled=1 the scheduler first shares the CPU
    between sessions, and a process's nice value only counts inside its own
    session: a `nice -n 19` build started from another shell gets as much CPU
    as the benchmark's daemon, fio or server, each in its own session (measured
    here: two CPU-bound loops in two sessions, nice 0 and nice 19, got 48.6%
    each of one core; cc1plus had half of the samples of a seq8 profile)."""
    if not AUTOGROUP_NICE:
        return
    try:
        with open(f"/proc/{pid}/autogroup", "w") as f:
            f.write(f"{AUTOGROUP_NICE[0]}\n")
    except OSError as e:
        log(f"cannot set the autogroup nice of pid {pid}: {e}")


def log(msg):
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def parse_size(s):
    s = s.strip().lower()
    for suffix in ("ib", "b"):
        if s.endswith(suffix) and not s[:-len(suffix)].isdigit():
            s = s[:-len(suffix)]
            break
    mult = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
    if s and s[-1] in mult:
        return int(float(s[:-1]) * mult[s[-1]])
    return int(s)


def find_bin(explicit, candidates):
    if explicit:
        return explicit
    found = [c for c in candidates if os.path.isfile(c) and os.access(c, os.X_OK)]
    if not found:
        sys.exit(f"bench: none of {candidates} is built")
    return max(found, key=os.path.getmtime)


# ---------------------------------------------------------------- server ---


def s3sim_knows(s3sim_bin, flag):
    """Whether this s3sim has `flag` (--s3sim-bin may be an older build)."""
    r = subprocess.run([s3sim_bin, "--help"], capture_output=True, text=True)
    return flag in r.stdout + r.stderr


def server_body_pool(args, jobs):
    """s3sim's --body-pool for this run: what the largest write job uploads,
    plus 1 GiB. s3sim keeps the buffers of deleted uploads for the next ones
    (fresh memory is zeroed, and on these VMs faulted from the host: 2.5-5.9
    server CPU-s per GiB, which made write figures depend on which target got
    recycled memory); 0 (s3sim's default) when no write job runs."""
    writes = [job_bytes(args, j) for j in jobs if JOBS[j][1] == "write"]
    return max(writes) + GIB if writes else 0



class Server:
    def __init__(self, kind, s3sim_bin, body_pool=0):
        self.kind = kind
        self.env = {}
        base = "s3rver" if kind == "s3rver" else "s3sim"
        args = ["bash", os.path.join(ROOT, "tests/fixtures/start-server.sh"), base, "--bucket", BUCKET]
        if kind == "s3sim-shaped":
            args += ["--ttfb-ms", "20", "--conn-mbps", "100"]
        if base == "s3sim" and body_pool and s3sim_knows(s3sim_bin, "--body-pool"):
            args += ["--body-pool", str(body_pool)]
        env = dict(os.environ, S3SIM_BIN=s3sim_bin)
        out = subprocess.run(args, env=env, check=True, capture_output=True, text=True).stdout
        for line in out.splitlines():
            if line.startswith("export ") and "=" in line:
                k, v = line[len("export "):].split("=", 1)
                self.env[k] = v
        self.endpoint = self.env["S3_ENDPOINT"]
        self.pid = int(self.env["S3_SERVER_PID"])
        boost(self.pid)
        log(f"{kind} at {self.endpoint} (pid {self.pid})")

    def stop(self):
        try:
            os.killpg(self.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        except PermissionError:
            os.kill(self.pid, signal.SIGTERM)
        time.sleep(0.5)
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        shutil.rmtree(self.env.get("S3_SERVER_DIR", "/nonexistent"), ignore_errors=True)

    def client_env(self):
        env = dict(os.environ)
        env.update(self.env)
        return env


# ------------------------------------------------------------- utilities ---


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
    files: ~0.25 s, a quarter of a seq1 run's client CPU); `fallback` (the
    process's rusage) when fio did not report them."""
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


def drop_caches():
    os.sync()
    try:
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
        return True
    except OSError as e:
        log(f"cannot drop the page cache ({e}); cold runs are not cold")
        return False


MADV_POPULATE_WRITE = 23  # linux/mman.h; Python's mmap module does not name it


def prewarm(nbytes):
    """Maps, writes and frees nbytes of anonymous memory (huge pages) right
    before a timed run, and returns the rate (MB/s) at which it was written.

    This VM hands free memory back to its host (virtio-balloon free-page
    reporting): memory freed a few seconds ago is written at ~20 GB/s, memory
    freed 20-40 s ago at ~300-400 MB/s, as the host backs it again. drop_caches
    frees every page-cache page, and the pages a cold read then fills come from
    that pool: a target that ran slower, or first after the upload, filled
    colder pages (the kernel's copy into them is charged to the daemon's
    writev). Writing the memory just before the run makes every target start
    from warm memory; the rate shows how cold it was."""
    # In a child: in the harness itself the mapping would raise its VmHWM,
    # which every later child inherits (the direct client's peak RSS).
    code = f"""
import mmap
m = mmap.mmap(-1, {nbytes})
m.madvise(mmap.MADV_HUGEPAGE)
try:
    m.madvise({MADV_POPULATE_WRITE})
except OSError:  # kernels before 5.14: touch one byte per page
    for off in range(0, {nbytes}, 4096):
        m[off] = 1
"""
    t0 = time.monotonic()
    subprocess.run([sys.executable, "-c", code], check=True)
    return nbytes / (time.monotonic() - t0) / 1e6


def job_bytes(args, job):
    files = {"seq8": 8, "write4": 4, "small": 0}.get(job, 1)
    return files * args.size_bytes + (args.small_files << 17 if job == "small" else 0)


def prewarm_bytes(args, job):
    """What a cold run fills: reads, the job's bytes of page cache plus 1 GiB
    (daemon buffers). Writes fill the server's memory: s3sim holds every part
    it receives (the job's bytes; an s3sim from before session 16 copied them
    into a new buffer at CompleteMultipartUpload, another job's bytes) and
    s3rver the page cache of its files; twice the job's bytes plus 1 GiB
    covers both, and the writer's buffers."""
    n = job_bytes(args, job)
    return (2 * n if JOBS[job][1] == "write" else n) + GIB


def before_cold_run(args, job):
    """drop_caches, then with --prewarm write the memory the run will fill."""
    drop_caches()
    if not args.prewarm:
        return None
    with open("/proc/meminfo") as f:
        avail = next(int(line.split()[1]) << 10 for line in f if line.startswith("MemAvailable:"))
    n = max(0, min(prewarm_bytes(args, job), avail - GIB))  # leaving 1 GiB free
    rate = prewarm(n) if n else None
    if rate:
        log(f"prewarmed {n >> 20} MiB at {rate:.0f} MB/s")
    return rate


def is_mounted(path):
    path = os.path.realpath(path)
    with open("/proc/mounts") as f:
        return any(line.split()[1] == path for line in f)


def run(cmd, env=None, timeout=None, check=True):
    log("$ " + " ".join(cmd))
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    if check and r.returncode != 0:
        raise RuntimeError(f"{cmd[0]} exited {r.returncode}: {r.stderr.strip()[-2000:]}")
    return r


# --------------------------------------------------------------- targets ---


class Mount:
    """A FUSE daemon in the foreground: bucketfs, s3fs, rclone or nullfs."""

    def __init__(self, target, server, bins, workdir, write, bucketfs_opts=(), nullfs_opts=(),
                 size=1 << 30, rclone_opts=("--vfs-cache-mode", "off"), label=None):
        """label names the mount directory and log (default: target), so that
        variants of one daemon (smallfile_bench.py) keep their logs apart."""
        self.target = target
        label = label or target
        self.mnt = tempfile.mkdtemp(prefix=f"mnt-{label}-", dir=workdir)
        self.log_path = os.path.join(workdir, f"{label}-daemon.log")
        env = server.client_env()
        ep = server.endpoint
        if target in ("bucketfs", "base"):  # base: the same mount with --base-bin
            cmd = [bins[target], f"s3://{BUCKET}", self.mnt, "--endpoint-url", ep,
                   "--force-path-style", "-f", "--allow-delete", "--allow-overwrite",
                   "--log-level", "warn", *bucketfs_opts]
        elif target == "s3fs":
            pw = os.path.join(workdir, "s3fs.passwd")
            with open(os.open(pw, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as f:
                f.write(f"{env['AWS_ACCESS_KEY_ID']}:{env['AWS_SECRET_ACCESS_KEY']}\n")
            cmd = ["s3fs", BUCKET, self.mnt, "-f", "-o", f"url={ep}", "-o", "use_path_request_style",
                   "-o", f"passwd_file={pw}", "-o", "endpoint=us-east-1"]
        elif target == "rclone":
            env.pop("AWS_CA_BUNDLE", None)
            env.update({
                "RCLONE_CONFIG_S3_TYPE": "s3", "RCLONE_CONFIG_S3_PROVIDER": "Other",
                "RCLONE_CONFIG_S3_ENDPOINT": ep,
                "RCLONE_CONFIG_S3_ACCESS_KEY_ID": env["AWS_ACCESS_KEY_ID"],
                "RCLONE_CONFIG_S3_SECRET_ACCESS_KEY": env["AWS_SECRET_ACCESS_KEY"],
                "RCLONE_CONFIG_S3_REGION": "us-east-1", "RCLONE_CONFIG_S3_FORCE_PATH_STYLE": "true",
            })
            # off (the default here): reads and writes stream; "writes" would
            # upload after close, so a fio figure would measure the local disk.
            cmd = ["rclone", "mount", f"s3:{BUCKET}", self.mnt, *rclone_opts]
        elif target == "nullfs":
            # The jobs' layout (seq/file-0..7, write/) with no server behind it.
            cmd = [bins["nullfs"], self.mnt, "--files", "8", "--size", str(size), *nullfs_opts]
        else:
            raise ValueError(target)
        log("$ " + " ".join(cmd))
        self.logf = open(self.log_path, "ab")
        self.proc = subprocess.Popen(cmd, env=env, stdout=self.logf, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        deadline = time.time() + 30
        while not is_mounted(self.mnt):
            if self.proc.poll() is not None:
                raise RuntimeError(f"{target} exited {self.proc.returncode} before mounting; "
                                   f"log: {tail(self.log_path)}")
            if time.time() > deadline:
                raise RuntimeError(f"{target} did not mount within 30 s; log: {tail(self.log_path)}")
            time.sleep(0.1)
        self.pid = self.proc.pid
        boost(self.pid)

    def check_alive(self):
        """Raises if the daemon died under the workload (crash, abort)."""
        if self.proc.poll() is not None:
            rc = self.proc.returncode
            why = f"signal {signal.Signals(-rc).name}" if rc < 0 else f"status {rc}"
            raise RuntimeError(f"{self.target} daemon (pid {self.pid}) died with {why}; "
                               f"log tail: {tail(self.log_path, 600)}")

    def close(self):
        if is_mounted(self.mnt):
            subprocess.run(["fusermount3", "-uz", self.mnt], capture_output=True)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            log(f"{self.target} did not exit after unmount; killing pid {self.proc.pid}")
            self.proc.kill()
            self.proc.wait()
        self.logf.close()
        try:
            os.rmdir(self.mnt)
        except OSError:
            pass


def tail(path, n=1500):
    try:
        with open(path, "rb") as f:
            return f.read()[-n:].decode(errors="replace").strip()
    except OSError:
        return ""


def stamped_jobfile(jobfile, stamp):
    """A copy of the job file (next to `stamp`) whose jobs each append the
    time (ns since the epoch) to `stamp` when they start (exec_prerun runs
    before a job opens its files). fio's own start-up (parsing, forking,
    shared memory: ~0.3 s here, 0.44 s of fio's 0.48 s wall on a 256 MiB
    tmpfs write) comes before it."""
    with open(os.path.join(JOBDIR, jobfile)) as f:
        text = f.read()
    line = f"exec_prerun=sh -c 'date +%s%N >> {stamp}'\n"
    if "[global]\n" in text:
        text = text.replace("[global]\n", "[global]\n" + line, 1)
    else:
        text = "[global]\n" + line + text
    path = stamp + ".fio"
    with open(path, "w") as f:
        f.write(text)
    return path


def fio_run(jobfile, env, timeout, extra=(), watch_dir=None):
    """Runs a job file; returns fio's first job report, the wall time of the
    fio process, the I/O wall time and what ended it. The I/O wall time runs
    from the first job's start (after fio's start-up) to the last close of a
    file written in `watch_dir` ("close": fsync and close are inside, fio's
    exit is not; see close_watch.py), or to fio's exit ("exit") when no
    directory is given or no close was seen."""
    t0 = time.monotonic()
    watch = CloseWatch(watch_dir).start() if watch_dir else None
    stampdir = tempfile.mkdtemp(prefix="fio-stamp-")
    stamp = os.path.join(stampdir, "start")
    cmd = ["fio", "--output-format=json", *extra, stamped_jobfile(jobfile, stamp)]
    log("$ " + " ".join(cmd) + f"   (timeout {timeout:.0f} s)")
    # Own process group: on a timeout every fio worker is killed, not only the parent.
    # cwd: fio saves each job's prerun output as JOB.prerun.txt there.
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True, cwd=stampdir)
    boost(p.pid)
    try:
        out, err = p.communicate(timeout=timeout)
    except BaseException:
        os.killpg(p.pid, signal.SIGKILL)
        try:  # workers blocked in a FUSE request only go once the daemon is gone
            p.communicate(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        raise
    finally:
        exit_ns = time.time_ns()
        if watch:
            watch.stop()
    r = subprocess.CompletedProcess(cmd, p.returncode, out, err)
    wall = time.monotonic() - t0
    end_ns, end_by = exit_ns, "exit"
    try:
        with open(stamp) as f:
            starts = [int(x) for x in f.read().split()]
    except (OSError, ValueError):
        starts = []
    shutil.rmtree(stampdir, ignore_errors=True)
    closed_ns = watch.last_close_ns() if watch else None
    if closed_ns and starts and min(starts) < closed_ns <= end_ns:
        end_ns, end_by = closed_ns, "close"
    io_wall = (end_ns - min(starts)) / 1e9 if starts else wall
    io_wall = min(wall, io_wall) if io_wall > 0 else wall
    if end_by == "close":
        log(f"fio: files closed {(exit_ns - end_ns) / 1e6:.1f} ms before fio's exit")
    text = r.stdout[r.stdout.find("{"):] if "{" in r.stdout else ""
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if r.returncode != 0 or not data:
        # fio prints its own complaint on stderr ("fio: io_u error on file ...").
        errs = [f"job error {j.get('error')} ({os.strerror(j.get('error'))})"
                for j in (data or {}).get("jobs", []) if j.get("error")]
        raise RuntimeError(f"fio exited {r.returncode}: {'; '.join(errs)} "
                           f"{r.stderr.strip()[-800:]}")
    return data["jobs"][0], wall, io_wall, end_by


def fio_timeout(args, job):
    """--timeout, or generous: the job's bytes at 2 MB/s plus its runtime plus 3 minutes."""
    if args.timeout:
        return args.timeout
    return 180 + args.runtime + job_bytes(args, job) / 2e6


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
            # Writes: bytes over the I/O wall time (from the first job's
            # start to the last close of its files), so fsync and close are
            # inside the figure and fio's ~0.3 s start-up and ~35 ms exit are
            # not (the direct client's timer leaves its start-up and exit out too).
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

    A daemon that has been mounted for a while has its buffers (bucketfs's
    pool keeps 256 MiB), threads and connections; one started a second ago
    has none, and on these VMs first touch of fresh memory runs at ~160 MB/s
    (free-page reporting), so a just-started daemon's first GiB measured its
    page faults. The direct client pre-faults its buffers before its timer
    starts; this gives every mount (bucketfs, s3fs, rclone, nullfs) the same
    chance. Reads read another object (warm/file; nullfs its last file), so
    nothing of the timed files is cached by anyone; writes write and delete
    write/warmup-*. The page cache is dropped after it, before the cold run.
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


def nullfs_opts(args):
    """nullfs follows bucketfs's --direct-io (same FUSE open flags), plus --nullfs-opt."""
    return (["--direct-io"] if "--direct-io" in args.bucketfs_opt else []) + args.nullfs_opt


def verify(mnt, args):
    """Whole-file compare of seq/file-0 read through the mount with the source."""
    import hashlib
    h = hashlib.sha256()
    with open(os.path.join(mnt, "seq", "file-0"), "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    ok = h.hexdigest() == args.source_sha256
    log(f"verify seq/file-0 through the mount: {'OK' if ok else 'MISMATCH'}")
    return ok


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
    # Random reads run as long as the fio job (--runtime): a run of a few
    # thousand GETs lasted 0.25 s and swung with the machine's load of that
    # moment (6,700 to 15,800 IOPS at 3,000 to 40,000 GETs), fio's 10 s did not.
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
    # The CPU of the transfers themselves, as for the daemon (its CPU during
    # the fio job): the process total also counts start-up, the HEADs and
    # pre-faulting the client's buffers (128 MiB for seq1, touched fresh at
    # ~160 MB/s on these VMs), which made the direct client look up to 2x
    # costlier per GiB than it is. The process total stays in the JSON.
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


# ------------------------------------------------------------- data set ---


def write_random_file(path, nbytes):
    """Writes nbytes of random bytes to path; returns their SHA-256 (hex)."""
    import hashlib
    h = hashlib.sha256()
    with open(path, "wb") as f:
        left = nbytes
        while left:
            chunk = os.urandom(min(left, 8 << 20))
            h.update(chunk)
            f.write(chunk)
            left -= len(chunk)
    return h.hexdigest()


def put_object(bins, server, env, src, key):
    run([bins["bucketfs"], "s3", "put", src, f"s3://{BUCKET}/{key}",
         "--endpoint-url", server.endpoint, "--force-path-style", "--no-progress"], env=env)


def remove_written(bins, server):
    """Deletes write/ after a write run: s3sim keeps objects in memory, and
    4 GiB a write4 run filled 24 GiB after a few alternations."""
    r = subprocess.run([bins["direct"], "s3", "rm", "-r", "-q", f"s3://{BUCKET}/write/",
                        "--endpoint-url", server.endpoint, "--force-path-style"],
                       env=server.client_env(), capture_output=True, text=True)
    if r.returncode != 0:
        log(f"removing write/ failed: {r.stderr.strip()[-300:]}")


def warm_server_uploads(args, bins, server, nbytes):
    """Uploads and deletes nbytes (16 MiB parts) before the first write run,
    so that s3sim's body pool holds warm buffers for it: without this the
    first target measured paid the server's fresh memory, later ones did not."""
    objects = max(1, nbytes // args.size_bytes)
    t0 = time.monotonic()
    run([bins["direct"], "s3", "bench", "put", f"s3://{BUCKET}/write/server-warmup",
         "--objects", str(objects), "--size", str(args.size_bytes), "--connections", "4",
         "--part-size", "16M", "--endpoint-url", server.endpoint, "--force-path-style",
         "--no-progress"], env=server.client_env())
    remove_written(bins, server)
    log(f"server warm-up: {objects} x {args.size_bytes} bytes uploaded and deleted in "
        f"{time.monotonic() - t0:.1f} s")


def prepare(args, bins, server, workdir, jobs):
    env = server.client_env()
    src = os.path.join(workdir, "source.bin")
    need_seq = any(j in jobs for j in ("seq1", "seq8", "rand4k", "rand1m"))
    if need_seq:
        log(f"writing {args.size_bytes} random bytes to {src}")
        args.source_sha256 = write_random_file(src, args.size_bytes)
        count = 8 if "seq8" in jobs else 1
        t0 = time.monotonic()
        for i in range(count):
            put_object(bins, server, env, src, f"seq/file-{i}")
        log(f"uploaded {count} x {args.size_bytes} bytes in {time.monotonic() - t0:.1f} s")
        os.unlink(src)
    writes = [job_bytes(args, j) for j in jobs if JOBS[j][1] == "write"]
    if writes and server.kind != "s3rver":
        warm_server_uploads(args, bins, server, max(writes))
    mounts = any(t in ("bucketfs", "base", "s3fs", "rclone") for t in args.target_list)
    if args.daemon_warmup_bytes > 0 and mounts and any(JOBS[j][1] == "read" for j in jobs):
        warm = os.path.join(workdir, "warm.bin")
        write_random_file(warm, args.daemon_warmup_bytes)
        put_object(bins, server, env, warm, "warm/file")
        os.unlink(warm)
    if "small" in jobs:
        d = os.path.join(workdir, "small")
        os.makedirs(d)
        per_job = args.small_files // 4
        for j in range(4):
            for n in range(per_job):
                with open(os.path.join(d, f"f-{j}-{n}"), "wb") as f:
                    f.write(os.urandom(128 << 10))
        renv = dict(env)
        renv.pop("AWS_CA_BUNDLE", None)
        renv.update({"RCLONE_CONFIG_S3_TYPE": "s3", "RCLONE_CONFIG_S3_PROVIDER": "Other",
                     "RCLONE_CONFIG_S3_ENDPOINT": server.endpoint,
                     "RCLONE_CONFIG_S3_ACCESS_KEY_ID": env["AWS_ACCESS_KEY_ID"],
                     "RCLONE_CONFIG_S3_SECRET_ACCESS_KEY": env["AWS_SECRET_ACCESS_KEY"],
                     "RCLONE_CONFIG_S3_FORCE_PATH_STYLE": "true"})
        run(["rclone", "copy", d, f"s3:{BUCKET}/small", "--transfers", "16"], env=renv)
        shutil.rmtree(d)


# --------------------------------------------------------------- output ---


def table(rows):
    """bucketfs rows also carry their ratio to s3fs, rclone and nullfs (same job and mode).

    With a repeated target (--targets bucketfs,direct,direct,bucketfs) the
    n-th run of each target of a job is its round n: x direct compares a row
    with the direct run of its round (else the job's last direct run), and
    each job with more than one round gets a line of bucketfs / direct per
    round and of their sums, so an order effect shows as rounds that
    disagree."""
    direct = {r["job"]: r for r in rows if r["target"] == "direct"}
    direct_round = {(r["job"], r.get("round", 0)): r for r in rows if r["target"] == "direct"}
    peers = {(r["job"], r["target"], r["mode"]): r for r in rows
             if r["target"] in ("s3fs", "rclone", "nullfs")}
    hdr = f"{'job':<7} {'target':<9} {'mode':<5} {'MB/s':>9} {'IOPS':>9} {'x direct':>8} " \
          f"{'x s3fs':>7} {'x rclone':>8} {'x nullfs':>8} {'CPU s/GiB':>9} {'all s/GiB':>9} " \
          f"{'mach s/GiB':>10} {'idle':>5} {'peak RSS MiB':>12}"
    lines = [hdr, "-" * len(hdr)]

    def fmt(v, width):
        return f"{(f'{v:.2f}' if v else '-'):>{width}}"

    for r in rows:
        d = direct_round.get((r["job"], r.get("round", 0)), direct.get(r["job"]))
        ratio = r["mb_s"] / d["mb_s"] if d and d["mb_s"] else None
        r["ratio_to_direct"] = ratio
        vs = {}
        if r["target"] == "bucketfs":
            for peer in ("s3fs", "rclone", "nullfs"):
                p = peers.get((r["job"], peer, r["mode"]))
                vs[peer] = r["mb_s"] / p["mb_s"] if p and p["mb_s"] else None
                r[f"ratio_to_{peer}"] = vs[peer]
        iops = f"{r['iops']:.0f}" if r.get("iops") else "-"
        cpu = f"{r['cpu_s_per_gib']:.2f}" if r.get("cpu_s_per_gib") is not None else "-"
        mcpu = f"{r['machine_cpu_s_per_gib']:.2f}" if r.get("machine_cpu_s_per_gib") is not None \
            else "-"
        idle = f"{r['machine_idle'] * 100:.0f}%" if r.get("machine_idle") is not None else "-"
        procs = f"{r['procs_cpu_s_per_gib']:.2f}" if r.get("procs_cpu_s_per_gib") is not None \
            else "-"
        mark = "" if r.get("verified", True) else "  DATA MISMATCH"
        lines.append(f"{r['job']:<7} {r['target']:<9} {r['mode']:<5} {r['mb_s']:>9.1f} {iops:>9} "
                     f"{fmt(ratio, 8)} {fmt(vs.get('s3fs'), 7)} {fmt(vs.get('rclone'), 8)} "
                     f"{fmt(vs.get('nullfs'), 8)} {cpu:>9} {procs:>9} {mcpu:>10} {idle:>5} "
                     f"{r.get('peak_rss_mib', 0):>12.0f}{mark}")
    for job, mode, mount in [(j, m, t) for j in dict.fromkeys(r["job"] for r in rows)
                             for t in ("bucketfs", "base") for m in ("cold", "warm")]:
        b = [r for r in rows if (r["job"], r["mode"], r["target"]) == (job, mode, mount)]
        d = [r for r in rows if (r["job"], r["mode"], r["target"]) == (job, "cold", "direct")]
        if len(b) < 2 and len(d) < 2 or not b or not d:
            continue
        d_of = {r.get("round", 0): r for r in d}
        per = []
        for r in b:
            rd = d_of.get(r.get("round", 0))
            if rd and rd["mb_s"]:
                first = mount if r["seq"] < rd["seq"] else "direct"
                per.append(f"round {r.get('round', 0)} ({first} first) {r['mb_s'] / rd['mb_s']:.2f}")
        pooled = sum(r["mb_s"] for r in b) / len(b) / (sum(r["mb_s"] for r in d) / len(d))
        lines.append(f"{job} {mode}: {mount} / direct {'; '.join(per)}; "
                     f"mean over rounds {pooled:.2f}")
    return "\n".join(lines)


def chart(rows, targets, out, title):
    if not rows:
        return
    if not shutil.which("gnuplot"):
        log("gnuplot not found: no chart")
        return
    keys = []
    for r in rows:
        k = f"{r['job']}-{r['mode']}"
        if k not in keys:
            keys.append(k)
    dat = os.path.join(out, "chart.dat")
    with open(dat, "w") as f:
        f.write("# case " + " ".join(targets) + "\n")
        for k in keys:
            vals = []
            for t in targets:
                v = [r["mb_s"] for r in rows if f"{r['job']}-{r['mode']}" == k and r["target"] == t]
                vals.append(f"{v[0]:.1f}" if v else "0")
            f.write(k + " " + " ".join(vals) + "\n")
    plot = ", ".join(f"'{dat}' using {i + 2}:xtic(1) title '{t}'" for i, t in enumerate(targets))
    script = f"""set terminal pngcairo size 1200,600 noenhanced
set output '{os.path.join(out, "chart.png")}'
set title '{title}'
set ylabel 'MB/s'
set style data histogram
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set key top right
set grid ytics
set xtics rotate by -30
plot {plot}
"""
    sp = os.path.join(out, "chart.gp")
    with open(sp, "w") as f:
        f.write(script)
    r = subprocess.run(["gnuplot", sp], capture_output=True, text=True)
    if r.returncode != 0 and "pngcairo" in r.stderr:
        script = script.replace("pngcairo", "png")
        with open(sp, "w") as f:
            f.write(script)
        r = subprocess.run(["gnuplot", sp], capture_output=True, text=True)
    if r.returncode != 0:
        log(f"gnuplot failed: {r.stderr.strip()}")


# ----------------------------------------------------------------- main ---


def tear_down(workdir, server, out):
    """Unmounts what is left under workdir, stops the server, keeps the daemons' logs in out."""
    with open("/proc/mounts") as f:
        for line in f:
            mp = line.split()[1]
            if mp.startswith(workdir):
                subprocess.run(["fusermount3", "-uz", mp], capture_output=True)
    if server:
        server.stop()
    for name in os.listdir(workdir) if os.path.isdir(workdir) else []:
        if name.endswith("-daemon.log"):
            shutil.copy(os.path.join(workdir, name), out)
    shutil.rmtree(workdir, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
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
    args = ap.parse_args()
    args.size_bytes = parse_size(args.size)
    args.daemon_warmup_bytes = parse_size(args.daemon_warmup) if args.daemon_warmup != "0" else 0
    own_nice = None
    if args.autogroup_nice is not None:
        # The harness's session is the caller's shell's: its value is put back at the end.
        try:
            with open("/proc/self/autogroup") as f:
                own_nice = int(f.read().split()[-1])
        except (OSError, ValueError):
            pass
        AUTOGROUP_NICE.append(args.autogroup_nice)
        boost(os.getpid())  # the direct client and the uploads run in the harness's session
    jobs = [j for j in args.jobs.split(",") if j]
    targets = [t for t in args.targets.split(",") if t]
    args.target_list = targets
    for j in jobs:
        if j not in JOBS:
            sys.exit(f"bench: unknown job {j} (known: {','.join(JOBS)})")
    for t in targets:
        if t not in ("bucketfs", "base", "direct", "s3fs", "rclone", "nullfs"):
            sys.exit(f"bench: unknown target {t}")
    if "base" in targets and not args.base_bin:
        sys.exit("bench: target base needs --base-bin")
    if os.geteuid() != 0:
        log("not root: the page cache cannot be dropped (cold runs may be warm)")
    bins = {
        "bucketfs": find_bin(args.bucketfs_bin, [os.path.join(ROOT, d, "mount-tools/bucketfs") for d in
                                                 ("build-harness", "build/release", "build")]),
        "s3sim": find_bin(args.s3sim_bin, [os.path.join(ROOT, d, "tests/s3sim/s3sim") for d in
                                           ("build-harness", "build/release", "build")])
        if args.server != "s3rver" else "",
        "nullfs": find_bin(args.nullfs_bin, [os.path.join(ROOT, d, "tests/nullfs/nullfs") for d in
                                             ("build-harness", "build/release", "build")])
        if "nullfs" in targets else "",
    }
    bins["direct"] = args.direct_bin or bins["bucketfs"]
    bins["base"] = args.base_bin or ""
    run_id = time.strftime("%H%M%S")
    out = args.out or f"/tmp/bucketfs-bench-{args.server}-{time.strftime('%Y%m%d-%H%M%S')}"
    os.makedirs(out, exist_ok=True)
    workdir = tempfile.mkdtemp(prefix="bucketfs-bench-")
    rows, failures = [], []
    server = None
    stop = {"flag": False}

    def on_signal(signum, _frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_signal)
    try:
        server = Server(args.server, bins["s3sim"], server_body_pool(args, jobs))
        prepare(args, bins, server, workdir, jobs)
        # The upload leaves dirty pages (s3rver's object files, the deleted
        # source): written back during the first timed target, they slowed
        # whichever target came first, always bucketfs (seq1 helper, stop 13).
        os.sync()
        seen, seen_order = {}, []
        for job in jobs:
            for target in targets:
                log(f"--- {job} on {target}")
                # A repeated target writes new keys: fio opens without O_TRUNC,
                # so the same names made bucketfs's second run an in-place
                # overwrite of 1 GiB objects (each part fetched first, ~4 CPU
                # s/GiB), and s3sim reused the replaced objects' warm memory.
                rep = seen.get((job, target), 0)
                seen[(job, target)] = rep + 1
                seen_order.append((job, target))
                rid = run_id if rep == 0 else f"{run_id}-{rep}"
                try:
                    if target == "direct":
                        got = measure_direct(args, bins, server, job, rid)
                    else:
                        got = measure_mount(args, server, bins, workdir, job, target, rid)
                    rows += got
                    for r in got:
                        r["round"] = rep  # the n-th run of this target for this job
                        r["seq"] = len(seen_order)  # position in the run
                        r["load_avg"] = os.getloadavg()  # the machine is shared: note it per row
                        log(f"{job} {target} {r['mode']}: {r['mb_s']:.1f} MB/s, "
                            f"CPU {r['cpu_s_per_gib'] or 0:.2f} s/GiB, with server and client "
                            f"{r.get('procs_cpu_s_per_gib') or 0:.2f} s/GiB "
                            f"({(r.get('procs_cpu_share') or 0) * 100:.0f}% of the CPUs), machine "
                            f"{r.get('machine_cpu_s_per_gib') or 0:.2f} s/GiB, "
                            f"idle {(r.get('machine_idle') or 0) * 100:.0f}%")
                except (RuntimeError, subprocess.TimeoutExpired, OSError, KeyError, ValueError) as e:
                    msg = str(e)
                    log(f"FAILED {job} on {target}: {msg}")
                    failures.append({"job": job, "target": target, "error": msg})
                if JOBS[job][1] == "write":
                    remove_written(bins, server)
    except KeyboardInterrupt:
        log("interrupted")
        stop["flag"] = True
    finally:
        tear_down(workdir, server, out)
        if own_nice is not None:
            AUTOGROUP_NICE[0] = own_nice
            boost(os.getpid())
    text = table(rows)
    load = os.getloadavg()
    title = f"bucketfs bench: {args.server}, size {args.size}"
    if args.bucketfs_opt:
        title += f", bucketfs {' '.join(args.bucketfs_opt)}"
    if "nullfs" in targets and nullfs_opts(args):
        title += f", nullfs {' '.join(nullfs_opts(args))}"
    title += f" (load average at the end {load[0]:.2f} {load[1]:.2f} {load[2]:.2f})"
    print(f"\n{title}\n{text}")
    for f in failures:
        print(f"FAILED {f['job']} on {f['target']}: {f['error']}")
    meta = {"server": args.server, "size_bytes": args.size_bytes, "jobs": jobs, "targets": targets,
            "runtime_s": args.runtime, "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
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
    return 1 if failures or stop["flag"] else 0


if __name__ == "__main__":
    sys.exit(main())
