"""What a smallfile_bench.py phase does on a target: paths on a FUSE mount,
or boto3 calls for the direct client; and the expected bytes of every file."""
import hashlib
import os
from collections.abc import MutableMapping

import procstats
from common import BUCKET
from pagecache import drop_caches


def content(name, seed, size):
    """The bytes of a file: a function of its name and the run's seed, so a
    read can be checked without keeping what was written."""
    import numpy as np
    h = hashlib.sha256(f"{seed}:{name}".encode()).digest()
    return np.random.Generator(np.random.PCG64(int.from_bytes(h[:16], "little"))).bytes(size)


class Mismatch(Exception):
    pass


def check(name, got, seed, size):
    if len(got) != size or got != content(name, seed, size):
        raise Mismatch(f"{name}: {len(got)} bytes, not the expected {size}")


class FsTarget:
    """Paths on a FUSE mount (bucketfs, its variants, s3fs, rclone)."""

    direct = False

    def __init__(self, mount):
        self.m = mount
        self.root = mount.mnt

    def path(self, key):
        return os.path.join(self.root, key)

    def mkdirs(self, dirs):
        for d in dirs:
            os.makedirs(self.path(d), exist_ok=True)

    def create(self, key, data):
        with open(self.path(key), "wb") as f:
            f.write(data)

    def stat(self, key):
        return os.stat(self.path(key)).st_size

    def lsstat(self, d):
        with os.scandir(self.path(d)) as it:
            return {e.name: e.stat().st_size for e in it}

    def read(self, key):
        with open(self.path(key), "rb") as f:
            return f.read()

    def rename(self, src, dst):
        os.rename(self.path(src), self.path(dst))

    def unlink(self, key):
        os.unlink(self.path(key))

    def zarr_store(self, prefix):
        import zarr
        return zarr.DirectoryStore(self.path(prefix))

    def cpu(self):
        return procstats.proc_cpu(self.m.pid)

    def before_phase(self):
        drop_caches()  # reads go to the daemon, lookups too (dentries dropped)

    def check_alive(self):
        self.m.check_alive()


class S3Store(MutableMapping):
    """A zarr 2 store of boto3 calls under a prefix: the direct client's
    version of the chunk pattern (a PUT or GET per chunk, no rename)."""

    def __init__(self, target, prefix):
        self.t, self.prefix = target, prefix.rstrip("/") + "/"

    def __getitem__(self, key):
        try:
            return self.t.client().get_object(Bucket=BUCKET, Key=self.prefix + key)["Body"].read()
        except self.t.client().exceptions.NoSuchKey:
            raise KeyError(key) from None

    def __setitem__(self, key, value):
        self.t.client().put_object(Bucket=BUCKET, Key=self.prefix + key, Body=bytes(value))

    def __delitem__(self, key):
        self.t.client().delete_object(Bucket=BUCKET, Key=self.prefix + key)

    def __iter__(self):
        pages = self.t.client().get_paginator("list_objects_v2")
        for page in pages.paginate(Bucket=BUCKET, Prefix=self.prefix):
            for o in page.get("Contents", []):
                yield o["Key"][len(self.prefix):]

    def __len__(self):
        return sum(1 for _ in self)


class S3Target:
    """The direct client: boto3 (python3-boto3), one client shared by the
    threads (clients are thread-safe), made before any timing because
    building one costs a noticeable share of a phase's CPU."""

    direct = True

    def __init__(self, server, pool):
        import boto3
        from botocore.config import Config
        env = server.env
        self.c = boto3.session.Session().client(
            "s3", endpoint_url=server.endpoint, region_name="us-east-1",
            aws_access_key_id=env["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=env["AWS_SECRET_ACCESS_KEY"],
            config=Config(s3={"addressing_style": "path"}, max_pool_connections=pool,
                          retries={"max_attempts": 3}))

    def client(self):
        return self.c

    def mkdirs(self, dirs):
        pass  # S3 has no directories

    def create(self, key, data):
        self.client().put_object(Bucket=BUCKET, Key=key, Body=data)

    def stat(self, key):
        return self.client().head_object(Bucket=BUCKET, Key=key)["ContentLength"]

    def lsstat(self, d):
        out = {}
        pages = self.client().get_paginator("list_objects_v2")
        for page in pages.paginate(Bucket=BUCKET, Prefix=d + "/", Delimiter="/"):
            for o in page.get("Contents", []):
                out[o["Key"].rsplit("/", 1)[1]] = o["Size"]
        return out

    def read(self, key):
        return self.client().get_object(Bucket=BUCKET, Key=key)["Body"].read()

    def rename(self, src, dst):
        c = self.client()
        c.copy_object(Bucket=BUCKET, Key=dst, CopySource={"Bucket": BUCKET, "Key": src})
        c.delete_object(Bucket=BUCKET, Key=src)

    def unlink(self, key):
        self.client().delete_object(Bucket=BUCKET, Key=key)

    def zarr_store(self, prefix):
        return S3Store(self, prefix)

    def cpu(self):
        return None  # in the harness's own process, with the harness

    def before_phase(self):
        pass

    def check_alive(self):
        pass
