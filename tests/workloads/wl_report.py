"""The suite's table (with each mount's ratio to the direct client and to
its peers), its chart (the harness's), and what makes a run fail."""
import bench_report

OURS = ("bucketfs", "bucketfs-order", "bucketfs-cache", "direct", "local")


def _rate(r):
    s = r["seconds"]
    return (r["samples"] / s if s else 0.0), (r["bytes"] / 1e6 / s if s else 0.0)


def table(rows):
    for r in rows:
        r["samples_s"], r["mb_s"] = _rate(r)
    by = {(r["workload"], r["phase"], r["target"]): r for r in rows}
    hdr = (f"{'workload':<10} {'phase':<13} {'target':<14} {'samples':>8} {'samples/s':>10} "
           f"{'MB/s':>8} {'x direct':>8} {'x bucketfs':>10} {'x s3fs':>7} {'x rclone':>8} "
           f"{'CPU s/GiB':>9} {'RSS MiB':>8} {'bad':>4}")
    lines = [hdr, "-" * len(hdr)]

    def ratio(r, other):
        o = by.get((r["workload"], r["phase"], other))
        if not o or not o["samples_s"] or o.get("error") or not r["samples_s"]:
            return None
        return r["samples_s"] / o["samples_s"]

    def fmt(v, w):
        return f"{(f'{v:.2f}' if v else '-'):>{w}}"

    for r in rows:
        for peer in ("direct", "bucketfs", "s3fs", "rclone"):
            r[f"x_{peer}"] = ratio(r, peer) if r["target"] != peer else None
        cpu_gib = r.get("daemon_cpu_s_per_gib")
        rss = r.get("daemon_peak_rss_mib")
        mark = f"  ERROR {r['error']}" if r.get("error") else ""
        lines.append(
            f"{r['workload']:<10} {r['phase']:<13} {r['target']:<14} {r['samples']:>8} "
            f"{r['samples_s']:>10.1f} {r['mb_s']:>8.1f} {fmt(r['x_direct'], 8)} "
            f"{fmt(r['x_bucketfs'], 10)} {fmt(r['x_s3fs'], 7)} {fmt(r['x_rclone'], 8)} "
            f"{fmt(cpu_gib, 9)} {(f'{rss:.0f}' if rss else '-'):>8} {r['bad']:>4}{mark}")
    lines.append("x <target>: samples/s of this row over that target's, same workload and phase. "
                 "CPU s/GiB: the mount daemon's CPU over all phases of the workload per GiB they moved; "
                 "RSS: its peak so far.")
    return "\n".join(lines)


def chart(rows, targets, out, title):
    shown = [dict(job=r["workload"], mode=r["phase"], target=r["target"], mb_s=r.get("mb_s", 0))
             for r in rows if r["workload"] != "mount"]
    bench_report.chart(shown, targets, out, title)


def failures(rows):
    """Wrong bytes anywhere, or a failed run of bucketfs or the direct client."""
    out = []
    for r in rows:
        where = f"{r['target']} {r['workload']} {r['phase']}"
        if r["bad"]:
            out.append(f"{where}: {r['bad']} samples did not match their digest")
        if r.get("error") and r["target"] in OURS:
            out.append(f"{where}: {r['error']}")
    return out
