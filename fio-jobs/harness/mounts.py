"""FUSE mounts of the targets (bucketfs, s3fs, rclone, nullfs), each
daemon in the foreground so that its pid is the harness's, and the
tear-down that leaves no mount behind."""
import os
import shutil
import signal
import subprocess
import tempfile
import time

from common import BUCKET, boost, log, tail


def is_mounted(path):
    path = os.path.realpath(path)
    with open("/proc/mounts") as f:
        return any(line.split()[1] == path for line in f)


def rclone_env(env, endpoint):
    """env plus rclone's configuration of the remote `s3:` for endpoint."""
    env = dict(env)
    env.pop("AWS_CA_BUNDLE", None)
    env.update({
        "RCLONE_CONFIG_S3_TYPE": "s3", "RCLONE_CONFIG_S3_PROVIDER": "Other",
        "RCLONE_CONFIG_S3_ENDPOINT": endpoint,
        "RCLONE_CONFIG_S3_ACCESS_KEY_ID": env["AWS_ACCESS_KEY_ID"],
        "RCLONE_CONFIG_S3_SECRET_ACCESS_KEY": env["AWS_SECRET_ACCESS_KEY"],
        "RCLONE_CONFIG_S3_REGION": "us-east-1", "RCLONE_CONFIG_S3_FORCE_PATH_STYLE": "true",
    })
    return env


class Mount:
    """A FUSE daemon in the foreground: bucketfs, s3fs, rclone or nullfs."""

    def __init__(self, target, server, bins, workdir, write, bucketfs_opts=(), nullfs_opts=(),
                 size=1 << 30, rclone_opts=("--vfs-cache-mode", "off"), label=None):
        """label names the mount directory and log (default: target), so that
        variants of one daemon (smallfile_bench.py) keep their logs apart."""
        self.target = target
        label = label or target
        self.mnt = tempfile.mkdtemp(prefix=f"mnt-{label}-", dir=workdir)
        self.log_path = os.path.join(workdir, f"{label}-daemon.log")
        env = server.client_env()
        ep = server.endpoint
        if target in ("bucketfs", "base"):  # base: the same mount with --base-bin
            cmd = [bins[target], f"s3://{BUCKET}", self.mnt, "--endpoint-url", ep,
                   "--force-path-style", "-f", "--allow-delete", "--allow-overwrite",
                   "--log-level", "warn", *bucketfs_opts]
        elif target == "s3fs":
            pw = os.path.join(workdir, "s3fs.passwd")
            with open(os.open(pw, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as f:
                f.write(f"{env['AWS_ACCESS_KEY_ID']}:{env['AWS_SECRET_ACCESS_KEY']}\n")
            cmd = ["s3fs", BUCKET, self.mnt, "-f", "-o", f"url={ep}", "-o", "use_path_request_style",
                   "-o", f"passwd_file={pw}", "-o", "endpoint=us-east-1"]
        elif target == "rclone":
            env = rclone_env(env, ep)
            # off (the default here): reads and writes stream; "writes" would
            # upload after close, so a fio figure would measure the local disk.
            cmd = ["rclone", "mount", f"s3:{BUCKET}", self.mnt, *rclone_opts]
        elif target == "nullfs":
            # The jobs' layout (seq/file-0..7, write/) with no server behind it.
            cmd = [bins["nullfs"], self.mnt, "--files", "8", "--size", str(size), *nullfs_opts]
        else:
            raise ValueError(target)
        log("$ " + " ".join(cmd))
        self.logf = open(self.log_path, "ab")
        self.proc = subprocess.Popen(cmd, env=env, stdout=self.logf, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        deadline = time.time() + 30
        while not is_mounted(self.mnt):
            if self.proc.poll() is not None:
                raise RuntimeError(f"{target} exited {self.proc.returncode} before mounting; "
                                   f"log: {tail(self.log_path)}")
            if time.time() > deadline:
                raise RuntimeError(f"{target} did not mount within 30 s; log: {tail(self.log_path)}")
            time.sleep(0.1)
        self.pid = self.proc.pid
        boost(self.pid)

    def check_alive(self):
        """Raises if the daemon died under the workload (crash, abort)."""
        if self.proc.poll() is not None:
            rc = self.proc.returncode
            why = f"signal {signal.Signals(-rc).name}" if rc < 0 else f"status {rc}"
            raise RuntimeError(f"{self.target} daemon (pid {self.pid}) died with {why}; "
                               f"log tail: {tail(self.log_path, 600)}")

    def close(self):
        if is_mounted(self.mnt):
            subprocess.run(["fusermount3", "-uz", self.mnt], capture_output=True)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            log(f"{self.target} did not exit after unmount; killing pid {self.proc.pid}")
            self.proc.kill()
            self.proc.wait()
        self.logf.close()
        try:
            os.rmdir(self.mnt)
        except OSError:
            pass


def tear_down(workdir, server, out):
    """Unmounts what is left under workdir, stops the server, keeps the daemons' logs in out."""
    with open("/proc/mounts") as f:
        for line in f:
            mp = line.split()[1]
            if mp.startswith(workdir):
                subprocess.run(["fusermount3", "-uz", mp], capture_output=True)
    if server:
        server.stop()
    for name in os.listdir(workdir) if os.path.isdir(workdir) else []:
        if name.endswith("-daemon.log"):
            shutil.copy(os.path.join(workdir, name), out)
    shutil.rmtree(workdir, ignore_errors=True)
