#!/usr/bin/env python3
"""Real programs updating files on a mount, in two phases around a remount
(programs.sh): `write` creates and updates each program's files under DIR,
`verify` (after the remount) reads them back and judges.

  sqlite3     Python's sqlite3: create a database, insert, commit, update, commit
  h5py        an HDF5 file made with mode "w", updated with "r+" and "a"
  memmap      numpy.memmap "w+", then "r+" updates, flushed
  tar_append  tar -cf, then tar --append onto the archive

Usage: programs.py write DIR STATE_FILE
       programs.py verify DIR STATE_FILE EXPECTED_FILE
verify's exit status: 1 if a program failed that expected_differences does
not list as programs/NAME, or a listed one passes (remove its line); 77 if
only listed ("pending") programs failed; 0 if every program passed."""
import json
import os
import subprocess
import sys
import tempfile

SKIP = 77
ROWS = 2000
STEP = [""]  # the step a program is at, for the reason of a failure


def step(text):
    STEP[0] = text


def write_sqlite3(d):
    import sqlite3
    step("create, insert, commit")
    con = sqlite3.connect(os.path.join(d, "db.sqlite"))
    con.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, value REAL)")
    con.executemany("INSERT INTO t VALUES (?, ?, ?)",
                    ((i, f"row {i}", i * 0.5) for i in range(ROWS)))
    con.commit()
    step("update, delete, commit")
    con.execute("UPDATE t SET value = -1 WHERE id % 10 = 0")
    con.execute("DELETE FROM t WHERE id >= ?", (ROWS - 100,))
    con.commit()
    assert con.execute("SELECT COUNT(*) FROM t").fetchone()[0] == ROWS - 100
    con.close()


def verify_sqlite3(d):
    import sqlite3
    step("read back")
    con = sqlite3.connect(f"file:{os.path.join(d, 'db.sqlite')}?mode=ro", uri=True)
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok", "integrity_check"
    count, negatives = con.execute("SELECT COUNT(*), SUM(value < 0) FROM t").fetchone()
    assert (count, negatives) == (ROWS - 100, (ROWS - 100) // 10), (count, negatives)
    assert con.execute("SELECT name, value FROM t WHERE id = 7").fetchone() == ("row 7", 3.5)
    con.close()


def write_h5py(d):
    import h5py
    import numpy as np
    p = os.path.join(d, "data.h5")
    step('mode "w"')
    with h5py.File(p, "w") as f:
        f.create_dataset("x", data=np.arange(100000, dtype="int64"), chunks=(4096,))
        f.attrs["version"] = 1
    step('mode "r+"')
    with h5py.File(p, "r+") as f:
        f["x"][1000:2000] = -1
        f.attrs["version"] = 2
    step('mode "a"')
    with h5py.File(p, "a") as f:
        f.create_dataset("y", data=np.ones((64, 64)))


def verify_h5py(d):
    import h5py
    import numpy as np
    step("read back")
    with h5py.File(os.path.join(d, "data.h5"), "r") as f:
        want = np.arange(100000, dtype="int64")
        want[1000:2000] = -1
        assert (f["x"][:] == want).all(), "dataset x"
        assert f.attrs["version"] == 2, "attribute"
        assert (f["y"][:] == 1).all(), "dataset y"


def write_memmap(d):
    import numpy as np
    p = os.path.join(d, "array.bin")
    step('mode "w+"')
    m = np.memmap(p, dtype="int32", mode="w+", shape=(300000,))
    m[:] = np.arange(300000, dtype="int32")
    m.flush()
    del m
    step('mode "r+"')
    m = np.memmap(p, dtype="int32", mode="r+", shape=(300000,))
    m[5000:6000] = 7
    m.flush()
    del m


def verify_memmap(d):
    import numpy as np
    step("read back")
    want = np.arange(300000, dtype="int32")
    want[5000:6000] = 7
    got = np.fromfile(os.path.join(d, "array.bin"), dtype="int32")
    assert got.shape == want.shape and (got == want).all(), "array bytes"


def tar_members():
    return {"a.txt": b"first member\n" * 100, "b.txt": b"appended member\n" * 300}


def write_tar_append(d):
    src = tempfile.mkdtemp()
    for name, data in tar_members().items():
        with open(os.path.join(src, name), "wb") as f:
            f.write(data)
    archive = os.path.join(d, "t.tar")
    step("tar -cf, tar --append")
    subprocess.run(["tar", "-cf", archive, "-C", src, "a.txt"], check=True, capture_output=True)
    subprocess.run(["tar", "--append", "-f", archive, "-C", src, "b.txt"], check=True,
                   capture_output=True)


def verify_tar_append(d):
    archive = os.path.join(d, "t.tar")
    step("tar -tf, tar -xf")
    names = subprocess.run(["tar", "-tf", archive], check=True, capture_output=True,
                           text=True).stdout.split()
    assert names == ["a.txt", "b.txt"], names
    out = tempfile.mkdtemp()
    subprocess.run(["tar", "-xf", archive, "-C", out], check=True, capture_output=True)
    for name, data in tar_members().items():
        with open(os.path.join(out, name), "rb") as f:
            assert f.read() == data, name


PROGRAMS = ["sqlite3", "h5py", "memmap", "tar_append"]


def attempt(fn, d):
    """None if fn(d) passed, else a one-line reason."""
    STEP[0] = ""
    try:
        fn(d)
        return None
    except subprocess.CalledProcessError as e:
        why = f"{' '.join(e.cmd[:2])} exited {e.returncode}: {e.stderr.decode().strip()[-200:]}"
    except Exception as e:  # any failure of a program is a result to report
        why = f"{type(e).__name__}: {e}"
    return f"at {STEP[0]}: " + " ".join(why.split())[:300]


def read_pending(path):
    pending = {}
    with open(path) as f:
        for line in f:
            parts = line.split(None, 2)
            if len(parts) == 3 and parts[0].startswith("programs/"):
                pending[parts[0][len("programs/"):]] = parts[2].strip()
    return pending


def main(argv):
    phase, top, state_file = argv[0], argv[1], argv[2]
    if phase == "write":
        state = {}
        for name in PROGRAMS:
            d = os.path.join(top, name)
            os.makedirs(d, exist_ok=True)
            state[name] = attempt(globals()["write_" + name], d)
            print(f"{'ok  ' if state[name] is None else 'FAIL'} write {name}"
                  + (f": {state[name]}" if state[name] else ""))
        with open(state_file, "w") as f:
            json.dump(state, f)
        return 0
    with open(state_file) as f:
        state = json.load(f)
    pending = read_pending(argv[3])
    unknown = [n for n in pending if n not in PROGRAMS]
    unexpected, stale, skipped = [], [], []
    for name in PROGRAMS:
        why = state.get(name) or attempt(globals()["verify_" + name], os.path.join(top, name))
        if why is None and name in pending:
            stale.append(name)
            print(f"NOW PASSES, remove programs/{name} from expected_differences")
        elif why is None:
            print(f"ok   {name}")
        elif name in pending:
            skipped.append(name)
            print(f"pending {name}: {why}\n        (listed: {pending[name]})")
        else:
            unexpected.append(name)
            print(f"FAIL {name}: {why}")
    for n in unknown:
        print(f"expected_differences names an unknown program: programs/{n}")
    if unexpected or stale or unknown:
        return 1
    if skipped:
        print(f"SKIP: pending programs fail as listed: {', '.join(skipped)}")
        return SKIP
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
