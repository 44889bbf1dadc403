"""smallfile_bench.py's patterns: mdtest's metadata phases, a zarr array's
chunks, and parallel reads of many small files."""
import math
import random
import time
from concurrent.futures import ThreadPoolExecutor

from common import log
from smallfile_measure import measure, run_ops
from smallfile_targets import Mismatch, S3Target, check, content


def mdtest(ctx, tgt, target, layout, threads, rows):
    """create, stat, lsstat, read, rename, unlink of --files files; each
    phase's row is appended to rows as soon as it ran."""
    a = ctx.args
    ndirs = 1 if layout == "flat" else a.dirs
    base = f"sf/{target}/{layout}-t{threads}"
    dirs = [f"{base}/d{k}" for k in range(ndirs)]
    names = [f"{dirs[i % ndirs]}/f-{i}" for i in range(a.files)]
    renamed = [n.rsplit("/", 1)[0] + "/r-" + n.rsplit("-", 1)[1] for n in names]
    tgt.mkdirs(dirs)
    size, seed = a.file_size_bytes, a.seed
    per_dir = math.ceil(a.files / ndirs)

    def row(phase):
        return {"pattern": "mdtest", "phase": phase, "layout": layout, "threads": threads,
                "target": target}

    def stat(key):
        got = tgt.stat(key)
        if got != size:
            raise Mismatch(f"{key}: stat says {got} bytes, not {size}")

    def lsstat(d):
        got = tgt.lsstat(d)
        want = [n.rsplit("/", 1)[1] for n in names if n.rsplit("/", 1)[0] == d]
        wrong = [w for w in want if got.get(w) != size]
        if wrong:
            raise Mismatch(f"{d}: {len(wrong)} of {len(want)} files missing or of the wrong size")

    common = {"size": size, "parallel": threads}
    rows.append(measure(ctx, tgt, row("create"), names, threads,
                        lambda k: tgt.create(k, content(k, seed, size)), size * len(names),
                        visible=(base + "/", set(names), set()), floor_args=common))
    rows.append(measure(ctx, tgt, row("stat"), names, threads, stat, floor_args=common))
    # Threads over directories: lsstat's ops are the files listed.
    rows.append(measure(ctx, tgt, row("lsstat"), dirs, min(threads, ndirs), lsstat,
                        floor_args={"parallel": min(threads, ndirs), "keys_per_dir": per_dir},
                        ops=a.files))
    rows.append(measure(ctx, tgt, row("read"), names, threads,
                        lambda k: check(k, tgt.read(k), seed, size), size * len(names),
                        floor_args=common))
    pairs = list(zip(names, renamed))
    rows.append(measure(ctx, tgt, row("rename"), pairs, threads, lambda p: tgt.rename(*p),
                        visible=(base + "/", set(renamed), set(names)), floor_args=common))
    rows.append(measure(ctx, tgt, row("unlink"), renamed, threads, tgt.unlink,
                        visible=(base + "/", set(), set(renamed)), floor_args=common))


def chunk_write(ctx, tgt, target):
    """Creates the zarr array (untimed: its .zarray) and writes every chunk,
    one thread, through zarr."""
    import zarr
    a = ctx.args
    cs, n = a.chunk_size_bytes, a.chunks
    prefix = f"sf/{target}/zarr"
    z = zarr.open_array(store=tgt.zarr_store(prefix), mode="w", shape=(n * cs,),
                        chunks=(cs,), dtype="u1", compressor=None, fill_value=0)
    row = {"pattern": "chunks", "phase": "chunk_write", "layout": None, "threads": 1,
           "target": target}

    def write(k):
        import numpy as np
        z[k * cs:(k + 1) * cs] = np.frombuffer(content(f"chunk-{k}", a.seed, cs), dtype="u1")

    # .zarray too: written before the timed chunks, a target that uploads
    # after close (rclone-writes) may not have sent it yet either.
    keys = {f"{prefix}/{k}" for k in range(n)} | {f"{prefix}/.zarray"}
    return measure(ctx, tgt, row, list(range(n)), 1, write, cs * n,
                   visible=(prefix + "/", keys, set()), floor_args={"size": cs, "parallel": 1})


def chunk_read(ctx, tgt, target, threads):
    """zarr reads of single chunks in a shuffled order, in batches of
    `threads` chunks read at once (a data loader's pattern)."""
    import zarr
    a = ctx.args
    cs, n = a.chunk_size_bytes, a.chunks
    z = zarr.open_array(store=tgt.zarr_store(f"sf/{target}/zarr"), mode="r")
    order = list(range(n))
    random.Random(a.seed).shuffle(order)
    batches = [order[i:i + threads] for i in range(0, n, threads)]
    row = {"pattern": "chunks", "phase": "chunk_read", "layout": None, "threads": threads,
           "target": target}

    def read(k):
        check(f"chunk-{k}", z[k * cs:(k + 1) * cs].tobytes(), a.seed, cs)

    pool = ThreadPoolExecutor(threads) if threads > 1 else None

    def batch(ks):
        if pool is None:
            for k in ks:
                read(k)
            return
        for f in [pool.submit(read, k) for k in ks]:
            f.result()  # a batch ends when its slowest chunk arrived

    # run_ops counts a failed batch once; one thread walks the batches in order.
    try:
        r = measure(ctx, tgt, row, batches, 1, batch, cs * n,
                    floor_args={"size": cs, "parallel": threads}, ops=n)
    finally:
        if pool:
            pool.shutdown()
    r["batches"] = len(batches)
    return r


def par_names(args):
    # A top-level directory: s3rver's delimiter listing leaves out a prefix
    # that holds only prefixes (sf/ of sf/par/...), which hides the files
    # from a mount that trusts the listing (rclone).
    return [f"par/f-{i}" for i in range(args.par_files)]


def upload_par(ctx):
    """The parallel-read files, once per run for every target (boto3, 16 threads)."""
    a = ctx.args
    up = S3Target(ctx.server, 16)
    names = par_names(a)
    t0 = time.monotonic()
    _, errs, _ = run_ops(names, 16, lambda k: up.create(k, content(k, a.seed, a.par_size_bytes)))
    if errs:
        raise RuntimeError(f"uploading the par files: {len(errs)} errors, first {errs[0]}")
    log(f"uploaded {len(names)} x {a.par_size_bytes} bytes in {time.monotonic() - t0:.1f} s")


def par_read(ctx, tgt, target, threads):
    a = ctx.args
    names = par_names(a)
    random.Random(a.seed + threads).shuffle(names)
    row = {"pattern": "par", "phase": "par_read", "layout": None, "threads": threads,
           "target": target}
    return measure(ctx, tgt, row, names, threads,
                   lambda k: check(k, tgt.read(k), a.seed, a.par_size_bytes),
                   a.par_size_bytes * len(names), floor_args={"size": a.par_size_bytes})
