#!/usr/bin/env python3
"""POSIX conformance of a mount, measured against a local directory: runs
one list of operations (ops_data.py, ops_open.py, ops_names.py) in a fresh
directory under --local and in a fresh directory under --mount, compares
them operation by operation (every step's value or errno, bytes, sizes) and
prints "N same, M differ" and each difference.

Accepted differences are listed in expected_differences (beside this
script), each "deliberate" (an alternative docs/SEMANTICS.md documents) or
"pending" (work under way is to remove it). Exit status 1 if an operation
differs that is not listed, or a listed one no longer differs (remove its
line); 2 if an operation raised (a bug of the test); 0 otherwise.
--report-only prints the figures and exits 0 (for other file systems).

Usage: conformance.py --local DIR --mount DIR [--only NAME,...] [--skip NAME,...]
                      [--expected FILE | --report-only] [--timeout SECONDS] [--list]
Each operation runs in a forked child with a timeout, so a hung or crashed
operation (SIGBUS on a mapping) is an outcome, not the end of the run."""
import argparse
import errno
import json
import os
import select
import signal
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ops_data  # noqa: E402,F401  (registers its operations)
import ops_names  # noqa: E402,F401
import ops_open  # noqa: E402,F401
from oplib import OPS, Recorder  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
KINDS = ("deliberate", "pending")
BUG = "the operation raised"  # a step that marks a bug in the test, not an outcome


def run_in_child(fn, d, timeout):
    """The steps of fn(Recorder, d) run in a forked child, plus how it ended if not normally."""
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(rfd)
        status = 0
        try:
            os.umask(0o022)
            out = os.fdopen(wfd, "w", buffering=1)
            fn(Recorder(sink=lambda line: out.write(json.dumps(line) + "\n")), d)
            out.flush()
        except BaseException as e:  # a bug in the operation itself, reported by the parent
            try:
                os.write(wfd, (json.dumps(f"{BUG} {type(e).__name__}: {e}") + "\n").encode())
            except OSError:
                pass
            status = 3
        os._exit(status)
    os.close(wfd)
    data, deadline, ending = b"", time.monotonic() + timeout, None
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            os.kill(pid, signal.SIGKILL)
            ending = f"timeout after {timeout:.0f} s"
            break
        ready, _, _ = select.select([rfd], [], [], left)
        if ready:
            chunk = os.read(rfd, 65536)
            if not chunk:
                break
            data += chunk
    os.close(rfd)
    _, status = os.waitpid(pid, 0)
    steps = [json.loads(line) for line in data.decode().splitlines() if line.strip()]
    if ending is None and os.WIFSIGNALED(status):
        ending = f"killed by {signal.Signals(os.WTERMSIG(status)).name}"
    if ending:
        steps.append(ending)
    return steps


def read_expected(path):
    """{operation: (kind, reason)} from the list; raises ValueError on a malformed line."""
    expected = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = line.split(None, 2)
            if len(parts) < 3 or parts[1] not in KINDS:
                raise ValueError(f"{path}:{n}: want 'NAME deliberate|pending REASON': {line}")
            expected[parts[0]] = (parts[1], parts[2])
    return expected


def step_diff(local, mount):
    """The differing steps as lines "  local: ... | mount: ..."."""
    lines = []
    for i in range(max(len(local), len(mount))):
        a = local[i] if i < len(local) else "(none)"
        b = mount[i] if i < len(mount) else "(none)"
        if a != b:
            lines.append(f"    local: {a}\n    mount: {b}")
    return lines


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--local", required=True, help="a local directory to work under")
    ap.add_argument("--mount", required=True, help="a directory of the mount to work under")
    ap.add_argument("--only", help="comma-separated operation names")
    ap.add_argument("--skip", default="", help="comma-separated operation names not to run")
    ap.add_argument("--expected", default=os.path.join(HERE, "expected_differences"))
    ap.add_argument("--report-only", action="store_true",
                    help="print the figures and the differences, exit 0")
    ap.add_argument("--timeout", type=float,
                    default=60.0 * float(os.environ.get("E2E_SCALE", "1")),
                    help="seconds one operation may take on either side")
    ap.add_argument("--list", action="store_true", help="print the operation names and exit")
    return ap.parse_args(argv)


def main(argv):
    args = parse_args(argv)
    if args.list:
        print("\n".join(OPS))
        return 0
    names = args.only.split(",") if args.only else list(OPS)
    skipped = [n for n in args.skip.split(",") if n]
    unknown = [n for n in names + skipped if n not in OPS]
    if unknown:
        print(f"unknown operation(s): {', '.join(unknown)}")
        return 2
    names = [n for n in names if n not in skipped]
    expected = {} if args.report_only else read_expected(args.expected)
    # Names with a '/' belong to other tests of the same list (programs/...).
    typos = [n for n in expected if "/" not in n and n not in OPS]
    roots = [tempfile.mkdtemp(prefix="posix-", dir=args.local),
             tempfile.mkdtemp(prefix="posix-", dir=args.mount)]
    print(f"local: {roots[0]}\nmount: {roots[1]}")
    same, differ = [], []
    for name in names:
        results = []
        for root in roots:
            d = os.path.join(root, name)
            try:
                os.mkdir(d)
            except OSError as e:
                results.append([f"mkdir of its directory: {errno.errorcode.get(e.errno, e.errno)}"])
                continue
            results.append(run_in_child(OPS[name], d, args.timeout))
        bugs = [s for steps in results for s in steps if s.startswith(BUG)]
        if bugs:
            print(f"BUG in operation {name} (fix the test): {bugs[0]}")
            return 2
        if results[0] == results[1]:
            same.append(name)
        else:
            differ.append((name, step_diff(*results)))
    print(f"\n{len(same)} same, {len(differ)} differ"
          + (f" ({len(skipped)} not run: {', '.join(skipped)})" if skipped else ""))
    unexpected = 0
    for name, lines in differ:
        kind, reason = expected.get(name, (None, None))
        if kind:
            print(f"differs ({kind}): {name}: {reason}")
        elif args.report_only:
            print(f"differs: {name}")
        else:
            print(f"UNEXPECTED difference: {name}")
            unexpected += 1
        print("\n".join(lines))
    stale = [n for n in names if n in expected and n in same]
    for n in stale:
        print(f"NOW SAME, remove it from {os.path.basename(args.expected)}: {n} "
              f"({expected[n][0]}: {expected[n][1]})")
    for n in typos:
        print(f"{os.path.basename(args.expected)} names an unknown operation: {n}")
    if args.report_only:
        return 0
    if unexpected or stale or typos:
        print(f"FAIL: {unexpected} unexpected, {len(stale)} listed but now the same, "
              f"{len(typos)} unknown in the list")
        return 1
    print("ok: every difference is listed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
