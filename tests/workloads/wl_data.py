"""The suite's data, made from a seed: generated once into a local cache
directory (reused by later runs of the same scale and seed), uploaded to
each run's server, and described by a manifest of digests that every
sample read is checked against."""
import concurrent.futures
import hashlib
import io
import json
import os

import numpy as np

import wl_scale as S


def digest(data):
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _unet3d(i, size, seed):
    rng = np.random.default_rng([seed, 1, i])
    n_x = (size * 4 // 5) // 4
    x = np.frombuffer(rng.bytes(n_x * 4), dtype=np.float32)
    y = np.frombuffer(rng.bytes(size - n_x * 4 - 512), dtype=np.uint8)
    buf = io.BytesIO()
    np.savez(buf, x=x, y=y)
    return buf.getvalue(), {"x": digest(x.tobytes()), "y": digest(y.tobytes())}


def _jpeg(i, seed):
    from PIL import Image
    rng = np.random.default_rng([seed, 2, i])
    side = int(rng.integers(*S.RETINANET_SIDES))
    pixels = rng.integers(0, 256, (side, side, 3), dtype=np.uint8)
    buf = io.BytesIO()
    Image.fromarray(pixels).save(buf, format="JPEG", quality=90)
    return buf.getvalue()


def _parquet(i, size, seed):
    """A file laid out as parquet lays out its bytes: magic, row groups of
    column chunks one after another, then the footer (the metadata, which
    gives each chunk's offset and length), its 4-byte length and the magic."""
    rng = np.random.default_rng([seed, 3, i])
    groups = max(1, S.PARQUET_ROW_GROUPS_PER_256MIB * size // (256 * S.MIB))
    weights = np.array([1, 3, 2, 8, 1, 4, 2, 6][:S.PARQUET_COLUMNS], dtype=float)
    per_group = size // groups
    out = io.BytesIO()
    out.write(b"PAR1")
    chunks = []
    for g in range(groups):
        for c, w in enumerate(weights):
            n = int(per_group * w / weights.sum())
            data = rng.bytes(n)
            chunks.append({"group": g, "column": c, "offset": out.tell(), "length": n,
                           "digest": digest(data)})
            out.write(data)
    footer = json.dumps({"row_groups": groups, "columns": len(weights), "chunks": chunks}).encode()
    out.write(footer)
    out.write(len(footer).to_bytes(4, "little"))
    out.write(b"PAR1")
    return out.getvalue(), chunks


def _hdf5(path, rows, seed):
    import h5py
    rng = np.random.default_rng([seed, 4])
    digests = []
    with h5py.File(path, "w") as f:
        ds = f.create_dataset("rows", (rows, S.HDF5_ROW_FLOATS), dtype="float32")
        step = 4096
        for start in range(0, rows, step):
            n = min(step, rows - start)
            block = np.frombuffer(rng.bytes(n * S.HDF5_ROW_FLOATS * 4), dtype=np.float32)
            block = block.reshape(n, S.HDF5_ROW_FLOATS)
            ds[start:start + n] = block
            digests += [digest(r.tobytes()) for r in block]
    return digests


def generate(scale, seed, cache_root):
    """The local directory holding this scale's objects (by key) and manifest.json."""
    cfg = S.SCALES[scale]
    root = os.path.join(cache_root, f"{scale}-seed{seed}")
    manifest_path = os.path.join(root, "manifest.json")
    if os.path.exists(manifest_path):
        return root
    manifest = {"scale": scale, "seed": seed, "unet3d": {}, "retinanet": {}, "parquet": {},
                "hdf5": {}}

    def write(key, data):
        p = os.path.join(root, key)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb") as f:
            f.write(data)

    for i in range(cfg["unet3d_files"]):
        data, d = _unet3d(i, cfg["unet3d_size"], seed)
        write(S.unet3d_key(i), data)
        manifest["unet3d"][S.unet3d_key(i)] = d
    with concurrent.futures.ProcessPoolExecutor(2) as pool:
        for i, data in enumerate(pool.map(_jpeg, range(cfg["retinanet_files"]),
                                          [seed] * cfg["retinanet_files"], chunksize=64)):
            write(S.retinanet_key(i), data)
            manifest["retinanet"][S.retinanet_key(i)] = digest(data)
    for i in range(cfg["parquet_files"]):
        data, chunks = _parquet(i, cfg["parquet_size"], seed)
        write(S.parquet_key(i), data)
        manifest["parquet"][S.parquet_key(i)] = chunks
    h5 = os.path.join(root, S.HDF5_KEY)
    os.makedirs(os.path.dirname(h5), exist_ok=True)
    manifest["hdf5"] = {S.HDF5_KEY: _hdf5(h5, cfg["hdf5_rows"], seed)}
    for m in S.MARKERS:
        write(m, b"")
    with open(manifest_path + ".tmp", "w") as f:
        json.dump(manifest, f)
    os.replace(manifest_path + ".tmp", manifest_path)
    return root


def upload(source, root, workloads):
    """Puts the files of these workloads under root, and the directory
    markers, into the bucket, by key."""
    dirs = tuple(f"{S.PREFIX}{w}/" for w in workloads)
    files = []
    for d, _, names in os.walk(root):
        for n in names:
            p = os.path.join(d, n)
            key = os.path.relpath(p, root)
            if key in S.MARKERS or key.startswith(dirs):
                files.append((p, key))
    client = source.client()

    def put(item):
        client.upload_file(item[0], source.bucket, item[1])

    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        list(pool.map(put, files))
    return len(files)


def load_manifest(root):
    with open(os.path.join(root, "manifest.json")) as f:
        return json.load(f)
