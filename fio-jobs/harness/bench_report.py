"""bench.py's output: the table with its ratios and rounds, and the chart."""
import os
import shutil
import subprocess

from common import log


def table(rows):
    """bucketfs rows also carry their ratio to s3fs, rclone and nullfs (same job and mode).

    With a repeated target (--targets bucketfs,direct,direct,bucketfs) the
    n-th run of each target of a job is its round n: x direct compares a row
    with the direct run of its round (else the job's last direct run), and
    each job with more than one round gets a line of bucketfs / direct per
    round and of their sums, so an order effect shows as rounds that
    disagree."""
    direct = {r["job"]: r for r in rows if r["target"] == "direct"}
    direct_round = {(r["job"], r.get("round", 0)): r for r in rows if r["target"] == "direct"}
    peers = {(r["job"], r["target"], r["mode"]): r for r in rows
             if r["target"] in ("s3fs", "rclone", "nullfs")}
    hdr = f"{'job':<7} {'target':<9} {'mode':<5} {'MB/s':>9} {'IOPS':>9} {'x direct':>8} " \
          f"{'x s3fs':>7} {'x rclone':>8} {'x nullfs':>8} {'CPU s/GiB':>9} {'all s/GiB':>9} " \
          f"{'mach s/GiB':>10} {'idle':>5} {'peak RSS MiB':>12}"
    lines = [hdr, "-" * len(hdr)]

    def fmt(v, width):
        return f"{(f'{v:.2f}' if v else '-'):>{width}}"

    for r in rows:
        d = direct_round.get((r["job"], r.get("round", 0)), direct.get(r["job"]))
        ratio = r["mb_s"] / d["mb_s"] if d and d["mb_s"] else None
        r["ratio_to_direct"] = ratio
        vs = {}
        if r["target"] == "bucketfs":
            for peer in ("s3fs", "rclone", "nullfs"):
                p = peers.get((r["job"], peer, r["mode"]))
                vs[peer] = r["mb_s"] / p["mb_s"] if p and p["mb_s"] else None
                r[f"ratio_to_{peer}"] = vs[peer]
        iops = f"{r['iops']:.0f}" if r.get("iops") else "-"
        cpu = f"{r['cpu_s_per_gib']:.2f}" if r.get("cpu_s_per_gib") is not None else "-"
        mcpu = f"{r['machine_cpu_s_per_gib']:.2f}" if r.get("machine_cpu_s_per_gib") is not None \
            else "-"
        idle = f"{r['machine_idle'] * 100:.0f}%" if r.get("machine_idle") is not None else "-"
        procs = f"{r['procs_cpu_s_per_gib']:.2f}" if r.get("procs_cpu_s_per_gib") is not None \
            else "-"
        mark = "" if r.get("verified", True) else "  DATA MISMATCH"
        lines.append(f"{r['job']:<7} {r['target']:<9} {r['mode']:<5} {r['mb_s']:>9.1f} {iops:>9} "
                     f"{fmt(ratio, 8)} {fmt(vs.get('s3fs'), 7)} {fmt(vs.get('rclone'), 8)} "
                     f"{fmt(vs.get('nullfs'), 8)} {cpu:>9} {procs:>9} {mcpu:>10} {idle:>5} "
                     f"{r.get('peak_rss_mib', 0):>12.0f}{mark}")
    for job, mode, mount in [(j, m, t) for j in dict.fromkeys(r["job"] for r in rows)
                             for t in ("bucketfs", "base") for m in ("cold", "warm")]:
        b = [r for r in rows if (r["job"], r["mode"], r["target"]) == (job, mode, mount)]
        d = [r for r in rows if (r["job"], r["mode"], r["target"]) == (job, "cold", "direct")]
        if len(b) < 2 and len(d) < 2 or not b or not d:
            continue
        d_of = {r.get("round", 0): r for r in d}
        per = []
        for r in b:
            rd = d_of.get(r.get("round", 0))
            if rd and rd["mb_s"]:
                first = mount if r["seq"] < rd["seq"] else "direct"
                per.append(f"round {r.get('round', 0)} ({first} first) {r['mb_s'] / rd['mb_s']:.2f}")
        pooled = sum(r["mb_s"] for r in b) / len(b) / (sum(r["mb_s"] for r in d) / len(d))
        lines.append(f"{job} {mode}: {mount} / direct {'; '.join(per)}; "
                     f"mean over rounds {pooled:.2f}")
    return "\n".join(lines)


def chart(rows, targets, out, title):
    if not rows:
        return
    if not shutil.which("gnuplot"):
        log("gnuplot not found: no chart")
        return
    keys = []
    for r in rows:
        k = f"{r['job']}-{r['mode']}"
        if k not in keys:
            keys.append(k)
    dat = os.path.join(out, "chart.dat")
    with open(dat, "w") as f:
        f.write("# case " + " ".join(targets) + "\n")
        for k in keys:
            vals = []
            for t in targets:
                v = [r["mb_s"] for r in rows if f"{r['job']}-{r['mode']}" == k and r["target"] == t]
                vals.append(f"{v[0]:.1f}" if v else "0")
            f.write(k + " " + " ".join(vals) + "\n")
    plot = ", ".join(f"'{dat}' using {i + 2}:xtic(1) title '{t}'" for i, t in enumerate(targets))
    script = f"""set terminal pngcairo size 1200,600 noenhanced
set output '{os.path.join(out, "chart.png")}'
set title '{title}'
set ylabel 'MB/s'
set style data histogram
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set key top right
set grid ytics
set xtics rotate by -30
plot {plot}
"""
    sp = os.path.join(out, "chart.gp")
    with open(sp, "w") as f:
        f.write(script)
    r = subprocess.run(["gnuplot", sp], capture_output=True, text=True)
    if r.returncode != 0 and "pngcairo" in r.stderr:
        script = script.replace("pngcairo", "png")
        with open(sp, "w") as f:
            f.write(script)
        r = subprocess.run(["gnuplot", sp], capture_output=True, text=True)
    if r.returncode != 0:
        log(f"gnuplot failed: {r.stderr.strip()}")
