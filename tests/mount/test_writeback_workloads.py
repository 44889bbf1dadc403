#!/usr/bin/env python3
"""Checkpoint-style writes through a bucketfs mount, each read back
and compared with the same bytes written to a local directory:
  zip     zipfile with several members, one of 100 MiB (zipfile seeks back to
          rewrite each member's local header after its data)
  npz     numpy.savez of a few arrays (zipfile underneath)
  torch   torch.save / torch.load of a state dict of >= 256 MiB
Usage: test_writeback_workloads.py MOUNT_DIR LOCAL_DIR [zip|npz|torch]...
Prints "ok NAME", "FAIL NAME: why" or "SKIP NAME: why"; exits 1 on a failure.
"""
import hashlib
import os
import sys
import zipfile

MiB = 1 << 20


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(4 * MiB), b""):
            h.update(block)
    return h.hexdigest()


def write_zip(path, big):
    stamp = (2024, 1, 2, 3, 4, 6)
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(zipfile.ZipInfo("README.txt", stamp), b"hello from bucketfs\n" * 100)
        info = zipfile.ZipInfo("data/big.bin", stamp)
        info.compress_type = zipfile.ZIP_STORED
        with zf.open(info, "w", force_zip64=True) as dest:  # header rewritten after the data
            for off in range(0, len(big), MiB):
                dest.write(big[off:off + MiB])
        deflated = zipfile.ZipInfo("data/text.txt", stamp)
        deflated.compress_type = zipfile.ZIP_DEFLATED
        zf.writestr(deflated, b"".join(b"line %d\n" % i for i in range(200000)))
        for i in range(5):
            zf.writestr(zipfile.ZipInfo(f"small/{i}.bin", stamp), os.urandom(1000 + i))


def check_zip(mnt, local):
    big = os.urandom(100 * MiB)
    write_zip(os.path.join(local, "a.zip"), big)
    write_zip(os.path.join(mnt, "a.zip"), big)
    # Same bytes, except the 5 random small members: compare those by content.
    with zipfile.ZipFile(os.path.join(mnt, "a.zip")) as zm:
        bad = zm.testzip()
        if bad is not None:
            return f"member {bad} is corrupt"
        if hashlib.sha256(zm.read("data/big.bin")).digest() != hashlib.sha256(big).digest():
            return "data/big.bin differs"
        names = zm.namelist()
        if len(names) != 8:
            return f"members: {names}"
    if os.path.getsize(os.path.join(mnt, "a.zip")) != os.path.getsize(os.path.join(local, "a.zip")):
        return "size differs from the local zip"
    return None


def check_npz(mnt, local):
    try:
        import numpy as np
    except ImportError:
        return "SKIP: numpy is missing (apt-get install python3-numpy)"
    rng = np.random.default_rng(1)
    arrays = {"a": np.arange(1_000_000, dtype=np.int64), "b": rng.random((1000, 1000)),
              "c": np.array(["x", "yy", "zzz"])}
    np.savez(os.path.join(mnt, "arrays.npz"), **arrays)
    np.savez(os.path.join(local, "arrays.npz"), **arrays)
    with np.load(os.path.join(mnt, "arrays.npz")) as got:
        for k, v in arrays.items():
            if not np.array_equal(got[k], v):
                return f"array {k} differs"
    if os.path.getsize(os.path.join(mnt, "arrays.npz")) != os.path.getsize(
            os.path.join(local, "arrays.npz")):
        return "size differs from the local npz"
    return None


def check_torch(mnt, local):
    try:
        import torch
    except ImportError:
        return "SKIP: torch is missing (apt-get install python3-torch)"
    torch.manual_seed(0)
    # 68 tensors of 4 MiB (float32): 272 MiB.
    state = {f"layer{i}.weight": torch.randn(1024, 1024) for i in range(68)}
    path = os.path.join(mnt, "model.pt")
    torch.save(state, path)
    if os.path.getsize(path) < 256 * MiB:
        return f"only {os.path.getsize(path)} bytes"
    loaded = torch.load(path)
    for k, v in state.items():
        if not torch.equal(loaded[k], v):
            return f"tensor {k} differs"
    torch.save(state, os.path.join(local, "model.pt"))
    if os.path.getsize(path) != os.path.getsize(os.path.join(local, "model.pt")):
        return "size differs from the local file"
    return None


def main(argv):
    mnt, local = argv[1], argv[2]
    os.makedirs(local, exist_ok=True)
    wanted = argv[3:] or ["zip", "npz", "torch"]
    checks = {"zip": check_zip, "npz": check_npz, "torch": check_torch}
    failed = 0
    for name in wanted:
        try:
            why = checks[name](mnt, local)
        except OSError as e:
            why = f"{type(e).__name__}: {e}"
        if why is None:
            print(f"ok   {name}", flush=True)
        elif why.startswith("SKIP"):
            print(f"{why.split(':')[0]} {name}:{why.split(':', 1)[1]}", flush=True)
        else:
            print(f"FAIL {name}: {why}", flush=True)
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
