"""The sizes of each scale and where each workload's objects live in the bucket."""
MIB = 1 << 20
GIB = 1 << 30

# Everything the suite writes is under this prefix of the bucket.
PREFIX = "wl/"

SCALES = {
    # CI: a few minutes on plain s3sim.
    "small": dict(unet3d_files=4, unet3d_size=8 * MIB, retinanet_files=400, parquet_files=1,
                  parquet_size=32 * MIB, ckpt_size=64 * MIB, hdf5_rows=4096),
    # Figures on a shaped server within the hour.
    "medium": dict(unet3d_files=8, unet3d_size=140 * MIB, retinanet_files=4000, parquet_files=1,
                   parquet_size=256 * MIB, ckpt_size=512 * MIB, hdf5_rows=65536),
    # MLPerf-Storage-like sizes (by hand; s3sim holds them all in memory).
    "full": dict(unet3d_files=32, unet3d_size=140 * MIB, retinanet_files=20000, parquet_files=2,
                 parquet_size=256 * MIB, ckpt_size=2 * GIB + 64 * MIB, hdf5_rows=262144),
}

HDF5_ROW_FLOATS = 1024   # 4 KiB rows
PARQUET_COLUMNS = 8
PARQUET_ROW_GROUPS_PER_256MIB = 8
RETINANET_SIDES = (330, 470)  # square noise JPEGs of these sides at quality 90: 100-200 KiB
CKPT_SHARDS = 8
UNET3D_PROCS = 4
RETINANET_WORKERS = 4
RETINANET_BATCH = 16


def unet3d_key(i):
    return f"{PREFIX}unet3d/sample_{i:04d}.npz"


def retinanet_key(i):
    return f"{PREFIX}retinanet/img_{i:06d}.jpg"


def parquet_key(i):
    return f"{PREFIX}parquet/part-{i:03d}.parquet"


HDF5_KEY = f"{PREFIX}hdf5/rows.h5"


def ckpt_dir(target):
    return f"{PREFIX}ckpt/{target}/"


# Objects that make every directory a listing shows hold an object itself:
# s3rver leaves out of a delimiter listing the prefixes that hold only
# prefixes, and rclone then finds no directory there.
MARKERS = [f"{PREFIX}.keep"] + [f"{PREFIX}{d}/.keep" for d in
                                ("unet3d", "retinanet", "parquet", "hdf5", "ckpt")]
