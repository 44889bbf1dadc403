"""The five loader workloads. Each takes a source (wl_source.py), the
manifest and the scale, and returns one result per timed phase: samples,
bytes, seconds, and how many samples did not match their digest."""
import io
import multiprocessing as mp
import random
import time

import numpy as np

import wl_scale as S
from wl_data import digest

FORK = mp.get_context("fork")


def phase(workload, name, samples, nbytes, seconds, bad, **extra):
    return dict(workload=workload, phase=name, samples=samples, bytes=nbytes, seconds=seconds,
                bad=bad, **extra)


# --- unet3d: NPZ volumes read whole by 4 reader processes
def _unet3d_reader(args):
    source, keys, expected = args
    n, bad = 0, 0
    for key in keys:
        arrays = source.np_load(key)
        for name, d in expected[key].items():
            bad += digest(arrays[name].tobytes()) != d
        n += sum(a.nbytes for a in arrays.values())
    return n, bad


def unet3d(source, manifest, scale, **_):
    keys = sorted(manifest["unet3d"])
    random.Random(0).shuffle(keys)
    shares = [(source, keys[i::S.UNET3D_PROCS], manifest["unet3d"]) for i in range(S.UNET3D_PROCS)]
    t = time.monotonic()
    with FORK.Pool(S.UNET3D_PROCS) as pool:
        done = pool.map(_unet3d_reader, shares)
    seconds = time.monotonic() - t
    return [phase("unet3d", "read", len(keys), sum(d[0] for d in done), seconds,
                  sum(d[1] for d in done))]


# --- retinanet: shuffled JPEGs decoded with Pillow in DataLoader workers
class JpegDataset:
    def __init__(self, source, keys, digests):
        self.source, self.keys, self.digests = source, keys, digests

    def __len__(self):
        return len(self.keys)

    def __getitem__(self, i):
        import torch
        from PIL import Image
        from torchvision.transforms.functional import pil_to_tensor
        data = self.source.read_all(self.keys[i])
        ok = digest(data) == self.digests[self.keys[i]]
        image = pil_to_tensor(Image.open(io.BytesIO(data)).convert("RGB"))
        return torch.tensor([len(data), int(ok), image.shape[1]], dtype=torch.int64)


def retinanet(source, manifest, scale, order_hint=None, **_):
    """order_hint: the mountpoint, when the sampler announces each epoch's order to it."""
    import torch
    from torch.utils.data import DataLoader, RandomSampler
    listed = [k for k in source.list_dir(f"{S.PREFIX}retinanet/") if k.endswith(".jpg")]
    if listed != sorted(manifest["retinanet"]):
        raise RuntimeError(f"listing shows {len(listed)} images, the manifest {len(manifest['retinanet'])}")
    ds = JpegDataset(source, listed, manifest["retinanet"])
    sampler = RandomSampler(ds, generator=torch.Generator().manual_seed(manifest["seed"]))
    if order_hint:
        from bucketfs_order import OrderedSampler
        sampler = OrderedSampler(sampler, [source.path(k) for k in listed], order_hint)
    loader = DataLoader(ds, batch_size=S.RETINANET_BATCH, sampler=sampler,
                        num_workers=S.RETINANET_WORKERS)
    out = []
    for epoch in (1, 2):
        t = time.monotonic()
        n, nbytes, good = 0, 0, 0
        for batch in loader:
            n += batch.shape[0]
            nbytes += int(batch[:, 0].sum())
            good += int(batch[:, 1].sum())
        out.append(phase("retinanet", f"epoch{epoch}", n, nbytes, time.monotonic() - t, n - good))
    return out


# --- parquet-like: footer, then scattered column chunks
FOOTER_READ = 64 << 10  # what parquet readers read from the end first


def parquet(source, manifest, scale, **_):
    n, nbytes, bad = 0, 0, 0
    t = time.monotonic()
    for key in sorted(manifest["parquet"]):
        expected = {(c["group"], c["column"]): c for c in manifest["parquet"][key]}
        size = source.size(key)
        f = source.open_reader(key)
        try:
            tail = source.pread(f, size - min(FOOTER_READ, size), min(FOOTER_READ, size))
            flen = int.from_bytes(tail[-8:-4], "little")
            if tail[-4:] != b"PAR1":
                raise RuntimeError(f"{key}: no parquet magic at its end")
            if flen + 8 > len(tail):
                tail = source.pread(f, size - flen - 8, flen + 8)
            import json
            meta = json.loads(tail[-8 - flen:-8])
            nbytes += len(tail)
            # A query reads some columns of every row group: 3 of 8 here.
            wanted = [c for c in meta["chunks"] if c["column"] in (1, 3, 6)]
            for c in wanted:
                data = source.pread(f, c["offset"], c["length"])
                bad += digest(data) != expected[(c["group"], c["column"])]["digest"]
                n += 1
                nbytes += len(data)
        finally:
            f.close()
    return [phase("parquet", "read", n, nbytes, time.monotonic() - t, bad)]


# --- HDF5: random batches of rows
H5_BATCH = 32


def hdf5(source, manifest, scale, **_):
    import h5py
    digests = manifest["hdf5"][S.HDF5_KEY]
    rows = len(digests)
    rng = np.random.default_rng(manifest["seed"])
    batches = max(8, rows // 4 // H5_BATCH)  # a quarter of the rows
    n, nbytes, bad = 0, 0, 0
    raw = source.open_reader(S.HDF5_KEY)
    t = time.monotonic()
    with h5py.File(raw, "r") as f:
        ds = f["rows"]
        for _ in range(batches):
            idx = np.sort(rng.choice(rows, H5_BATCH, replace=False))
            block = ds[idx]
            for i, r in zip(idx, block):
                bad += digest(r.tobytes()) != digests[i]
            n += len(idx)
            nbytes += block.nbytes
    raw.close()
    return [phase("hdf5", "read", n, nbytes, time.monotonic() - t, bad)]


# --- checkpoint: torch.save of a state dict, torch.load back; and 8 shards at once
def state_dict(size, seed):
    import torch
    g = torch.Generator().manual_seed(seed)
    tensors, left, i = {}, size, 0
    while left > 0:
        n = min(left, 16 << 20) // 4
        tensors[f"layer{i:03d}.weight"] = torch.randn(n, generator=g)
        left -= n * 4
        i += 1
    return tensors


def _bad_tensors(loaded, expected):
    import torch
    if set(loaded) != set(expected):
        return len(expected)
    return sum(not torch.equal(loaded[k], expected[k]) for k in expected)


def _wait_stored(store, key, at_least):
    """Seconds until the store holds key with at_least bytes (a mount that
    uploads after close is not done before)."""
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        try:
            if store.size(key) >= at_least:
                return
        except Exception:
            pass
        time.sleep(0.05)
    raise RuntimeError(f"{key} did not reach the store")


def _shard_job(source, store, key, size, seed, barrier, what, results):
    tensors = state_dict(size, seed)
    barrier.wait()
    t = time.monotonic()
    if what == "save":
        source.save_torch(tensors, key)
        _wait_stored(store, key, size)
        bad = 0
    else:
        bad = _bad_tensors(source.load_torch(key), tensors)
    results.put((time.monotonic() - t, bad, len(tensors), store.size(key)))


def checkpoint(source, manifest, scale, target, store, **_):
    """store: the direct client, which says when a save is in the bucket."""
    size = S.SCALES[scale]["ckpt_size"]
    seed = manifest["seed"]
    key = S.ckpt_dir(target) + "model.pt"
    out = []
    tensors = state_dict(size, seed)
    t = time.monotonic()
    source.save_torch(tensors, key)
    _wait_stored(store, key, size)
    stored = store.size(key)
    out.append(phase("checkpoint", "save", len(tensors), stored, time.monotonic() - t, 0))
    t = time.monotonic()
    loaded = source.load_torch(key)
    seconds = time.monotonic() - t
    out.append(phase("checkpoint", "load", len(tensors), stored, seconds,
                     _bad_tensors(loaded, tensors)))
    del loaded, tensors
    shard = size // S.CKPT_SHARDS
    for what in ("save", "load"):
        barrier, results = FORK.Barrier(S.CKPT_SHARDS + 1), FORK.Queue()
        procs = [FORK.Process(target=_shard_job, args=(
            source, store, S.ckpt_dir(target) + f"shard-{i}.pt", shard, seed + 1 + i, barrier,
            what, results)) for i in range(S.CKPT_SHARDS)]
        for p in procs:
            p.start()
        barrier.wait(timeout=600)  # every shard generated: the clock starts
        t = time.monotonic()
        done = [results.get(timeout=1800) for _ in procs]
        seconds = time.monotonic() - t
        for p in procs:
            p.join()
        out.append(phase("checkpoint", f"sharded-{what}", sum(d[2] for d in done),
                         sum(d[3] for d in done), seconds, sum(d[1] for d in done)))
    # Measured: gone from the bucket, so that an in-memory server holds one
    # target's checkpoints at a time (a full-scale run holds 4 GiB per target).
    for k in [key] + [S.ckpt_dir(target) + f"shard-{i}.pt" for i in range(S.CKPT_SHARDS)]:
        store.delete(k)
    return out


WORKLOADS = {"unet3d": unet3d, "retinanet": retinanet, "parquet": parquet, "hdf5": hdf5,
             "checkpoint": checkpoint}
