"""Runs one smallfile_bench.py phase on a target and makes its row: time,
requests, the daemon's CPU, the floor, and how long the bucket took to show
the change."""
import math
import time
from concurrent.futures import ThreadPoolExecutor

from bucket import list_keys
from common import log
from servers import Stats
from smallfile_floor import LIST_PAGE, SHAPES, by_type, diff_ops, floor, per_op_text
from smallfile_targets import Mismatch


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
