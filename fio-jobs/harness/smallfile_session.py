"""smallfile_bench.py's targets: their daemons and options, their order,
and a fresh mount (or direct client) for each sequence of phases."""
import shlex
import sys
import tempfile

import procstats
from bucket import remove_prefix
from mounts import Mount
from smallfile_patterns import chunk_read, chunk_write, mdtest, par_read
from smallfile_targets import FsTarget, S3Target


def parse_variant(text):
    """'async=--async-close --max-threads=4' -> ('async', ['--async-close', '--max-threads=4'])."""
    name, sep, opts = text.partition("=")
    if not sep or not name or not name.replace("-", "").replace("_", "").isalnum():
        raise ValueError(f"--variant wants NAME=OPTIONS, got {text!r}")
    return name, shlex.split(opts)


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
        self.mount = Mount(kind, ctx.server, ctx.bins, workdir, True, **kw)
        self.tgt = FsTarget(self.mount)

    def close(self):
        if self.mount:
            self.peak_rss = procstats.vm_hwm(self.mount.pid)
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
    """Deletes what a target wrote (sf/NAME/): the next target's listings
    should not page through it."""
    remove_prefix(ctx.bins["bucketfs"], ctx.server, f"sf/{name}/")
