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
import hashlib
import json
import math
import os
import random
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.request
from collections.abc import MutableMapping
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True  # no __pycache__ in the tree
import bench  # noqa: E402
from bench import BUCKET, log  # noqa: E402

# s3sim's operation names -> the request types of the table.
OP_TYPES = {
    "HeadObject": "HEAD", "HeadBucket": "HEAD",
    "ListObjectsV2": "LIST", "ListObjects": "LIST", "ListBuckets": "LIST",
    "ListParts": "LIST", "ListMultipartUploads": "LIST",
    "GetObject": "GET", "GetBucketLocation": "GET",
    "PutObject": "PUT",
    "CreateMultipartUpload": "MPU", "UploadPart": "MPU", "CompleteMultipartUpload": "MPU",
    "AbortMultipartUpload": "MPU",
    "CopyObject": "Copy", "UploadPartCopy": "Copy",
    "DeleteObject": "Delete", "DeleteObjects": "Delete",
}
TYPE_ORDER = ("HEAD", "LIST", "GET", "PUT", "MPU", "Copy", "Delete", "other")

# The server's shaping: (TTFB seconds, bytes/s per connection); None: unshaped,
# no time floor (round trips are still counted).
SHAPES = {"s3sim-shaped": (0.020, 100e6), "s3sim": None, "s3rver": None}

LIST_PAGE = 1000  # keys per ListObjectsV2 page

# Phases that change the bucket: the listing is polled until it shows it.
MUTATING = ("create", "rename", "unlink", "chunk_write")


# ------------------------------------------------------------ pure parts ---


def floor_round_trips(phase, size, direct=False, keys_per_dir=None):
    """The round trips one op of `phase` needs at least, as (type, body bytes).

    create: 1 PUT. stat by name: 1 (the name was not listed). lsstat: the
    listing pages of the op's directory shared by its files. read: 1 GET.
    rename: CopyObject + DeleteObject. unlink: 1 DeleteObject. chunk_write
    through a mount: the temporary file's PUT at its (durable) close, then
    the rename's copy and delete; the direct client PUTs the chunk's key."""
    if phase == "create":
        return [("PUT", size)]
    if phase == "stat":
        return [("HEAD", 0)]
    if phase == "lsstat":
        pages = max(1, math.ceil((keys_per_dir or 1) / LIST_PAGE))
        return [("LIST", 0)] * pages, keys_per_dir or 1
    if phase in ("read", "chunk_read", "par_read"):
        return [("GET", size)]
    if phase == "rename":
        return [("Copy", 0), ("Delete", 0)]
    if phase == "unlink":
        return [("Delete", 0)]
    if phase == "chunk_write":
        return [("PUT", size)] if direct else [("PUT", size), ("Copy", 0), ("Delete", 0)]
    raise ValueError(f"no floor for phase {phase}")


def floor(phase, size, shape, parallel, direct=False, keys_per_dir=None):
    """Floor of a phase: round trips per op and, on a shaped server, the
    seconds per op of one stream (each round trip costs ttfb + its body over
    the connection's rate) and the ops/s of `parallel` streams.

    lsstat's list pages are shared by the directory's keys: per op they are
    pages / keys_per_dir."""
    rts = floor_round_trips(phase, size, direct, keys_per_dir)
    share = 1
    if phase == "lsstat":
        rts, share = rts
    n_rt = len(rts) / share
    if not shape:
        return {"floor_rts": n_rt, "floor_s_per_op": None, "floor_ops_s": None}
    ttfb, bps = shape
    s_per_op = sum(ttfb + body / bps for _, body in rts) / share
    return {"floor_rts": n_rt, "floor_s_per_op": s_per_op, "floor_ops_s": parallel / s_per_op}


def diff_ops(before, after):
    """Requests per operation made between two /__s3sim/stats snapshots
    (their "ops"), zero counts left out. A snapshot taken right after a
    reset is all zeros; diffing keeps the figure right when a server ignored
    the reset or something else was counted in between."""
    out = {}
    for op, n in after.items():
        d = n - before.get(op, 0)
        if d:
            out[op] = d
    return out


def by_type(ops):
    """Operation counts -> counts per request type (HEAD, LIST, GET, ...)."""
    out = {}
    for op, n in ops.items():
        t = OP_TYPES.get(op, "other")
        out[t] = out.get(t, 0) + n
    return out


def per_op_text(types, ops):
    """'PUT 1.00 HEAD 0.50' in TYPE_ORDER: requests per op of each type."""
    if types is None:
        return "n/a"
    if not ops:
        return "-"
    parts = [f"{t} {types[t] / ops:.2f}" for t in TYPE_ORDER if types.get(t)]
    return " ".join(parts) or "none"


def fmt(v, spec, width):
    return f"{(format(v, spec) if v is not None else '-'):>{width}}"


def table(rows):
    """One line per phase and target: ops/s, MB/s, requests per op by type,
    floor round trips per op, floor ops/s, measured / floor (time per op
    over the floor's), and notes (visible after, errors, data mismatches)."""
    hdr = (f"{'pattern':<7} {'phase':<11} {'layout':<6} {'thr':>3} {'target':<15} {'ops':>5} "
           f"{'ops/s':>8} {'MB/s':>7} {'floor RT':>8} {'floor/s':>8} {'x floor':>7} "
           f"{'cpu ms/op':>9}  requests per op")
    lines = [hdr, "-" * (len(hdr) + 20)]
    for r in rows:
        notes = []
        if r.get("visible_s") is not None:
            notes.append(f"visible +{r['visible_s']:.2f}s")
        elif r.get("visible_timeout"):
            notes.append("NOT VISIBLE")
        if r.get("mismatches"):
            notes.append(f"DATA MISMATCH x{r['mismatches']}")
        if r.get("errors"):
            notes.append(f"ERRORS x{len(r['errors'])}: {r['errors'][0][:80]}")
        mbps = r["mb_s"] if r.get("bytes") else None
        cpu = r["cpu_s"] / r["ops"] * 1e3 if r.get("cpu_s") is not None and r["ops"] else None
        lines.append(
            f"{r['pattern']:<7} {r['phase']:<11} {r.get('layout') or '-':<6} {r['threads']:>3} "
            f"{r['target']:<15} {r['ops']:>5} {fmt(r['ops_s'], '.1f', 8)} {fmt(mbps, '.1f', 7)} "
            f"{fmt(r['floor_rts'], '.2f', 8)} {fmt(r['floor_ops_s'], '.1f', 8)} "
            f"{fmt(r.get('x_floor'), '.2f', 7)} {fmt(cpu, '.2f', 9)}  "
            f"{per_op_text(r.get('requests_by_type'), r['ops'])}"
            + (f"  [{'; '.join(notes)}]" if notes else ""))
    return "\n".join(lines)


def parse_variant(text):
    """'async=--async-close --max-threads=4' -> ('async', ['--async-close', '--max-threads=4'])."""
    name, sep, opts = text.partition("=")
    if not sep or not name or not name.replace("-", "").replace("_", "").isalnum():
        raise ValueError(f"--variant wants NAME=OPTIONS, got {text!r}")
    return name, shlex.split(opts)


def content(name, seed, size):
    """The bytes of a file: a function of its name and the run's seed, so a
    read can be checked without keeping what was written."""
    import numpy as np
    h = hashlib.sha256(f"{seed}:{name}".encode()).digest()
    return np.random.Generator(np.random.PCG64(int.from_bytes(h[:16], "little"))).bytes(size)


# ------------------------------------------------------------ the server ---


class Stats:
    """s3sim's request counters; s3rver has none (requests show as n/a)."""

    def __init__(self, server):
        self.url = server.endpoint.rstrip("/") + "/__s3sim/"
        self.ok = server.kind != "s3rver"

    def _call(self, path, method="GET"):
        req = urllib.request.Request(self.url + path, method=method)
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.read()

    def reset(self):
        if self.ok:
            self._call("reset-stats", "POST")

    def ops(self):
        return json.loads(self._call("stats"))["ops"] if self.ok else None


def list_keys(bins, server, prefix):
    """Keys under prefix, with `bucketfs s3 ls --recursive` (the direct client
    of the same library: one LIST per 1,000 keys)."""
    r = subprocess.run([bins["bucketfs"], "s3", "ls", f"s3://{BUCKET}/{prefix}", "--recursive",
                        "--endpoint-url", server.endpoint, "--force-path-style"],
                       env=server.client_env(), capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        raise RuntimeError(f"bucketfs s3 ls exited {r.returncode}: {r.stderr.strip()[-300:]}")
    return {line.split()[-1] for line in r.stdout.splitlines() if line.strip()}


def wait_visible(bins, server, prefix, present, absent, timeout):
    """Polls the listing until every key of `present` is there and none of
    `absent`; returns (seconds, LIST pages it issued) or (None, pages) after
    timeout. The seconds run from the first poll's start to the start of the
    one that saw it all: 0 when the change was there as the phase ended. A
    target that uploads after close shows here."""
    t0, pages = time.monotonic(), 0
    while True:
        started = time.monotonic()  # the listing shows the bucket as of about then
        keys = list_keys(bins, server, prefix)
        pages += max(1, math.ceil(len(keys) / LIST_PAGE))
        if present <= keys and not (absent & keys):
            return started - t0, pages
        if time.monotonic() - t0 > timeout:
            missing = len(present - keys) + len(absent & keys)
            log(f"listing of {prefix} still differs in {missing} keys after {timeout:.0f} s")
            return None, pages
        time.sleep(0.05)


# --------------------------------------------------------------- targets ---


class Mismatch(Exception):
    pass


def check(name, got, seed, size):
    if len(got) != size or got != content(name, seed, size):
        raise Mismatch(f"{name}: {len(got)} bytes, not the expected {size}")


class FsTarget:
    """Paths on a FUSE mount (bucketfs, its variants, s3fs, rclone)."""

    direct = False

    def __init__(self, mount):
        self.m = mount
        self.root = mount.mnt

    def path(self, key):
        return os.path.join(self.root, key)

    def mkdirs(self, dirs):
        for d in dirs:
            os.makedirs(self.path(d), exist_ok=True)

    def create(self, key, data):
        with open(self.path(key), "wb") as f:
            f.write(data)

    def stat(self, key):
        return os.stat(self.path(key)).st_size

    def lsstat(self, d):
        with os.scandir(self.path(d)) as it:
            return {e.name: e.stat().st_size for e in it}

    def read(self, key):
        with open(self.path(key), "rb") as f:
            return f.read()

    def rename(self, src, dst):
        os.rename(self.path(src), self.path(dst))

    def unlink(self, key):
        os.unlink(self.path(key))

    def zarr_store(self, prefix):
        import zarr
        return zarr.DirectoryStore(self.path(prefix))

    def cpu(self):
        return bench.proc_cpu(self.m.pid)

    def before_phase(self):
        bench.drop_caches()  # reads go to the daemon, lookups too (dentries dropped)

    def check_alive(self):
        self.m.check_alive()


class S3Store(MutableMapping):
    """A zarr 2 store of boto3 calls under a prefix: the direct client's
    version of the chunk pattern (a PUT or GET per chunk, no rename)."""

    def __init__(self, target, prefix):
        self.t, self.prefix = target, prefix.rstrip("/") + "/"

    def __getitem__(self, key):
        try:
            return self.t.client().get_object(Bucket=BUCKET, Key=self.prefix + key)["Body"].read()
        except self.t.client().exceptions.NoSuchKey:
            raise KeyError(key) from None

    def __setitem__(self, key, value):
        self.t.client().put_object(Bucket=BUCKET, Key=self.prefix + key, Body=bytes(value))

    def __delitem__(self, key):
        self.t.client().delete_object(Bucket=BUCKET, Key=self.prefix + key)

    def __iter__(self):
        pages = self.t.client().get_paginator("list_objects_v2")
        for page in pages.paginate(Bucket=BUCKET, Prefix=self.prefix):
            for o in page.get("Contents", []):
                yield o["Key"][len(self.prefix):]

    def __len__(self):
        return sum(1 for _ in self)


class S3Target:
    """The direct client: boto3 (python3-boto3), one client shared by the
    threads (clients are thread-safe). Made before any timing: a boto3 client
    takes ~0.1-0.3 s of CPU to build, and one per thread inside the phase
    made 8 threads slower than one."""

    direct = True

    def __init__(self, server, pool):
        import boto3
        from botocore.config import Config
        env = server.env
        self.c = boto3.session.Session().client(
            "s3", endpoint_url=server.endpoint, region_name="us-east-1",
            aws_access_key_id=env["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=env["AWS_SECRET_ACCESS_KEY"],
            config=Config(s3={"addressing_style": "path"}, max_pool_connections=pool,
                          retries={"max_attempts": 3}))

    def client(self):
        return self.c

    def mkdirs(self, dirs):
        pass  # S3 has no directories

    def create(self, key, data):
        self.client().put_object(Bucket=BUCKET, Key=key, Body=data)

    def stat(self, key):
        return self.client().head_object(Bucket=BUCKET, Key=key)["ContentLength"]

    def lsstat(self, d):
        out = {}
        pages = self.client().get_paginator("list_objects_v2")
        for page in pages.paginate(Bucket=BUCKET, Prefix=d + "/", Delimiter="/"):
            for o in page.get("Contents", []):
                out[o["Key"].rsplit("/", 1)[1]] = o["Size"]
        return out

    def read(self, key):
        return self.client().get_object(Bucket=BUCKET, Key=key)["Body"].read()

    def rename(self, src, dst):
        c = self.client()
        c.copy_object(Bucket=BUCKET, Key=dst, CopySource={"Bucket": BUCKET, "Key": src})
        c.delete_object(Bucket=BUCKET, Key=src)

    def unlink(self, key):
        self.client().delete_object(Bucket=BUCKET, Key=key)

    def zarr_store(self, prefix):
        return S3Store(self, prefix)

    def cpu(self):
        return None  # in the harness's own process, with the harness

    def before_phase(self):
        pass

    def check_alive(self):
        pass


# ---------------------------------------------------------------- phases ---


def run_ops(items, threads, fn):
    """fn(item) for every item, thread t taking items t, t+T, ... (threads
    never share a name). Returns (seconds, errors, mismatches): an op that
    fails is counted, not fatal, so a broken target still gets its row."""
    parts = [items[t::threads] for t in range(threads)]

    def worker(part):
        errs, bad = [], 0
        for it in part:
            try:
                fn(it)
            except Mismatch as e:
                bad += 1
                errs.append(str(e))
            except Exception as e:  # noqa: BLE001 - reported per phase
                errs.append(f"{it}: {type(e).__name__}: {e}")
        return errs, bad

    t0 = time.monotonic()
    if threads == 1:
        results = [worker(parts[0])]
    else:
        with ThreadPoolExecutor(threads) as ex:
            results = list(ex.map(worker, parts))
    secs = time.monotonic() - t0
    return secs, [e for r in results for e in r[0]], sum(r[1] for r in results)


class Ctx:
    """What every phase needs: args, server, stats, binaries, the shape."""

    def __init__(self, args, server, bins):
        self.args, self.server, self.bins = args, server, bins
        self.stats = Stats(server)
        self.shape = SHAPES[args.server]


def measure(ctx, tgt, row, fn_items, threads, fn, nbytes=0, visible=None, floor_args=None,
            ops=None):
    """Runs one phase on tgt and returns its row: time, requests (reset
    before, read after; a visibility poll's own LISTs taken off), CPU of the
    daemon, floor and measured / floor. visible: (prefix, present, absent)
    to poll after the phase. ops: the ops the items stand for when an item
    is not one op (lsstat: a directory of files; chunk_read: a batch)."""
    tgt.before_phase()
    ctx.stats.reset()
    ops0, cpu0 = ctx.stats.ops(), tgt.cpu()
    secs, errs, bad = run_ops(fn_items, threads, fn)
    cpu1 = tgt.cpu()
    tgt.check_alive()
    n = ops if ops is not None else len(fn_items)
    row.update({"ops": n, "seconds": secs, "ops_s": n / secs if secs else None, "bytes": nbytes,
                "mb_s": nbytes / secs / 1e6 if secs else None, "errors": errs[:20],
                "error_count": len(errs), "mismatches": bad,
                "cpu_s": cpu1 - cpu0 if cpu0 is not None else None})
    poll_pages = 0
    if visible and not tgt.direct:
        prefix, present, absent = visible
        timeout = 60 + 0.5 * n
        row["visible_s"], poll_pages = wait_visible(ctx.bins, ctx.server, prefix, present,
                                                    absent, timeout)
        row["visible_timeout"] = row["visible_s"] is None
    ops1 = ctx.stats.ops()
    if ops1 is not None:
        ops = diff_ops(ops0, ops1)
        if poll_pages:
            ops["ListObjectsV2"] = max(0, ops.get("ListObjectsV2", 0) - poll_pages)
        row["requests"] = ops
        row["requests_by_type"] = by_type(ops)
    else:
        row["requests"] = row["requests_by_type"] = None
    row.update(floor(row["phase"], floor_args.get("size", 0), ctx.shape,
                     floor_args.get("parallel", threads), tgt.direct,
                     floor_args.get("keys_per_dir")))
    fo = row["floor_ops_s"]
    row["x_floor"] = fo / row["ops_s"] if fo and row["ops_s"] else None
    log(f"{row['pattern']} {row['phase']} {row.get('layout') or ''} t{row['threads']} "
        f"{row['target']}: "
        f"{row['ops_s']:.1f} ops/s, {per_op_text(row['requests_by_type'], n)}"
        + (f", {len(errs)} errors (first: {errs[0]})" if errs else ""))
    return row


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


# ------------------------------------------------------------ the targets ---


def target_specs(args):
    """target name -> (daemon, its options): bucketfs and its --variant
    names, s3fs, rclone (--vfs-cache-mode off), rclone-writes, direct."""
    specs = {"bucketfs": ("bucketfs", []), "s3fs": ("s3fs", []),
             "rclone": ("rclone", ["--vfs-cache-mode", "off"]),
             "rclone-writes": ("rclone", ["--vfs-cache-mode", "writes"]), "direct": ("direct", [])}
    for v in args.variant:
        name, opts = parse_variant(v)
        if name in specs:
            sys.exit(f"smallfile_bench: variant name {name} is taken")
        specs[name] = ("bucketfs", opts)
    return specs


class Session:
    """A mounted target (or the direct client) for one sequence of phases."""

    def __init__(self, ctx, workdir, name, spec, pool):
        self.ctx, self.name = ctx, name
        kind, opts = spec
        self.mount = None
        if kind == "direct":
            self.tgt = S3Target(ctx.server, pool)
            return
        kw = {"label": name}
        if kind == "bucketfs":
            kw["bucketfs_opts"] = opts
        elif kind == "rclone":
            # A cache directory per mount: with one per target, rclone-writes
            # read chunks back from the files it had written (no GET), which
            # is no cold read. Uploads are done before unmounting (measure
            # polls the listing), so nothing is lost with the directory.
            cache = tempfile.mkdtemp(prefix=f"rclone-cache-{name}-", dir=workdir)
            kw["rclone_opts"] = [*opts, "--cache-dir", cache]
        self.mount = bench.Mount(kind, ctx.server, ctx.bins, workdir, True, **kw)
        self.tgt = FsTarget(self.mount)

    def close(self):
        if self.mount:
            self.peak_rss = bench.vm_hwm(self.mount.pid)
            self.mount.close()


def with_session(ctx, workdir, name, spec, pool, rows, fn):
    """fn(target, rows) on a fresh mount, unmounted after, also when a phase
    raised; the rows it appended get the daemon's peak RSS."""
    start = len(rows)
    s = Session(ctx, workdir, name, spec, pool)
    try:
        fn(s.tgt, rows)
    finally:
        s.close()
        for r in rows[start:]:
            r["peak_rss_mib"] = getattr(s, "peak_rss", 0) / (1 << 20) or None


def run_target(ctx, workdir, name, spec, rows):
    """Every pattern on one target; rows are appended as they come, so a
    target that fails half-way keeps the rows it had."""
    a = ctx.args
    pool = max(a.thread_list) + 2
    if "mdtest" in a.pattern_list:
        for layout in a.layout_list:
            for t in a.thread_list:
                with_session(ctx, workdir, name, spec, pool, rows,
                             lambda tgt, out, layout=layout, t=t:
                             mdtest(ctx, tgt, name, layout, t, out))
    if "chunks" in a.pattern_list:
        with_session(ctx, workdir, name, spec, pool, rows,
                     lambda tgt, out: out.append(chunk_write(ctx, tgt, name)))
        for t in a.thread_list:
            with_session(ctx, workdir, name, spec, pool, rows,
                         lambda tgt, out, t=t: out.append(chunk_read(ctx, tgt, name, t)))
    if "par" in a.pattern_list:
        for t in sorted({1, a.par_threads}):
            with_session(ctx, workdir, name, spec, pool, rows,
                         lambda tgt, out, t=t: out.append(par_read(ctx, tgt, name, t)))


def cleanup_target(ctx, name):
    """Deletes what a target wrote (sf/NAME/): s3sim keeps objects in memory,
    and the next target's listings should not page through them."""
    r = subprocess.run([ctx.bins["bucketfs"], "s3", "rm", "-r", "-q", f"s3://{BUCKET}/sf/{name}/",
                        "--endpoint-url", ctx.server.endpoint, "--force-path-style"],
                       env=ctx.server.client_env(), capture_output=True, text=True)
    if r.returncode != 0:
        log(f"removing sf/{name}/ failed: {r.stderr.strip()[-300:]}")


# ------------------------------------------------------------------ main ---


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
    a.file_size_bytes = bench.parse_size(a.file_size)
    a.chunk_size_bytes = bench.parse_size(a.chunk_size)
    a.par_size_bytes = bench.parse_size(a.par_size)
    a.thread_list = [int(x) for x in a.threads.split(",") if x]
    a.layout_list = [x for x in a.layouts.split(",") if x]
    a.pattern_list = [x for x in a.patterns.split(",") if x]
    return a


def target_order(args, specs):
    targets = [t for t in args.targets.split(",") if t]
    variants = [parse_variant(v)[0] for v in args.variant]
    missing = [v for v in variants if v not in targets]
    if missing:
        at = targets.index("bucketfs") + 1 if "bucketfs" in targets else 0
        targets[at:at] = missing
    for t in targets:
        if t not in specs:
            sys.exit(f"smallfile_bench: unknown target {t} (known: {','.join(specs)})")
    return targets


def main(argv=None):
    a = parse_args(argv)
    specs = target_specs(a)
    targets = target_order(a, specs)
    for p in a.pattern_list:
        if p not in ("mdtest", "chunks", "par"):
            sys.exit(f"smallfile_bench: unknown pattern {p}")
    if a.autogroup_nice is not None:
        bench.AUTOGROUP_NICE.append(a.autogroup_nice)
    if os.geteuid() != 0:
        log("not root: the page cache cannot be dropped and mounts may fail")
    root = bench.ROOT
    bins = {"bucketfs": bench.find_bin(a.bucketfs_bin, [os.path.join(root, d, "mount-tools/bucketfs")
                                                        for d in ("build/release", "build")]),
            "s3sim": bench.find_bin(a.s3sim_bin, [os.path.join(root, d, "tests/s3sim/s3sim")
                                                  for d in ("build/release", "build")])
            if a.server != "s3rver" else ""}
    out = a.out or f"/tmp/smallfile-bench-{a.server}-{time.strftime('%Y%m%d-%H%M%S')}"
    os.makedirs(out, exist_ok=True)
    workdir = tempfile.mkdtemp(prefix="smallfile-bench-")
    rows, failures, server = [], [], None
    try:
        try:
            server = bench.Server(a.server, bins["s3sim"])
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
        bench.tear_down(workdir, server, out)
    report(a, targets, specs, bins, rows, failures, out)
    bad = any(r.get("mismatches") or r.get("error_count") for r in rows)
    return 1 if failures or bad else 0


def version(binary):
    """`bucketfs --version` and the binary's SHA-256: figures are for one
    build, binaries get copied around, and the version string stays 0.1.0."""
    try:
        r = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=10)
        with open(binary, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()[:16]
        return f"{(r.stdout or r.stderr).strip()} sha256:{digest}"
    except OSError as e:
        return f"unknown ({e})"


def report(a, targets, specs, bins, rows, failures, out):
    load = os.getloadavg()
    shape = SHAPES[a.server]
    title = (f"smallfile bench: {a.server}"
             + (f" (ttfb {shape[0] * 1e3:.0f} ms, {shape[1] / 1e6:.0f} MB/s per connection)"
                if shape else " (unshaped: no time floor)")
             + f", files {a.files} x {a.file_size}, chunks {a.chunks} x {a.chunk_size}, "
             f"par {a.par_files} x {a.par_size} (load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f})")
    text = table(rows)
    print(f"\n{title}\n{text}")
    for f in failures:
        print(f"FAILED target {f['target']} {' '.join(f.get('options', []))}: {f['error']}")
    meta = {"server": a.server, "shape": shape, "targets": targets,
            "target_specs": {t: specs[t] for t in targets}, "command": " ".join(sys.argv),
            "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "load_avg": load,
            "bucketfs_bin": bins["bucketfs"], "bucketfs_version": version(bins["bucketfs"]),
            "s3sim_bin": bins["s3sim"], "seed": a.seed,
            "files": a.files, "file_size": a.file_size_bytes, "dirs": a.dirs,
            "chunks": a.chunks, "chunk_size": a.chunk_size_bytes,
            "par_files": a.par_files, "par_size": a.par_size_bytes}
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump({"meta": meta, "results": rows, "failures": failures}, f, indent=1)
    with open(os.path.join(out, "table.txt"), "w") as f:
        f.write(title + "\n" + text + "\n")
    print(f"results: {out}/results.json, {out}/table.txt")


if __name__ == "__main__":
    sys.exit(main())
