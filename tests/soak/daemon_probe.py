#!/usr/bin/env python3
"""What the soak measures of the daemon: its memory, its descriptors and the
inodes and handles it holds for the kernel.

  daemon_probe.py snapshot --pid PID --metrics URL          JSON on stdout
  daemon_probe.py settle --pid PID --metrics URL --baseline FILE [--timeout S]
      drops the kernel's unused dentries and inodes (their FORGETs reach the
      daemon), then waits until the daemon is back to the baseline: inodes
      and open handles, and descriptors other than its store connections.
      Prints the last snapshot; exit 1 if it did not get back in time.
"""
import argparse
import json
import os
import sys
import threading
import time
import urllib.request


def status_kib(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def fds(pid):
    """Descriptors by class: socket, pipe, anon (eventfd, epoll...), fuse, file."""
    out = {"socket": 0, "pipe": 0, "anon": 0, "fuse": 0, "file": 0}
    files = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue  # closed meanwhile
        if target.startswith("socket:"):
            out["socket"] += 1
        elif target.startswith("pipe:"):
            out["pipe"] += 1
        elif target.startswith("anon_inode:"):
            out["anon"] += 1
        elif target == "/dev/fuse":
            out["fuse"] += 1
        else:
            out["file"] += 1
            files.append(target)
    return out, sorted(files)


def metrics(url):
    """Sample name (with labels) -> value, from the Prometheus text."""
    with urllib.request.urlopen(url, timeout=30) as r:
        text = r.read().decode()
    values = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            values[name] = float(value)
    return values


def snapshot(pid, url):
    m = metrics(url)
    by_class, files = fds(pid)
    return {
        "rss_bytes": status_kib(pid, "VmRSS") << 10,
        "rss_peak_bytes": status_kib(pid, "VmHWM") << 10,
        "threads": status_kib(pid, "Threads"),
        "fds": by_class,
        "fd_total": sum(by_class.values()),
        "fd_files": files,
        "inodes": m.get("bucketfs_inodes", -1),
        "open_files": m.get('bucketfs_open_handles{kind="file"}', -1),
        "open_dirs": m.get('bucketfs_open_handles{kind="dir"}', -1),
        "forgets": m.get('bucketfs_fuse_ops_total{op="forget"}', -1),
        "lookups": m.get('bucketfs_fuse_ops_total{op="lookup"}', -1),
        "read_memory_bytes": m.get("bucketfs_memory_in_use_bytes", -1),
        "upload_memory_bytes": m.get("bucketfs_upload_memory_in_use_bytes", -1),
        "staging_bytes": m.get("bucketfs_staging_bytes", -1),
    }


def settled(now, base):
    """Back where it started: the same descriptors except store connections
    (a pool that keeps idle ones), no more inodes, no handle open."""
    non_socket = {k: v for k, v in now["fds"].items() if k != "socket"}
    base_non_socket = {k: v for k, v in base["fds"].items() if k != "socket"}
    return (non_socket == base_non_socket and now["inodes"] <= base["inodes"]
            and now["open_files"] == 0 and now["open_dirs"] == 0)


def drop_kernel_caches():
    # 2: dentries and inodes only; the kernel sends FORGET for each inode it evicts.
    os.sync()
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("2\n")


class RssSampler:
    """The daemon's RSS every 0.5 s while the load runs, in a thread."""

    def __init__(self, pid):
        self.pid, self.samples, self.peak = pid, [], 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.is_set():
            try:
                rss = status_kib(self.pid, "VmRSS") << 10
            except OSError:
                return
            self.samples.append(rss)
            self.peak = max(self.peak, rss)
            self._stop.wait(0.5)

    def start(self):
        self._thread.start()

    def stop(self):
        self._stop.set()
        self._thread.join()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("command", choices=["snapshot", "settle"])
    p.add_argument("--pid", type=int, required=True)
    p.add_argument("--metrics", required=True)
    p.add_argument("--baseline")
    p.add_argument("--timeout", type=float, default=60)
    args = p.parse_args()
    if args.command == "snapshot":
        print(json.dumps(snapshot(args.pid, args.metrics)))
        return 0
    with open(args.baseline) as f:
        base = json.load(f)
    deadline = time.time() + args.timeout
    while True:
        drop_kernel_caches()
        now = snapshot(args.pid, args.metrics)
        if settled(now, base) or time.time() > deadline:
            break
        time.sleep(1)
    print(json.dumps(now))
    return 0 if settled(now, base) else 1


if __name__ == "__main__":
    sys.exit(main())
