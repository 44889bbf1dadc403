"""Runs one fio job file and times its I/O, leaving fio's start-up and exit out."""
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time

from close_watch import CloseWatch
from common import ROOT, boost, log

JOBDIR = os.path.join(ROOT, "fio-jobs")


def stamped_jobfile(jobfile, stamp):
    """A copy of the job file (next to `stamp`) whose jobs each append the
    time (ns since the epoch) to `stamp` when they start (exec_prerun runs
    before a job opens its files), so that fio's own start-up (parsing,
    forking, shared memory) stays out of the I/O time."""
    with open(os.path.join(JOBDIR, jobfile)) as f:
        text = f.read()
    line = f"exec_prerun=sh -c 'date +%s%N >> {stamp}'\n"
    if "[global]\n" in text:
        text = text.replace("[global]\n", "[global]\n" + line, 1)
    else:
        text = "[global]\n" + line + text
    path = stamp + ".fio"
    with open(path, "w") as f:
        f.write(text)
    return path


def fio_run(jobfile, env, timeout, extra=(), watch_dir=None):
    """Runs a job file; returns fio's first job report, the wall time of the
    fio process, the I/O wall time and what ended it. The I/O wall time runs
    from the first job's start (after fio's start-up) to the last close of a
    file written in `watch_dir` ("close": fsync and close are inside, fio's
    exit is not; see close_watch.py), or to fio's exit ("exit") when no
    directory is given or no close was seen."""
    t0 = time.monotonic()
    watch = CloseWatch(watch_dir).start() if watch_dir else None
    stampdir = tempfile.mkdtemp(prefix="fio-stamp-")
    stamp = os.path.join(stampdir, "start")
    cmd = ["fio", "--output-format=json", *extra, stamped_jobfile(jobfile, stamp)]
    log("$ " + " ".join(cmd) + f"   (timeout {timeout:.0f} s)")
    # Own process group: on a timeout every fio worker is killed, not only the parent.
    # cwd: fio saves each job's prerun output as JOB.prerun.txt there.
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True, cwd=stampdir)
    boost(p.pid)
    try:
        out, err = p.communicate(timeout=timeout)
    except BaseException:
        os.killpg(p.pid, signal.SIGKILL)
        try:  # workers blocked in a FUSE request only go once the daemon is gone
            p.communicate(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        raise
    finally:
        exit_ns = time.time_ns()
        if watch:
            watch.stop()
    r = subprocess.CompletedProcess(cmd, p.returncode, out, err)
    wall = time.monotonic() - t0
    end_ns, end_by = exit_ns, "exit"
    try:
        with open(stamp) as f:
            starts = [int(x) for x in f.read().split()]
    except (OSError, ValueError):
        starts = []
    shutil.rmtree(stampdir, ignore_errors=True)
    closed_ns = watch.last_close_ns() if watch else None
    if closed_ns and starts and min(starts) < closed_ns <= end_ns:
        end_ns, end_by = closed_ns, "close"
    io_wall = (end_ns - min(starts)) / 1e9 if starts else wall
    io_wall = min(wall, io_wall) if io_wall > 0 else wall
    if end_by == "close":
        log(f"fio: files closed {(exit_ns - end_ns) / 1e6:.1f} ms before fio's exit")
    text = r.stdout[r.stdout.find("{"):] if "{" in r.stdout else ""
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if r.returncode != 0 or not data:
        # fio prints its own complaint on stderr ("fio: io_u error on file ...").
        errs = [f"job error {j.get('error')} ({os.strerror(j.get('error'))})"
                for j in (data or {}).get("jobs", []) if j.get("error")]
        raise RuntimeError(f"fio exited {r.returncode}: {'; '.join(errs)} "
                           f"{r.stderr.strip()[-800:]}")
    return data["jobs"][0], wall, io_wall, end_by
