"""What every harness module needs: the checkout, the bucket, logging,
sizes, built binaries, commands, and the autogroup nice of the sessions it
starts."""
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUCKET = "bench"
GIB = 1 << 30
# Build directories searched for binaries not named on the command line.
BUILD_DIRS = ("build-harness", "build/release", "build")


AUTOGROUP_NICE = []  # [n] with --autogroup-nice


def boost(pid):
    """With --autogroup-nice, sets the nice value of pid's session group.

    With kernel.sched_autogroup_enabled=1 a process's nice value only counts
    inside its own session, so a `nice -n 19` build in another shell would
    otherwise get as much CPU as each of the benchmark's sessions."""
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


def built(explicit, relpath):
    """explicit, or the newest build of relpath (mount-tools/bucketfs) in BUILD_DIRS."""
    return find_bin(explicit, [os.path.join(ROOT, d, relpath) for d in BUILD_DIRS])


def run(cmd, env=None, timeout=None, check=True):
    log("$ " + " ".join(cmd))
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    if check and r.returncode != 0:
        raise RuntimeError(f"{cmd[0]} exited {r.returncode}: {r.stderr.strip()[-2000:]}")
    return r


def tail(path, n=1500):
    try:
        with open(path, "rb") as f:
            return f.read()[-n:].decode(errors="replace").strip()
    except OSError:
        return ""
