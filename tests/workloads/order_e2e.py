#!/usr/bin/python3
"""The read order end to end on a live mount over s3sim (run by
test_order_hint.sh, which mounts and passes MNT, the s3sim endpoint, the
bucket and the mount's metrics URL). What s3sim's counters and the
mount's metrics must show:
  unused     without an announced order, reading files in shuffled order
             starts no fetch ahead (the mount's order counters stay at 0)
  bounded    announcing 80 files fetches the first 64 (the window) and no more
  in order   reading them in the announced order: every open adopts the file
             fetched ahead (hint hits = 80), each file is fetched once
             (80 GETs), bytes exact
  refused    a path outside the mount, or a bad command, is an error reply
Prints one line per check; exits 1 when one failed."""
import hashlib
import json
import os
import random
import sys
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../mount-tools"))
import boto3  # noqa: E402
import bucketfs_order  # noqa: E402

MNT, ENDPOINT, BUCKET, METRICS = sys.argv[1:5]
WINDOW = 64
FAILED = []


def check(name, ok, detail=""):
    print(f"{'ok' if ok else 'FAIL'}: {name}{' (' + detail + ')' if detail else ''}", flush=True)
    if not ok:
        FAILED.append(name)


def ops():
    with urllib.request.urlopen(ENDPOINT + "/__s3sim/stats", timeout=10) as r:
        return json.load(r)["ops"]


def reset():
    urllib.request.urlopen(urllib.request.Request(ENDPOINT + "/__s3sim/reset-stats", method="POST"),
                           timeout=10).read()


def metric(name):
    with urllib.request.urlopen(METRICS, timeout=10) as r:
        for line in r.read().decode().splitlines():
            if line.startswith(name + " ") or line.startswith(name + "{"):
                return float(line.split()[-1])
    return 0.0


def settle(op, at_least, seconds=20):
    """s3sim's count of op once it reached at_least and stopped growing."""
    deadline = time.time() + seconds
    last = -1
    while time.time() < deadline:
        n = ops().get(op, 0)
        if n >= at_least and n == last:
            return n
        last = n
        time.sleep(0.5)
    return ops().get(op, 0)


s3 = boto3.client("s3", endpoint_url=ENDPOINT, region_name="us-east-1")
bodies = {}
for i in range(100):
    body = hashlib.sha256(str(i).encode()).digest() * (150000 // 32 + i)  # distinct per file
    key = f"imgs/f{i:03d}.jpg"
    s3.put_object(Bucket=BUCKET, Key=key, Body=body)
    bodies[key] = hashlib.sha256(body).hexdigest()


def read(keys):
    bad = [k for k in keys
           if hashlib.sha256(open(os.path.join(MNT, k), "rb").read()).hexdigest() != bodies[k]]
    return bad


rng = random.Random(7)
keys = sorted(bodies)

# unused
first = keys[:20]
rng.shuffle(first)
reset()
hits0 = metric("bucketfs_prefetch_hint_hits_total")
bad = read(first)
st = bucketfs_order.status(MNT)
check("unused: bytes exact", not bad, f"{len(bad)} differ")
check("unused: no order, nothing announced or opened in one",
      st["announced"] == 0 and st["opened"] == 0, str(st))
check("unused: one GET per file read", ops().get("GetObject", 0) == 20, str(ops()))
check("unused: no open adopted a file fetched ahead",
      metric("bucketfs_prefetch_hint_hits_total") == hits0)

# bounded
order = keys[20:100]
rng.shuffle(order)
reset()
check("announce 80 files", bucketfs_order.announce(MNT, [os.path.join(MNT, k) for k in order]))
gets = settle("GetObject", WINDOW)
check(f"bounded: the first {WINDOW} are fetched ahead, no more", gets == WINDOW, f"{gets} GETs")
st = bucketfs_order.status(MNT)
check("bounded: 80 announced, none opened", st["announced"] == 80 and st["opened"] == 0, str(st))

# in order
hits0 = metric("bucketfs_prefetch_hint_hits_total")
bad = read(order)
check("in order: bytes exact", not bad, f"{len(bad)} differ")
hits = metric("bucketfs_prefetch_hint_hits_total") - hits0
check("in order: every open adopted its file fetched ahead", hits == 80, f"{hits:.0f} hits")
gets = settle("GetObject", 80, seconds=5)
check("in order: each file fetched once", gets == 80, f"{gets} GETs")
st = bucketfs_order.status(MNT)
check("in order: 80 opened, cursor at the end", st["opened"] == 80 and st["cursor"] == 80, str(st))

# refused
sock = bucketfs_order.socket_path(MNT)
import socket  # noqa: E402
with socket.socket(socket.AF_UNIX) as s:
    s.connect(sock)
    for line, why in (("order add ../x", "a path outside the mount"),
                      ("order add a%zz", "a bad escape"), ("order bogus", "an unknown verb")):
        try:
            bucketfs_order._call(s, line)
            check(f"refused: {why}", False, "accepted")
        except RuntimeError as e:
            check(f"refused: {why}", str(e).startswith("error"), str(e))
st = bucketfs_order.status(MNT)
check("refused: the order is unchanged", st["announced"] == 80, str(st))
sys.exit(1 if FAILED else 0)
