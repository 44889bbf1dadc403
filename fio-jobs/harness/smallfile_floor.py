"""smallfile_bench.py's pure figures: the round trips each phase needs at
least, the floor they set on a shaped server, and s3sim's request counts
per operation folded into request types."""
import math


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
