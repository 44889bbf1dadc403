#!/usr/bin/env python3
"""Unit tests of bench.py's parts: CPU figures, the table, fio timing, CloseWatch.

  python3 fio-jobs/harness/bench_test.py   (ctest -R harness)
"""
import os
import shutil
import sys
import unittest
from unittest import mock

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True  # no __pycache__ in the tree
import bench_report  # noqa: E402
import fio_run  # noqa: E402
import procstats  # noqa: E402


def sample(busy, idle, steal=0):
    return {"busy": busy, "idle": idle, "steal": steal, "total": busy + idle + steal}


class ProcStatTest(unittest.TestCase):
    def test_parses_the_cpu_line(self):
        # user nice system idle iowait irq softirq steal guest guest_nice
        got = procstats.parse_proc_stat("cpu  100 20 30 400 5 1 4 7 50 0\n")
        self.assertEqual(got, {"busy": 155, "idle": 405, "steal": 7, "total": 567})

    def test_old_kernels_without_steal(self):
        got = procstats.parse_proc_stat("cpu 1 2 3 4 5 6 7")
        self.assertEqual(got, {"busy": 19, "idle": 9, "steal": 0, "total": 28})

    def test_rejects_a_per_cpu_line(self):
        with self.assertRaises(ValueError):
            procstats.parse_proc_stat("cpu0 1 2 3 4 5 6 7 8")

    def test_reads_this_machine(self):
        s = procstats.machine_cpu()
        self.assertGreater(s["total"], 0)
        self.assertEqual(s["total"], s["busy"] + s["idle"] + s["steal"])


class MachineFiguresTest(unittest.TestCase):
    def setUp(self):
        p1 = mock.patch.object(procstats, "TICK", 100)
        p2 = mock.patch.object(procstats.os, "cpu_count", return_value=2)
        p1.start()
        p2.start()
        self.addCleanup(p1.stop)
        self.addCleanup(p2.stop)

    def test_busy_seconds_per_gib_and_idle_share(self):
        # 2 s on 2 CPUs: 300 busy jiffies, 100 idle, 2 GiB moved.
        got = procstats.machine_figures(sample(1000, 5000), sample(1300, 5100), 2 * procstats.GIB)
        self.assertAlmostEqual(got["machine_cpu_s"], 3.0)
        self.assertAlmostEqual(got["machine_cpu_s_per_gib"], 1.5)
        self.assertAlmostEqual(got["machine_idle"], 0.25)
        self.assertAlmostEqual(got["machine_steal"], 0.0)

    def test_steal_counts_in_the_total_not_as_busy(self):
        got = procstats.machine_figures(sample(0, 0, 0), sample(200, 100, 100), procstats.GIB)
        self.assertAlmostEqual(got["machine_cpu_s_per_gib"], 2.0)
        self.assertAlmostEqual(got["machine_idle"], 0.25)
        self.assertAlmostEqual(got["machine_steal"], 0.25)

    def test_time_outside_the_transfer_is_taken_off(self):
        # 3 s on 2 CPUs; 1 s of it is the client's start-up, 0.5 CPU-s busy
        # (the other 1.5 CPU-s idle). The transfer: 2 s, 3 CPU-s busy, 1 idle.
        got = procstats.machine_figures(sample(0, 0), sample(350, 250), procstats.GIB,
                                    outside_busy_s=0.5, outside_wall_s=1.0)
        self.assertAlmostEqual(got["machine_cpu_s"], 3.0)
        self.assertAlmostEqual(got["machine_idle"], 0.25)

    def test_nothing_moved(self):
        self.assertIsNone(procstats.machine_figures(sample(0, 0), sample(10, 10), 0))


class ProcsFiguresTest(unittest.TestCase):
    def test_fio_job_cpu_from_its_report(self):
        # 8 jobs of 1 s each with group_reporting: 16000 ms, 10% + 15%.
        fj = {"usr_cpu": 10.0, "sys_cpu": 15.0, "job_runtime": 16000}
        self.assertAlmostEqual(procstats.fio_job_cpu(fj, 9.9), 4.0)
        self.assertEqual(procstats.fio_job_cpu({}, 9.9), 9.9)

    def test_per_gib_and_share_of_the_cpus(self):
        with mock.patch.object(procstats.os, "cpu_count", return_value=2):
            got = procstats.procs_figures(3.0, 1.0, 0.5, 2 * procstats.GIB, 2.0)
        self.assertAlmostEqual(got["procs_cpu_s_per_gib"], 1.5)
        self.assertAlmostEqual(got["procs_cpu_share"], 0.75)
        self.assertEqual((got["server_cpu_s"], got["client_cpu_s"]), (1.0, 0.5))
        self.assertEqual(procstats.procs_figures(3.0, 1.0, 0.5, 0, 2.0), {})


class TableTest(unittest.TestCase):
    def row(self, target, mb_s, **kw):
        r = {"job": "seq1", "target": target, "mode": "cold", "mb_s": mb_s, "iops": 0,
             "cpu_s_per_gib": 0.4, "peak_rss_mib": 100, "round": 0, "seq": 1}
        r.update(kw)
        return r

    def test_machine_columns(self):
        rows = [self.row("bucketfs", 2000, machine_cpu_s_per_gib=1.234, machine_idle=0.05,
                         procs_cpu_s_per_gib=0.987),
                self.row("direct", 4000, seq=2)]
        text = bench_report.table(rows)
        header = text.splitlines()[0]
        self.assertIn("mach s/GiB", header)
        self.assertIn("all s/GiB", header)
        self.assertIn("idle", header)
        lines = [line.split() for line in text.splitlines()[2:]]
        bucketfs = " ".join(next(f for f in lines if f[1] == "bucketfs")) + " "
        self.assertIn(" 0.99 1.23 ", bucketfs)
        self.assertIn(" 5% ", bucketfs)
        direct = next(f for f in lines if f[1] == "direct")
        self.assertEqual(direct[-4:-1], ["-", "-", "-"])  # not measured: dashes

    def test_base_target_gets_its_rounds_line(self):
        rows = [self.row("base", 1000, seq=1), self.row("direct", 4000, seq=2),
                self.row("bucketfs", 3000, seq=3),
                self.row("base", 2000, seq=6, round=1), self.row("direct", 4000, seq=5, round=1),
                self.row("bucketfs", 3600, seq=4, round=1)]
        text = bench_report.table(rows)
        self.assertIn("seq1 cold: base / direct round 0 (base first) 0.25; "
                      "round 1 (direct first) 0.50; mean over rounds 0.38", text)
        self.assertIn("seq1 cold: bucketfs / direct round 0 (direct first) 0.75; "
                      "round 1 (bucketfs first) 0.90; mean over rounds 0.82", text)


class FioRunTest(unittest.TestCase):
    def test_stamped_copy_adds_the_prerun_to_global_only(self):
        import tempfile
        d = tempfile.mkdtemp()
        path = fio_run.stamped_jobfile("write/seq_write_1t_1m_1g.fio", os.path.join(d, "start"))
        with open(path) as f:
            text = f.read()
        with open(os.path.join(fio_run.JOBDIR, "write/seq_write_1t_1m_1g.fio")) as f:
            original = f.read()
        self.assertEqual(text.count("exec_prerun="), 1)
        self.assertIn("[global]\nexec_prerun=sh -c 'date +%s%N >> " + d + "/start'\n", text)
        self.assertEqual(text.replace(text.splitlines()[text.splitlines().index("[global]") + 1]
                                      + "\n", "", 1), original)

    @unittest.skipUnless(shutil.which("fio"), "fio not installed")
    def test_io_wall_time_leaves_fio_start_up_out(self):
        # A real fio write of 8 MiB into tmpfs: the I/O takes milliseconds,
        # fio's start-up a few hundred, so io_wall must be well below wall.
        import tempfile
        d = tempfile.mkdtemp(dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
        os.makedirs(os.path.join(d, "write"))
        env = dict(os.environ, DIR=d, SIZE=str(8 << 20), RUN_ID="t")
        try:
            fj, wall, io_wall, io_end = fio_run.fio_run("write/seq_write_1t_1m_1g.fio", env,
                                                      timeout=60)
            _, wall2, io_wall2, io_end2 = fio_run.fio_run(
                "write/seq_write_1t_1m_1g.fio", dict(env, RUN_ID="u"), timeout=60,
                watch_dir=os.path.join(d, "write"))
        finally:
            shutil.rmtree(d, ignore_errors=True)
        self.assertEqual(fj["write"]["io_bytes"], 8 << 20)
        self.assertEqual(io_end, "exit")
        self.assertGreater(io_wall, 0)
        self.assertLess(io_wall, wall)
        self.assertLess(io_wall, wall - 0.05)
        # Ended by the close of w1-u: fio's exit (the parent reaping its job
        # process, printing, freeing shared memory) comes after it.
        self.assertEqual(io_end2, "close")
        self.assertGreater(io_wall2, 0)
        self.assertLess(io_wall2, wall2 - 0.05)


class CloseWatchTest(unittest.TestCase):
    def setUp(self):
        import tempfile
        self.dir = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def test_stamps_the_close_not_the_writer_s_exit(self):
        # A writer that closes its file, then lingers 0.4 s before exiting.
        import subprocess
        import time
        from close_watch import CloseWatch
        path = os.path.join(self.dir, "f")
        code = (f"f = open({path!r}, 'wb'); f.write(b'x' * 4096); f.close(); "
                "import time; time.sleep(0.4)")
        w = CloseWatch(self.dir).start()
        t0 = time.time_ns()
        subprocess.run([sys.executable, "-c", code], check=True)
        t1 = time.time_ns()
        w.stop()
        self.assertIsNone(w.error)
        self.assertEqual(list(w.closes), ["f"])
        self.assertGreater(w.last_close_ns(), t0)
        self.assertLess(w.last_close_ns(), t1 - 300_000_000)

    def test_reads_are_not_closes_of_written_files(self):
        from close_watch import CloseWatch
        path = os.path.join(self.dir, "r")
        with open(path, "wb") as f:
            f.write(b"y")
        w = CloseWatch(self.dir).start()
        with open(path, "rb") as f:
            f.read()
        with open(os.path.join(self.dir, "w"), "wb") as f:
            f.write(b"z")
        w.stop()
        self.assertEqual(list(w.closes), ["w"])

    def test_a_directory_that_cannot_be_watched_leaves_no_time(self):
        from close_watch import CloseWatch
        w = CloseWatch(os.path.join(self.dir, "missing")).start()
        w.stop()
        self.assertIn("No such file", w.error)
        self.assertIsNone(w.last_close_ns())


if __name__ == "__main__":
    unittest.main()
