"""The S3 server of a run (s3sim, shaped s3sim or s3rver, started with
tests/fixtures/start-server.sh) and s3sim's request counters."""
import json
import os
import shutil
import signal
import subprocess
import time
import urllib.request

from common import BUCKET, ROOT, boost, log


def s3sim_knows(s3sim_bin, flag):
    """Whether this s3sim has `flag` (--s3sim-bin may be an older build)."""
    r = subprocess.run([s3sim_bin, "--help"], capture_output=True, text=True)
    return flag in r.stdout + r.stderr


class Server:
    def __init__(self, kind, s3sim_bin, body_pool=0):
        self.kind = kind
        self.env = {}
        base = "s3rver" if kind == "s3rver" else "s3sim"
        args = ["bash", os.path.join(ROOT, "tests/fixtures/start-server.sh"), base, "--bucket", BUCKET]
        if kind == "s3sim-shaped":
            args += ["--ttfb-ms", "20", "--conn-mbps", "100"]
        if base == "s3sim" and body_pool and s3sim_knows(s3sim_bin, "--body-pool"):
            args += ["--body-pool", str(body_pool)]
        env = dict(os.environ, S3SIM_BIN=s3sim_bin)
        out = subprocess.run(args, env=env, check=True, capture_output=True, text=True).stdout
        for line in out.splitlines():
            if line.startswith("export ") and "=" in line:
                k, v = line[len("export "):].split("=", 1)
                self.env[k] = v
        self.endpoint = self.env["S3_ENDPOINT"]
        self.pid = int(self.env["S3_SERVER_PID"])
        boost(self.pid)
        log(f"{kind} at {self.endpoint} (pid {self.pid})")

    def stop(self):
        try:
            os.killpg(self.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        except PermissionError:
            os.kill(self.pid, signal.SIGTERM)
        time.sleep(0.5)
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        shutil.rmtree(self.env.get("S3_SERVER_DIR", "/nonexistent"), ignore_errors=True)

    def client_env(self):
        env = dict(os.environ)
        env.update(self.env)
        return env


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
