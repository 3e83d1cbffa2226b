#!/usr/bin/env python3
"""Summarises service/load.sh's result files: a table (results.md), the latency
distribution per backend (latency.png) and a request timeline around reloads
(timeline.png).

Standard library only (matplotlib is not installed on the machines here): the pictures are
SVG written by hand, then made PNG by `rsvg-convert` (Debian's librsvg2-bin), which this
script installs with apt-get if it is missing; without it the SVG stays.

    python3 service/plot.py OUT_DIR        # results.md, latency.png, timeline.png in OUT_DIR
    python3 service/plot.py --one PREFIX   # one run's summary line (PREFIX.oha.json, .stats.json)
"""
import csv
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys

BACKENDS = ["poolswap", "oplog", "arcswap", "rwlock"]
MODES = ["noreload", "reload"]
COLORS = {"poolswap": "#1f77b4", "oplog": "#2ca02c", "arcswap": "#d62728", "rwlock": "#9467bd"}
# oha's latency percentiles, and where each sits on the x axis (log of 1/(1-p)).
PCTS = ["p50", "p90", "p99", "p99.9", "p99.99"]


def load_run(prefix):
    with open(prefix + ".oha.json") as f:
        oha = json.load(f)
    with open(prefix + ".stats.json") as f:
        stats = json.load(f)
    lat = oha["latencyPercentiles"]
    codes = oha.get("statusCodeDistribution", {})
    errors = sum(oha.get("errorDistribution", {}).values())
    non200 = sum(n for code, n in codes.items() if code != "200")
    return {
        "ms": {p: lat[p] * 1e3 for p in PCTS},
        "max": oha["summary"]["slowest"] * 1e3,
        "rps": oha["summary"]["requestsPerSec"],
        "ok": codes.get("200", 0),
        "failed": errors + non200,
        "stats": stats,
    }


def one_line(r):
    s = r["stats"]
    return (
        f"p50 {r['ms']['p50']:.3f} p99 {r['ms']['p99']:.3f} p99.9 {r['ms']['p99.9']:.3f} "
        f"max {r['max']:.2f} ms, {r['rps']:.0f} req/s, {r['failed']} failed, "
        f"RSS {s['vm_hwm_kb'] / 1024:.0f} MiB, {s['reloads']} reloads, "
        f"{s['bytes_per_reload']:.0f} B/reload, reload {s['reload_ms_p50']:.2f} ms"
    )


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def runs_of(out):
    runs = {}
    for path in sorted(glob.glob(os.path.join(out, "*-r*.oha.json"))):
        prefix = path[: -len(".oha.json")]
        name = os.path.basename(prefix)
        backend, mode, _ = name.rsplit("-", 2)
        runs.setdefault((backend, mode), []).append(load_run(prefix))
    return runs


def summarise(runs):
    """Per backend and mode: the median over rounds of each percentile and of req/s, the
    largest max and peak RSS, the failed requests summed, reload figures per reload."""
    rows = {}
    for key, rs in runs.items():
        st = [r["stats"] for r in rs]
        steady = sum(s["steady_reloads"] for s in st)
        rows[key] = {
            "rounds": len(rs),
            "ms": {p: med([r["ms"][p] for r in rs]) for p in PCTS},
            "max": max(r["max"] for r in rs),
            "rps": med([r["rps"] for r in rs]),
            "failed": sum(r["failed"] for r in rs),
            "requests": sum(r["ok"] + r["failed"] for r in rs),
            "rss_mib": max(s["vm_hwm_kb"] for s in st) / 1024,
            "reloads": sum(s["reloads"] for s in st),
            "bytes": (sum(s["bytes_per_reload"] * s["steady_reloads"] for s in st) / steady) if steady else 0.0,
            "allocating": sum(s["allocating_reloads"] for s in st),
            "steady": steady,
            "reload_ms": med([s["reload_ms_p50"] for s in st]),
            "reload_max": max(s["reload_ms_max"] for s in st),
            "publish_ms": med([s["publish_ms_p50"] for s in st]),
            "ops": med([s["ops_per_reload"] for s in st]),
        }
    return rows


def fmt_bytes(b):
    if b >= 1 << 20:
        return f"{b / (1 << 20):.1f} MiB"
    if b >= 1 << 10:
        return f"{b / (1 << 10):.1f} KiB"
    return f"{b:.0f} B"


def table_md(rows, out):
    lines = [
        "| backend | reloads every 100 ms | p50 ms | p99 ms | p99.9 ms | max ms | req/s | failed | peak RSS | bytes per reload | reload ms (p50 / max) |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for mode in MODES:
        for b in BACKENDS:
            r = rows.get((b, mode))
            if not r:
                continue
            if mode == "reload":
                by = fmt_bytes(r["bytes"]) + (f" ({r['allocating']} of {r['steady']} allocating)" if b == "poolswap" else "")
                rl = f"{r['reload_ms']:.2f} / {r['reload_max']:.2f}"
                if b == "oplog":
                    rl += f" (publish {r['publish_ms']:.3f}, {r['ops']:.0f} ops)"
            else:
                by, rl = "-", "-"
            lines.append(
                f"| {b} | {'yes' if mode == 'reload' else 'no'} | {r['ms']['p50']:.3f} | {r['ms']['p99']:.3f} | "
                f"{r['ms']['p99.9']:.3f} | {r['max']:.2f} | {r['rps']:.0f} | {r['failed']} of {r['requests']} | "
                f"{r['rss_mib']:.0f} MiB | {by} | {rl} |"
            )
    return "\n".join(lines)


def targets_md(rows, out):
    lines = []
    ps, pr = rows.get(("poolswap", "noreload")), rows.get(("poolswap", "reload"))
    if ps and pr:
        ratio = pr["ms"]["p99.9"] / ps["ms"]["p99.9"]
        lines.append(f"- poolswap p99.9 with reloads / without: {ratio:.2f}x (target at most 1.2x)")
        for other in ["arcswap", "rwlock"]:
            o = rows.get((other, "reload"))
            if o:
                lines.append(
                    f"- poolswap p99.9 with reloads {pr['ms']['p99.9']:.3f} ms vs {other} {o['ms']['p99.9']:.3f} ms "
                    f"({'below' if pr['ms']['p99.9'] < o['ms']['p99.9'] else 'NOT below'})"
                )
        lines.append(
            f"- poolswap bytes per steady-state reload: {pr['bytes']:.1f} "
            f"({pr['allocating']} of {pr['steady']} steady-state reloads allocated; target 0)"
        )
    failed = sum(r["failed"] for r in rows.values())
    lines.append(f"- failed requests, all runs: {failed} (target 0)")
    allc = os.path.join(out, "oplog-all-changed.stats.json")
    ol = rows.get(("oplog", "reload"))
    if ol and os.path.exists(allc):
        with open(allc) as f:
            a = json.load(f)
        lines.append(
            f"- op log reload, 64 of 100,000 lines changed: {ol['reload_ms']:.2f} ms "
            f"(publish {ol['publish_ms']:.3f} ms, {ol['ops']:.0f} ops); every line changed: "
            f"{a['reload_ms_p50']:.2f} ms (publish {a['publish_ms_p50']:.3f} ms, {a['ops_per_reload']:.0f} ops)"
        )
    return "\n".join(lines)


def timeline_md(out):
    lines = []
    for b in ["poolswap", "arcswap"]:
        path = os.path.join(out, f"timeline-{b}.csv")
        if not os.path.exists(path):
            continue
        reqs, reloads = read_timeline(path)
        if not reqs:
            continue
        durs = sorted(d for _, d in reqs)
        during = [d for s, d in reqs if any(r0 <= s <= r0 + rd for r0, rd in reloads)]
        n = len(durs)
        lines.append(
            f"- {b}: {n} requests, handling time p50 {durs[n // 2]:.1f} µs, p99.9 "
            f"{durs[min(n - 1, int(n * 0.999))]:.1f} µs, max {durs[-1]:.1f} µs; "
            f"{len(during)} started during a reload, their max {max(during, default=0):.1f} µs; "
            f"{len(reloads)} reloads, {med([d for _, d in reloads]) / 1e3:.2f} ms each (median)"
        )
    return "\n".join(lines)


def read_timeline(path):
    reqs, reloads = [], []
    with open(path) as f:
        for row in csv.DictReader(f):
            item = (float(row["start_us"]), float(row["duration_us"]))
            (reqs if row["kind"] == "request" else reloads).append(item)
    return reqs, reloads


def svg_text(x, y, s, size=11, anchor="start", extra=""):
    s = s.replace("&", "&amp;").replace("<", "&lt;")
    return f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" font-family="sans-serif" {extra}>{s}</text>'


def log_ticks(lo, hi):
    ticks, t = [], 10 ** int(__import__("math").floor(__import__("math").log10(lo)))
    while t <= hi * 1.0001:
        for m in (1, 2, 5):
            if lo <= t * m <= hi:
                ticks.append(t * m)
        t *= 10
    return ticks


def latency_svg(rows, path):
    import math

    w, h, pad_l, pad_b, pad_t, gap = 440, 340, 60, 50, 40, 30
    xs = PCTS + ["max"]
    vals = [v for r in rows.values() for v in list(r["ms"].values()) + [r["max"]] if v > 0]
    lo, hi = min(vals) / 1.5, max(vals) * 1.5
    ly = lambda v: pad_t + (h - pad_t - pad_b) * (1 - (math.log10(v) - math.log10(lo)) / (math.log10(hi) - math.log10(lo)))
    parts = []
    total_w = 2 * w + gap
    for i, mode in enumerate(MODES):
        ox = i * (w + gap)
        px = lambda j: ox + pad_l + (w - pad_l - 20) * j / (len(xs) - 1)
        title = "no reloads" if mode == "noreload" else "a reload every 100 ms"
        parts.append(svg_text(ox + w / 2, 20, f"request latency, {title}", 13, "middle"))
        parts.append(f'<rect x="{ox + pad_l}" y="{pad_t}" width="{w - pad_l - 20}" height="{h - pad_t - pad_b}" fill="none" stroke="#888"/>')
        for t in log_ticks(lo, hi):
            y = ly(t)
            parts.append(f'<line x1="{ox + pad_l}" x2="{ox + w - 20}" y1="{y:.1f}" y2="{y:.1f}" stroke="#ddd"/>')
            parts.append(svg_text(ox + pad_l - 4, y + 4, f"{t:g}", 10, "end"))
        for j, p in enumerate(xs):
            parts.append(svg_text(px(j), h - pad_b + 15, p, 10, "middle"))
        parts.append(svg_text(ox + 14, (h - pad_b + pad_t) / 2, "ms (log)", 10, "middle",
                              f'transform="rotate(-90 {ox + 14} {(h - pad_b + pad_t) / 2})"'))
        for k, b in enumerate(BACKENDS):
            r = rows.get((b, mode))
            if not r:
                continue
            ys = [r["ms"][p] for p in PCTS] + [r["max"]]
            pts = " ".join(f"{px(j):.1f},{ly(max(v, lo)):.1f}" for j, v in enumerate(ys))
            parts.append(f'<polyline points="{pts}" fill="none" stroke="{COLORS[b]}" stroke-width="2"/>')
            for j, v in enumerate(ys):
                parts.append(f'<circle cx="{px(j):.1f}" cy="{ly(max(v, lo)):.1f}" r="2.5" fill="{COLORS[b]}"/>')
            lx, lyy = ox + pad_l + 10, pad_t + 14 + 14 * k
            parts.append(f'<line x1="{lx}" x2="{lx + 18}" y1="{lyy - 4}" y2="{lyy - 4}" stroke="{COLORS[b]}" stroke-width="2"/>')
            parts.append(svg_text(lx + 22, lyy, b, 10))
    parts.append(svg_text(total_w / 2, h - 8, "percentile of requests (oha, latency corrected; median over rounds, max: the largest)", 10, "middle"))
    write_svg(path, total_w, h, parts)


def timeline_svg(out, path):
    import math

    panels = []
    for b in ["poolswap", "arcswap"]:
        p = os.path.join(out, f"timeline-{b}.csv")
        if os.path.exists(p):
            reqs, reloads = read_timeline(p)
            if reqs:
                panels.append((b, reqs, reloads))
    if not panels:
        return
    w, ph, pad_l, pad_b, pad_t = 900, 220, 60, 30, 30
    h = ph * len(panels) + 30
    parts = []
    lo = 1.0
    hi = max(d for _, reqs, _ in panels for _, d in reqs) * 1.5
    for i, (b, reqs, reloads) in enumerate(panels):
        oy = i * ph
        # A second around the slowest request.
        t_slow = max(reqs, key=lambda r: r[1])[0]
        t0, t1 = t_slow - 500e3, t_slow + 500e3
        tx = lambda t: pad_l + (w - pad_l - 20) * (t - t0) / (t1 - t0)
        ty = lambda v: oy + pad_t + (ph - pad_t - pad_b) * (1 - (math.log10(max(v, lo)) - math.log10(lo)) / (math.log10(hi) - math.log10(lo)))
        parts.append(svg_text(w / 2, oy + 18, f"{b}: each request's handling time (server side) in the second around the slowest; shaded: reloads", 12, "middle"))
        parts.append(f'<rect x="{pad_l}" y="{oy + pad_t}" width="{w - pad_l - 20}" height="{ph - pad_t - pad_b}" fill="none" stroke="#888"/>')
        for r0, rd in reloads:
            if r0 + rd >= t0 and r0 <= t1:
                a, z = tx(max(r0, t0)), tx(min(r0 + rd, t1))
                parts.append(f'<rect x="{a:.1f}" y="{oy + pad_t}" width="{max(z - a, 1):.1f}" height="{ph - pad_t - pad_b}" fill="#fdd" />')
        for t in log_ticks(lo, hi):
            y = ty(t)
            parts.append(f'<line x1="{pad_l}" x2="{w - 20}" y1="{y:.1f}" y2="{y:.1f}" stroke="#eee"/>')
            parts.append(svg_text(pad_l - 4, y + 4, f"{t:g} µs", 9, "end"))
        for k in range(0, 11):
            t = t0 + (t1 - t0) * k / 10
            parts.append(svg_text(tx(t), oy + ph - pad_b + 14, f"{(t - t0) / 1e3:.0f} ms", 9, "middle"))
        for s, d in reqs:
            if t0 <= s <= t1:
                parts.append(f'<circle cx="{tx(s):.1f}" cy="{ty(d):.1f}" r="1.3" fill="{COLORS[b]}"/>')
    write_svg(path, w, h, parts)


def write_svg(path, w, h, parts):
    with open(path, "w") as f:
        f.write(f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}">\n')
        f.write(f'<rect width="{w}" height="{h}" fill="white"/>\n')
        f.write("\n".join(parts))
        f.write("\n</svg>\n")


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--one":
        print(one_line(load_run(sys.argv[2])))
        return
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    rows = summarise(runs_of(out))
    machine = open(os.path.join(out, "machine.txt")).read() if os.path.exists(os.path.join(out, "machine.txt")) else ""
    md = [
        "# poolswap-service load run",
        "",
        "```text",
        machine.rstrip(),
        "```",
        "",
        table_md(rows, out),
        "",
        "Targets:",
        "",
        targets_md(rows, out),
        "",
        "Timeline (server-side handling time of each request, `--timeline`):",
        "",
        timeline_md(out),
        "",
    ]
    with open(os.path.join(out, "results.md"), "w") as f:
        f.write("\n".join(md))
    for name, draw in [("latency", lambda p: latency_svg(rows, p)),
                       ("timeline", lambda p: timeline_svg(out, p))]:
        svg = os.path.join(out, name + ".svg")
        draw(svg)
        to_png(svg, os.path.join(out, name + ".png"))
    print("\n".join(md))


def to_png(svg, png):
    """Converts `svg` to `png` with rsvg-convert and removes the SVG; keeps the SVG and says
    so if the converter is missing and cannot be installed."""
    if shutil.which("rsvg-convert") is None:
        subprocess.run(["apt-get", "install", "-y", "librsvg2-bin"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    if shutil.which("rsvg-convert") is None:
        print(f"rsvg-convert not found: {svg} left as SVG", file=sys.stderr)
        return
    subprocess.run(["rsvg-convert", "-b", "white", svg, "-o", png], check=True)
    os.remove(svg)


if __name__ == "__main__":
    main()
