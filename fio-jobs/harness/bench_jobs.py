"""bench.py's jobs: their fio files and kinds, the bytes they move, and
what a cold run of each needs before it starts."""
from common import GIB, log
from pagecache import drop_caches, prewarm


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


def job_bytes(args, job):
    files = {"seq8": 8, "write4": 4, "small": 0}.get(job, 1)
    return files * args.size_bytes + (args.small_files << 17 if job == "small" else 0)


def prewarm_bytes(args, job):
    """What a cold run fills: for reads the job's bytes of page cache plus
    1 GiB of daemon buffers; for writes the server's memory (s3sim holds the
    parts, s3rver the page cache of its files) and the writer's buffers,
    covered by twice the job's bytes plus 1 GiB."""
    n = job_bytes(args, job)
    return (2 * n if JOBS[job][1] == "write" else n) + GIB


def server_body_pool(args, jobs):
    """s3sim's --body-pool for this run: what the largest write job uploads,
    plus 1 GiB, so that every target's uploads land in recycled buffers
    rather than fresh memory the kernel must zero; 0 (s3sim's default) when
    no write job runs."""
    writes = [job_bytes(args, j) for j in jobs if JOBS[j][1] == "write"]
    return max(writes) + GIB if writes else 0


def fio_timeout(args, job):
    """--timeout, or generous: the job's bytes at 2 MB/s plus its runtime plus 3 minutes."""
    if args.timeout:
        return args.timeout
    return 180 + args.runtime + job_bytes(args, job) / 2e6


def nullfs_opts(args):
    """nullfs follows bucketfs's --direct-io (same FUSE open flags), plus --nullfs-opt."""
    return (["--direct-io"] if "--direct-io" in args.bucketfs_opt else []) + args.nullfs_opt


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
