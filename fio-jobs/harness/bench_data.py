"""bench.py's data set in the bucket: the large files, the small ones, the
warm-up object, and the write jobs' objects removed after each run."""
import hashlib
import os
import shutil
import time

from bench_jobs import JOBS, job_bytes
from bucket import put_object, remove_prefix
from common import BUCKET, log, run
from mounts import rclone_env


def write_random_file(path, nbytes):
    """Writes nbytes of random bytes to path; returns their SHA-256 (hex)."""
    h = hashlib.sha256()
    with open(path, "wb") as f:
        left = nbytes
        while left:
            chunk = os.urandom(min(left, 8 << 20))
            h.update(chunk)
            f.write(chunk)
            left -= len(chunk)
    return h.hexdigest()


def remove_written(bins, server):
    """Deletes write/ after a write run, so that s3sim's memory does not fill."""
    remove_prefix(bins["direct"], server, "write/")


def warm_server_uploads(args, bins, server, nbytes):
    """Uploads and deletes nbytes (16 MiB parts) before the first write run,
    so that s3sim's body pool holds warm buffers for the first target too."""
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
        renv = rclone_env(env, server.endpoint)
        run(["rclone", "copy", d, f"s3:{BUCKET}/small", "--transfers", "16"], env=renv)
        shutil.rmtree(d)
