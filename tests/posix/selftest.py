#!/usr/bin/env python3
"""Checks of the POSIX test tools themselves, on local directories only (no
mount, no server), so that a difference they report on a mount is the
mount's:
  - every conformance operation gives the same steps in two local directories;
  - the fsx checker's model agrees with a local file for every op class, a
    log replays to the same result, and a byte changed behind the model's
    back, or an object that differs from the model, fails the run;
  - programs.py judges pending, unexpected and no-longer-failing programs."""
import argparse
import json
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stdout
from io import StringIO

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import conformance  # noqa: E402
import fsx  # noqa: E402
import programs  # noqa: E402
from fsx_ops import CLASSES, Mismatch  # noqa: E402


def quiet(fn, *args):
    """fn(*args) with its stdout captured: (value, text)."""
    buf = StringIO()
    with redirect_stdout(buf):
        value = fn(*args)
    return value, buf.getvalue()


class Conformance(unittest.TestCase):
    def test_two_local_directories_agree_on_every_operation(self):
        with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
            empty = os.path.join(a, "no-differences")
            open(empty, "w").close()
            status, text = quiet(conformance.main, ["--local", a, "--mount", b, "--expected", empty])
        self.assertEqual(status, 0, text)
        self.assertIn(f"{len(conformance.OPS)} same, 0 differ", text)

    def test_a_listed_operation_that_does_not_differ_fails(self):
        with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
            listed = os.path.join(a, "list")
            with open(listed, "w") as f:
                f.write("write_read_back pending a reason\n")
            status, text = quiet(conformance.main, ["--local", a, "--mount", b, "--expected", listed,
                                                    "--only", "write_read_back"])
        self.assertEqual(status, 1)
        self.assertIn("NOW SAME", text)

    def test_an_operation_that_raises_is_a_bug_not_an_outcome(self):
        def buggy(r, d):
            r.do("a step", len, None)  # TypeError: the same on both sides, yet a bug
        conformance.OPS["buggy"] = buggy
        try:
            with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
                status, text = quiet(conformance.main, ["--local", a, "--mount", b, "--only", "buggy",
                                                        "--report-only"])
        finally:
            del conformance.OPS["buggy"]
        self.assertEqual(status, 2)
        self.assertIn("BUG in operation buggy", text)

    def test_the_list_names_only_known_operations(self):
        expected = conformance.read_expected(os.path.join(HERE, "expected_differences"))
        for name in expected:
            if not name.startswith("programs/"):
                self.assertIn(name, conformance.OPS)
            else:
                self.assertIn(name[len("programs/"):], programs.PROGRAMS)


def fsx_args(d, seed, ops, **kw):
    return argparse.Namespace(file=os.path.join(d, "f"), seed=seed, ops=ops, max_len=256 << 10,
                           max_op=64 << 10, log=os.path.join(d, "log"),
                           replay=kw.get("replay"), classes=kw.get("classes", list(CLASSES)),
                              settle=0.0)


def file_checker(path):
    """A stand-in for the bucket: the local file's bytes must equal the model."""
    def check(model, what):
        with open(path, "rb") as f:
            if f.read() != bytes(model):
                raise Mismatch(f"{what}: differs")
    return check


class Fsx(unittest.TestCase):
    def test_every_class_agrees_with_a_local_file(self):
        for seed in (1, 2):
            with tempfile.TemporaryDirectory() as d:
                a = fsx_args(d, seed, 600)
                status, text = quiet(fsx.run, a, file_checker(a.file))
                self.assertEqual(status, 0, text)
                for name in CLASSES:
                    self.assertNotIn(f" 0 {name}", text)  # every class ran

    def test_a_log_replays(self):
        with tempfile.TemporaryDirectory() as d:
            a = fsx_args(d, 9, 300)
            self.assertEqual(quiet(fsx.run, a, file_checker(a.file))[0], 0)
            with open(a.log) as f:
                first = f.read()
            os.rename(a.log, a.log + ".1")
            b = fsx_args(d, fsx.seed_of_log(a.log + ".1"), 0, replay=a.log + ".1")
            status, text = quiet(fsx.run, b, file_checker(b.file))
            self.assertEqual(status, 0, text)
            with open(b.log) as f:
                self.assertEqual(f.read().splitlines()[1:], first.splitlines()[1:])

    def test_a_changed_byte_fails_the_run(self):
        with tempfile.TemporaryDirectory() as d:
            a = fsx_args(d, 4, 400, classes=["write", "pwrite", "reopen"])
            calls = [0]

            def corrupting(model, what):
                file_checker(a.file)(model, what)
                calls[0] += 1
                if calls[0] == 3 and len(model) > 10:  # behind the model's back
                    with open(a.file, "r+b") as f:
                        f.seek(10)
                        f.write(bytes([model[10] ^ 0xFF]))
            status, text = quiet(fsx.run, a, corrupting)
        self.assertEqual(status, 1)
        self.assertIn("FAIL at op", text)
        self.assertIn("read through the mount", text)
        self.assertIn("first difference at offset 10", text)

    def test_an_object_unlike_the_model_fails_the_run(self):
        with tempfile.TemporaryDirectory() as d:
            a = fsx_args(d, 5, 50)

            def stale_bucket(model, what):
                if len(model):
                    raise Mismatch(f"{what}: s3://b/k: first difference at offset 0")
            status, text = quiet(fsx.run, a, stale_bucket)
        self.assertEqual(status, 1)
        self.assertIn("s3://b/k", text)


class Settle(unittest.TestCase):
    """Only a close of a descriptor that wrote nothing may see the object late."""

    def lagging(self, ops, lag):
        with tempfile.TemporaryDirectory() as d:
            target = fsx.Target(os.path.join(d, "f"), 1, None, settle=2.0)
            calls = [0]

            def check(model, what):
                calls[0] += 1
                if calls[0] <= lag:
                    raise Mismatch(f"{what}: not yet")
            target.check = check
            for op in ops:
                target.apply(op)
            target.close("at the end")
            return target.late

    def test_a_close_without_writes_may_lag(self):
        self.assertEqual(self.lagging([fsx.Op(0, "truncate", 100)], lag=3), 1)

    def test_a_close_after_a_write_may_not(self):
        with self.assertRaises(Mismatch):
            self.lagging([fsx.Op(0, "pwrite", 0, 10)], lag=1)


class Programs(unittest.TestCase):
    def verify(self, failed, listed):
        with tempfile.TemporaryDirectory() as d:
            state = os.path.join(d, "state.json")
            with open(state, "w") as f:
                json.dump({n: "at write: EBADF" for n in failed}, f)
            expected = os.path.join(d, "expected")
            with open(expected, "w") as f:
                f.writelines(f"programs/{n} pending reason\n" for n in listed)
            for n in programs.PROGRAMS:
                if n not in failed:  # passes: its files as the write phase leaves them
                    os.makedirs(os.path.join(d, n))
                    getattr(programs, "write_" + n)(os.path.join(d, n))
            return quiet(programs.main, ["verify", d, state, expected])[0]

    def test_judgement(self):
        every = programs.PROGRAMS
        self.assertEqual(self.verify(every, every), programs.SKIP)
        self.assertEqual(self.verify(every, every[1:]), 1)
        self.assertEqual(self.verify([], []), 0)
        self.assertEqual(self.verify([], every[:1]), 1)
        self.assertEqual(self.verify(every[:1], every[:1]), programs.SKIP)


if __name__ == "__main__":
    unittest.main()
