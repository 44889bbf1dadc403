"""How a workload reaches its objects: files under a mountpoint, or the
direct S3 client (boto3) on the same objects. Both are picklable (only
their configuration is), so that reader processes and DataLoader workers
make their own connections."""
import io
import os

MIB = 1 << 20


class MountSource:
    direct = False

    def __init__(self, root):
        self.root = root

    def path(self, key):
        return os.path.join(self.root, key)

    def read_all(self, key):
        with open(self.path(key), "rb") as f:
            return f.read()

    def size(self, key):
        return os.stat(self.path(key)).st_size

    def open_reader(self, key):
        """A file object for preads (os.pread on its fileno) and h5py."""
        return open(self.path(key), "rb", buffering=0)

    def pread(self, f, offset, n):
        return os.pread(f.fileno(), n, offset)

    def list_dir(self, key_dir):
        return sorted(key_dir + n for n in os.listdir(self.path(key_dir)))

    def save_torch(self, obj, key):
        import torch
        os.makedirs(os.path.dirname(self.path(key)), exist_ok=True)
        torch.save(obj, self.path(key))

    def load_torch(self, key):
        import torch
        return torch.load(self.path(key))

    def np_load(self, key):
        import numpy as np
        with np.load(self.path(key)) as z:
            return {k: z[k] for k in z.files}


def _without_expect(request, **_):
    """Sends bodies without `Expect: 100-continue`. botocore (1.29) puts it
    on every PUT, and when a server answers a PUT of no bytes at once (as
    HTTP allows), botocore keeps that answer's status line for the pooled
    connection and reads the next response on it against it: that request
    hangs for the 60 s read timeout, then is retried (boto/botocore#3755).
    The header is not signed, so dropping it keeps the signature."""
    request.headers.pop("Expect", None)


class S3Source:
    direct = True

    def __init__(self, endpoint, access_key, secret_key, bucket):
        self.endpoint, self.access_key, self.secret_key = endpoint, access_key, secret_key
        self.bucket = bucket
        self._client = None
        self._client_pid = None

    def __getstate__(self):
        d = dict(self.__dict__)
        d["_client"] = None
        return d

    def client(self):
        # One client per process: a forked worker (DataLoader, the shard
        # savers) that used its parent's client would share its pooled
        # sockets, and requests and answers of two processes would interleave.
        if self._client is None or self._client_pid != os.getpid():
            self._client_pid = os.getpid()
            import boto3
            from botocore.config import Config
            self._client = boto3.client(
                "s3", endpoint_url=self.endpoint, aws_access_key_id=self.access_key,
                aws_secret_access_key=self.secret_key, region_name="us-east-1",
                config=Config(s3={"addressing_style": "path"}, max_pool_connections=32,
                              retries={"max_attempts": 3}))
            self._client.meta.events.register("before-send.s3", _without_expect)
        return self._client

    def read_all(self, key):
        return self.client().get_object(Bucket=self.bucket, Key=key)["Body"].read()

    def size(self, key):
        return self.client().head_object(Bucket=self.bucket, Key=key)["ContentLength"]

    def delete(self, key):
        self.client().delete_object(Bucket=self.bucket, Key=key)

    def open_reader(self, key):
        return RangeFile(self, key)

    def pread(self, f, offset, n):
        return f.pread(offset, n)

    def get_range(self, key, offset, n):
        r = self.client().get_object(Bucket=self.bucket, Key=key,
                                     Range=f"bytes={offset}-{offset + n - 1}")
        return r["Body"].read()

    def list_dir(self, key_dir):
        keys = []
        for page in self.client().get_paginator("list_objects_v2").paginate(
                Bucket=self.bucket, Prefix=key_dir, Delimiter="/"):
            keys += [o["Key"] for o in page.get("Contents", [])]
        return sorted(keys)

    def save_torch(self, obj, key):
        import torch
        buf = io.BytesIO()
        torch.save(obj, buf)
        buf.seek(0)
        self.client().upload_fileobj(buf, self.bucket, key)

    def load_torch(self, key):
        import torch
        buf = io.BytesIO()
        self.client().download_fileobj(self.bucket, key, buf)
        buf.seek(0)
        return torch.load(buf)

    def np_load(self, key):
        import numpy as np
        with np.load(io.BytesIO(self.read_all(key))) as z:
            return {k: z[k] for k in z.files}


class RangeFile(io.RawIOBase):
    """A read-only file over ranged GETs, for h5py and preads: each read is
    one GET of exactly its bytes, except the file's first MiB (where HDF5
    keeps its superblock and object headers), fetched once and kept."""

    HEAD = MIB

    def __init__(self, source, key):
        super().__init__()
        self.source, self.key = source, key
        self.length = source.size(key)
        self.pos = 0
        self.head = None

    def readable(self):
        return True

    def seekable(self):
        return True

    def seek(self, offset, whence=io.SEEK_SET):
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self.pos, io.SEEK_END: self.length}[whence]
        self.pos = base + offset
        return self.pos

    def tell(self):
        return self.pos

    def pread(self, offset, n):
        n = max(0, min(n, self.length - offset))
        if n == 0:
            return b""
        if offset + n <= self.HEAD:
            if self.head is None:
                self.head = self.source.get_range(self.key, 0, min(self.HEAD, self.length))
            return self.head[offset:offset + n]
        return self.source.get_range(self.key, offset, n)

    def readinto(self, b):
        data = self.pread(self.pos, len(b))
        b[:len(data)] = data
        self.pos += len(data)
        return len(data)
