#!/usr/bin/env python3
"""Unit tests of smallfile_bench.py's pure parts: floors, stats diffing, the
table, variants. No numpy, zarr or boto3 needed (they are imported lazily).

  python3 fio-jobs/harness/smallfile_bench_test.py   (ctest -R harness)
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True  # no __pycache__ in the tree
import smallfile_bench  # noqa: E402
import smallfile_floor as fl  # noqa: E402
import smallfile_report  # noqa: E402
import smallfile_session as ss  # noqa: E402

SHAPED = (0.020, 100e6)  # s3sim-shaped: 20 ms TTFB, 100 MB/s per connection
KIB = 1024


class FloorTest(unittest.TestCase):
    def test_create_is_one_put_carrying_the_file(self):
        f = fl.floor("create", 64 * KIB, SHAPED, 1)
        self.assertEqual(f["floor_rts"], 1)
        self.assertAlmostEqual(f["floor_s_per_op"], 0.020 + 65536 / 100e6)
        self.assertAlmostEqual(f["floor_ops_s"], 1 / (0.020 + 65536 / 100e6))

    def test_parallel_streams_multiply_the_floor_rate(self):
        one = fl.floor("read", 150 * KIB, SHAPED, 1)["floor_ops_s"]
        eight = fl.floor("read", 150 * KIB, SHAPED, 8)["floor_ops_s"]
        self.assertAlmostEqual(eight, 8 * one)

    def test_metadata_ops_carry_no_body(self):
        self.assertAlmostEqual(fl.floor("stat", 64 * KIB, SHAPED, 1)["floor_s_per_op"], 0.020)
        self.assertAlmostEqual(fl.floor("unlink", 64 * KIB, SHAPED, 1)["floor_s_per_op"], 0.020)
        rename = fl.floor("rename", 64 * KIB, SHAPED, 1)
        self.assertEqual(rename["floor_rts"], 2)
        self.assertAlmostEqual(rename["floor_s_per_op"], 0.040)

    def test_chunk_write_through_a_mount_is_put_copy_delete(self):
        f = fl.floor("chunk_write", 256 * KIB, SHAPED, 1)
        self.assertEqual(f["floor_rts"], 3)
        self.assertAlmostEqual(f["floor_s_per_op"], 3 * 0.020 + 262144 / 100e6)

    def test_chunk_write_of_the_direct_client_is_one_put(self):
        f = fl.floor("chunk_write", 256 * KIB, SHAPED, 1, direct=True)
        self.assertEqual(f["floor_rts"], 1)

    def test_lsstat_shares_the_list_pages_among_the_directory_keys(self):
        f = fl.floor("lsstat", 64 * KIB, SHAPED, 1, keys_per_dir=500)
        self.assertAlmostEqual(f["floor_rts"], 1 / 500)
        self.assertAlmostEqual(f["floor_s_per_op"], 0.020 / 500)
        f = fl.floor("lsstat", 64 * KIB, SHAPED, 1, keys_per_dir=2500)  # 3 pages
        self.assertAlmostEqual(f["floor_rts"], 3 / 2500)

    def test_unshaped_server_has_round_trips_but_no_time_floor(self):
        f = fl.floor("create", 64 * KIB, None, 8)
        self.assertEqual(f, {"floor_rts": 1, "floor_s_per_op": None, "floor_ops_s": None})

    def test_unknown_phase(self):
        with self.assertRaises(ValueError):
            fl.floor("fsync", 1, SHAPED, 1)


class StatsTest(unittest.TestCase):
    def test_diff_leaves_out_unchanged_operations(self):
        before = {"PutObject": 3, "HeadObject": 5}
        after = {"PutObject": 13, "HeadObject": 5, "GetObject": 2}
        self.assertEqual(fl.diff_ops(before, after), {"PutObject": 10, "GetObject": 2})

    def test_diff_after_a_reset(self):
        self.assertEqual(fl.diff_ops({}, {"ListObjectsV2": 4}), {"ListObjectsV2": 4})

    def test_types_fold_operations(self):
        ops = {"HeadObject": 2, "ListObjectsV2": 1, "CopyObject": 4, "DeleteObject": 4,
               "DeleteObjects": 1, "UploadPart": 3, "CreateMultipartUpload": 1, "Weird": 1}
        self.assertEqual(fl.by_type(ops), {"HEAD": 2, "LIST": 1, "Copy": 4, "Delete": 5,
                                           "MPU": 4, "other": 1})

    def test_per_op_text_in_type_order(self):
        self.assertEqual(fl.per_op_text({"PUT": 4, "HEAD": 2, "Delete": 1}, 4),
                         "HEAD 0.50 PUT 1.00 Delete 0.25")
        self.assertEqual(fl.per_op_text(None, 4), "n/a")  # s3rver: no counters
        self.assertEqual(fl.per_op_text({}, 4), "none")


def row(**kw):
    r = {"pattern": "mdtest", "phase": "create", "layout": "flat", "threads": 1,
         "target": "bucketfs", "ops": 10, "seconds": 0.5, "ops_s": 20.0, "bytes": 655360,
         "mb_s": 1.31072, "floor_rts": 1, "floor_ops_s": 48.4, "x_floor": 2.42, "cpu_s": 0.05,
         "requests_by_type": {"PUT": 10, "HEAD": 10}}
    r.update(kw)
    return r


class TableTest(unittest.TestCase):
    def test_a_row(self):
        lines = smallfile_report.table([row()]).splitlines()
        self.assertEqual(len(lines), 3)
        self.assertTrue(lines[0].startswith("pattern"))
        cells = lines[2].split()
        self.assertEqual(cells[:6], ["mdtest", "create", "flat", "1", "bucketfs", "10"])
        self.assertEqual(cells[6:11], ["20.0", "1.3", "1.00", "48.4", "2.42"])
        self.assertEqual(cells[11], "5.00")  # cpu ms per op
        self.assertIn("HEAD 1.00 PUT 1.00", lines[2])

    def test_metadata_phase_has_no_mb_s_and_direct_no_cpu(self):
        line = smallfile_report.table([row(phase="stat", bytes=0, mb_s=0.0, cpu_s=None, target="direct")]) \
            .splitlines()[2]
        cells = line.split()
        self.assertEqual(cells[7], "-")
        self.assertEqual(cells[11], "-")

    def test_notes(self):
        line = smallfile_report.table([row(visible_s=1.25, mismatches=2, errors=["x: EIO"])]).splitlines()[2]
        self.assertIn("visible +1.25s", line)
        self.assertIn("DATA MISMATCH x2", line)
        self.assertIn("ERRORS x1: x: EIO", line)
        line = smallfile_report.table([row(visible_s=None, visible_timeout=True)]).splitlines()[2]
        self.assertIn("NOT VISIBLE", line)

    def test_unshaped_row(self):
        line = smallfile_report.table([row(floor_ops_s=None, x_floor=None, layout=None)]).splitlines()[2]
        self.assertEqual(line.split()[2], "-")
        self.assertEqual(line.split()[9:11], ["-", "-"])


class VariantTest(unittest.TestCase):
    def test_name_and_options(self):
        self.assertEqual(ss.parse_variant("async=--async-close"), ("async", ["--async-close"]))
        self.assertEqual(ss.parse_variant("t4=--max-threads=4 --direct-io"),
                         ("t4", ["--max-threads=4", "--direct-io"]))
        self.assertEqual(ss.parse_variant("plain="), ("plain", []))

    def test_bad_variants(self):
        for bad in ("async", "=--x", "a/b=--x"):
            with self.assertRaises(ValueError):
                ss.parse_variant(bad)

    def test_variants_follow_bucketfs(self):
        a = smallfile_bench.parse_args(["--targets", "bucketfs,s3fs,direct", "--variant", "async=--async-close"])
        self.assertEqual(ss.target_order(a, ss.target_specs(a)),
                         ["bucketfs", "async", "s3fs", "direct"])
        self.assertEqual(ss.target_specs(a)["async"], ("bucketfs", ["--async-close"]))

    def test_a_listed_variant_keeps_its_place(self):
        a = smallfile_bench.parse_args(["--targets", "async,bucketfs", "--variant", "async=--async-close"])
        self.assertEqual(ss.target_order(a, ss.target_specs(a)), ["async", "bucketfs"])


if __name__ == "__main__":
    unittest.main()
