"""smallfile_bench.py's output: the table, DIR/results.json and DIR/table.txt."""
import hashlib
import json
import os
import subprocess
import sys
import time

from smallfile_floor import SHAPES, per_op_text


def fmt(v, spec, width):
    return f"{(format(v, spec) if v is not None else '-'):>{width}}"


def table(rows):
    """One line per phase and target: ops/s, MB/s, requests per op by type,
    floor round trips per op, floor ops/s, measured / floor (time per op
    over the floor's), and notes (visible after, errors, data mismatches)."""
    hdr = (f"{'pattern':<7} {'phase':<11} {'layout':<6} {'thr':>3} {'target':<15} {'ops':>5} "
           f"{'ops/s':>8} {'MB/s':>7} {'floor RT':>8} {'floor/s':>8} {'x floor':>7} "
           f"{'cpu ms/op':>9}  requests per op")
    lines = [hdr, "-" * (len(hdr) + 20)]
    for r in rows:
        notes = []
        if r.get("visible_s") is not None:
            notes.append(f"visible +{r['visible_s']:.2f}s")
        elif r.get("visible_timeout"):
            notes.append("NOT VISIBLE")
        if r.get("mismatches"):
            notes.append(f"DATA MISMATCH x{r['mismatches']}")
        if r.get("errors"):
            notes.append(f"ERRORS x{len(r['errors'])}: {r['errors'][0][:80]}")
        mbps = r["mb_s"] if r.get("bytes") else None
        cpu = r["cpu_s"] / r["ops"] * 1e3 if r.get("cpu_s") is not None and r["ops"] else None
        lines.append(
            f"{r['pattern']:<7} {r['phase']:<11} {r.get('layout') or '-':<6} {r['threads']:>3} "
            f"{r['target']:<15} {r['ops']:>5} {fmt(r['ops_s'], '.1f', 8)} {fmt(mbps, '.1f', 7)} "
            f"{fmt(r['floor_rts'], '.2f', 8)} {fmt(r['floor_ops_s'], '.1f', 8)} "
            f"{fmt(r.get('x_floor'), '.2f', 7)} {fmt(cpu, '.2f', 9)}  "
            f"{per_op_text(r.get('requests_by_type'), r['ops'])}"
            + (f"  [{'; '.join(notes)}]" if notes else ""))
    return "\n".join(lines)


def version(binary):
    """`bucketfs --version` and the binary's SHA-256: figures are for one
    build, binaries get copied around, and the version string stays 0.1.0."""
    try:
        r = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=10)
        with open(binary, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()[:16]
        return f"{(r.stdout or r.stderr).strip()} sha256:{digest}"
    except OSError as e:
        return f"unknown ({e})"


def report(a, targets, specs, bins, rows, failures, out):
    load = os.getloadavg()
    shape = SHAPES[a.server]
    title = (f"smallfile bench: {a.server}"
             + (f" (ttfb {shape[0] * 1e3:.0f} ms, {shape[1] / 1e6:.0f} MB/s per connection)"
                if shape else " (unshaped: no time floor)")
             + f", files {a.files} x {a.file_size}, chunks {a.chunks} x {a.chunk_size}, "
             f"par {a.par_files} x {a.par_size} (load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f})")
    text = table(rows)
    print(f"\n{title}\n{text}")
    for f in failures:
        print(f"FAILED target {f['target']} {' '.join(f.get('options', []))}: {f['error']}")
    meta = {"server": a.server, "shape": shape, "targets": targets,
            "target_specs": {t: specs[t] for t in targets}, "command": " ".join(sys.argv),
            "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "load_avg": load,
            "bucketfs_bin": bins["bucketfs"], "bucketfs_version": version(bins["bucketfs"]),
            "s3sim_bin": bins["s3sim"], "seed": a.seed,
            "files": a.files, "file_size": a.file_size_bytes, "dirs": a.dirs,
            "chunks": a.chunks, "chunk_size": a.chunk_size_bytes,
            "par_files": a.par_files, "par_size": a.par_size_bytes}
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump({"meta": meta, "results": rows, "failures": failures}, f, indent=1)
    with open(os.path.join(out, "table.txt"), "w") as f:
        f.write(title + "\n" + text + "\n")
    print(f"results: {out}/results.json, {out}/table.txt")
