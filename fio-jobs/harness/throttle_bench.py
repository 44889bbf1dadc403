#!/usr/bin/env python3
"""Throttling benchmark: bucketfs against s3sim's request-rate limit.

s3sim answers 503 SlowDown to requests beyond --rate-limit REQ/S per bucket.
For each mode the benchmark starts a fresh s3sim and mount and runs three
phases, each measured with s3sim's counters: a sequential read of one large
object, a write of one large file, and a walk (8 threads listing every
directory of a tree and stat'ing every file). Per phase it reports
goodput (requests answered without throttling per second, as a share of the
limit) and the share of requests answered 503, or MiB/s without a limit.

Modes: "adaptive" (default bucketfs, limit set), "fixed" (--no-adaptive-rate,
limit set), and without a limit "unlimited" and "unlimited-fixed", whose
throughputs are compared (pacing must cost nothing while the store does not
throttle).

    flock /tmp/bucketfs-bench.lock python3 fio-jobs/harness/throttle_bench.py \\
        [--rate 25] [--read-size 1G] [--write-size 1G] [--walk-dirs 200 --walk-files 10] \\
        [--modes adaptive,fixed,unlimited,unlimited-fixed] [--check-goodput 0.8 --check-503 0.1]

--check-* make the exit status 1 when an adaptive phase misses the bound
(tests/reliability/throttle.sh runs it that way at a small scale).
"""
import argparse
import concurrent.futures
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import BUCKET, ROOT, built, log, parse_size  # noqa: E402

MIB = 1 << 20


class Sim:
    def __init__(self, s3sim, tmp, rate, preloads):
        args = ["bash", os.path.join(ROOT, "tests/fixtures/start-server.sh"), "s3sim",
                "--bucket", BUCKET]
        if rate:
            args += ["--rate-limit", str(rate)]
        for p in preloads:
            args += ["--preload", p]
        env = dict(os.environ, S3SIM_BIN=s3sim, S3_SERVER_TMP=tmp, S3_SERVER_WAIT="120")
        out = subprocess.run(args, env=env, check=True, capture_output=True, text=True).stdout
        self.env = {}
        for line in out.splitlines():
            if line.startswith("export ") and "=" in line:
                k, v = line[len("export "):].split("=", 1)
                self.env[k] = v.strip("'\"")
        self.endpoint = self.env["S3_ENDPOINT"]
        self.pid = int(self.env["S3_SERVER_PID"])

    def _call(self, path, method="GET"):
        req = urllib.request.Request(self.endpoint + "/__s3sim/" + path, method=method)
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.read()

    def reset(self):
        self._call("reset-stats", "POST")

    def stats(self):
        s = json.loads(self._call("stats"))
        return s["total"], s["faults"].get("throttled", 0)

    def stop(self):
        try:
            os.killpg(self.pid, signal.SIGTERM)
        except (ProcessLookupError, PermissionError):
            try:
                os.kill(self.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass


def mount(bucketfs, sim, mnt, extra, logfile):
    os.makedirs(mnt, exist_ok=True)
    env = dict(os.environ, AWS_ACCESS_KEY_ID=sim.env["AWS_ACCESS_KEY_ID"],
               AWS_SECRET_ACCESS_KEY=sim.env["AWS_SECRET_ACCESS_KEY"], AWS_REGION="us-east-1")
    subprocess.run([bucketfs, f"s3://{BUCKET}", mnt, "--endpoint-url", sim.endpoint,
                    "--force-path-style", "--log-file", logfile, "--read-part-size", "4M",
                    "--part-size", "5M"] + extra, env=env, check=True, timeout=60)


def unmount(mnt):
    subprocess.run(["fusermount3", "-u", mnt], check=False, timeout=120)
    deadline = time.time() + 60
    while time.time() < deadline:
        with open("/proc/mounts") as f:
            if not any(line.split()[1] == mnt for line in f):
                return
        time.sleep(0.2)


def phase_read(mnt, size):
    with open(os.path.join(mnt, "read/obj-00000"), "rb", buffering=0) as f:
        n = 0
        while True:
            b = f.read(MIB)
            if not b:
                break
            n += len(b)
    if n != size:
        raise RuntimeError(f"read {n} of {size} bytes")
    return n


def phase_write(mnt, size):
    block = os.urandom(MIB)
    with open(os.path.join(mnt, "written.bin"), "wb") as f:
        for _ in range(size // MIB):
            f.write(block)
    return size


def phase_walk(mnt, dirs, files):
    root = os.path.join(mnt, "walk")

    def one(d):
        n = 0
        with os.scandir(os.path.join(root, d)) as it:
            for e in it:
                e.stat()
                n += 1
        return n
    names = sorted(os.listdir(root))
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        n = sum(pool.map(one, names))
    if n != dirs * files:
        raise RuntimeError(f"walk saw {n} of {dirs * files} files")
    return n


def run_mode(args, mode, bucketfs, s3sim, tmp):
    limited = mode in ("adaptive", "fixed")
    preloads = [f"{BUCKET}/read/:1:{args.read_size}"]
    preloads += [f"{BUCKET}/walk/d{i:04d}/:{args.walk_files}:8K" for i in range(args.walk_dirs)]
    sim = Sim(s3sim, tmp, args.rate if limited else 0, preloads)
    mnt = os.path.join(tmp, f"mnt-{mode}")
    extra = ["--no-adaptive-rate"] if mode in ("fixed", "unlimited-fixed") else []
    rows = []
    try:
        mount(bucketfs, sim, mnt, extra, os.path.join(tmp, f"bucketfs-{mode}.log"))
        time.sleep(1)  # let the rate limiter's burst refill after the mount's own requests
        for name, fn, nbytes in (
                ("read", lambda: phase_read(mnt, args.read_size), args.read_size),
                ("write", lambda: phase_write(mnt, args.write_size), args.write_size),
                ("walk", lambda: phase_walk(mnt, args.walk_dirs, args.walk_files), 0)):
            sim.reset()
            t0 = time.monotonic()
            error = None
            try:
                fn()
            except (OSError, RuntimeError) as e:
                # Retries exhausted (without pacing, say): the phase's row says so.
                error = str(e)
            wall = time.monotonic() - t0
            total, throttled = sim.stats()
            ok = total - throttled
            row = {"mode": mode, "phase": name, "seconds": round(wall, 2), "requests": total,
                   "throttled": throttled, "share_503": round(throttled / max(1, total), 4),
                   "ok_per_s": round(ok / wall, 2)}
            if error:
                row["error"] = error
            elif limited:
                row["goodput"] = round(ok / wall / args.rate, 3)
            if nbytes and not error:
                row["MiB_per_s"] = round(nbytes / MIB / wall, 1)
            rows.append(row)
            log(json.dumps(row))
            time.sleep(1)
    finally:
        unmount(mnt)
        sim.stop()
    return rows


def goodput(row):
    return f"{100 * row['goodput']:.0f}%" if "goodput" in row else ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bucketfs")
    ap.add_argument("--s3sim")
    ap.add_argument("--rate", type=float, default=25)
    ap.add_argument("--read-size", type=parse_size, default=1 << 30)
    ap.add_argument("--write-size", type=parse_size, default=1 << 30)
    ap.add_argument("--walk-dirs", type=int, default=200)
    ap.add_argument("--walk-files", type=int, default=10)
    ap.add_argument("--modes", default="adaptive,fixed,unlimited,unlimited-fixed")
    ap.add_argument("--check-goodput", type=float)
    ap.add_argument("--check-503", type=float)
    args = ap.parse_args()
    bucketfs = built(args.bucketfs, "mount-tools/bucketfs")
    s3sim = built(args.s3sim, "tests/s3sim/s3sim")
    rows = []
    with tempfile.TemporaryDirectory(prefix="throttle-bench-") as tmp:
        for mode in args.modes.split(","):
            rows += run_mode(args, mode, bucketfs, s3sim, tmp)
    print(f"rate limit {args.rate:g} req/s; read {args.read_size >> 20} MiB (4 MiB parts), "
          f"write {args.write_size >> 20} MiB (5 MiB parts), walk {args.walk_dirs} dirs x "
          f"{args.walk_files} files (8 threads)")
    print("| mode | phase | s | requests | 503 share | goodput (of limit) | MiB/s |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['mode']} | {r['phase']} | {r['seconds']} | {r['requests']} | "
              f"{100 * r['share_503']:.1f}% | "
              f"{goodput(r) or r.get('error', '')} | "
              f"{r.get('MiB_per_s', '')} |")
    failed = False
    for r in rows:
        if r["mode"] != "adaptive":
            continue
        if "error" in r:
            print(f"FAIL {r['phase']}: {r['error']}")
            failed = True
            continue
        if args.check_goodput is not None and r["goodput"] < args.check_goodput:
            print(f"FAIL {r['phase']}: goodput {r['goodput']} < {args.check_goodput}")
            failed = True
        if args.check_503 is not None and r["share_503"] > args.check_503:
            print(f"FAIL {r['phase']}: 503 share {r['share_503']} > {args.check_503}")
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
