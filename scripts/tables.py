#!/usr/bin/env python3
"""Turn the bench results into the tables and plot that BENCHMARKS.md shows.

Reads, for every benchmark listed in target/bench-alloc/{heavy,read,pool}.tsv (written
by the bench binaries, see benches/support/mod.rs), criterion's time estimate from
target/criterion/<group>/<function>[/<parameter>]/new/estimates.json (the regression
slope where criterion sampled linearly, else the mean), joins it with the allocation
figures, and writes:

  <out>/results.md   markdown tables: heavy (write ratio x allocator setting), read, pool,
                     with machine, toolchain, date and command
  <out>/heavy.svg    grouped bars of the heavy table's time per op

If compare/go/results/summary.tsv exists (compare/go/run.sh writes it), the Go original's
figures join the heavy tables: GOMEMLIMIT=512MiB beside glibc's defaults, 50MiB beside
the tight mmap threshold.

Python 3 standard library only. Usually run by scripts/bench.sh.
"""

import argparse
import csv
import datetime
import html
import json
import math
import os
import platform
import subprocess
import sys

HEAVY = [
    ("poolswap", "poolswap"),
    ("arc-swap", "arc-swap"),
    ("rwlock-arc", "`RwLock<Arc<T>>`"),
    ("rwlock-inplace", "`RwLock<T>` in place"),
    ("left-right", "left-right"),
]
# The Go benchmark's strategies, and the Rust column each one corresponds to.
GO_STRATEGIES = {
    "poolswap": "poolswap",
    "atomicptr": "arc-swap",
    "mutexalloc": "rwlock-arc",
    "mutexinplace": "rwlock-inplace",
}
GO_MEMLIMIT = {"512MiB": "default", "50MiB": "tight"}
READ = [
    ("poolswap", "poolswap `acquire`"),
    ("poolswap-cache", "poolswap `Cache::load`"),
    ("poolswap-fence", "poolswap `acquire`, `POOLSWAP_BARRIER=fence`"),
    ("poolswap-cache-fence", "poolswap `Cache::load`, `POOLSWAP_BARRIER=fence`"),
    ("arc-swap-load", "arc-swap `load`"),
    ("arc-swap-load-fence-run", "arc-swap `load`, again in the `POOLSWAP_BARRIER=fence` run"),
    ("arc-swap-cache", "arc-swap `Cache::load`"),
    ("rwlock-arc", "`RwLock<Arc<T>>` clone"),
    ("parking-lot-rwlock", "parking_lot `RwLock<T>` read"),
    ("left-right", "left-right `enter`"),
]
POOL = [
    ("poolswap", "poolswap"),
    ("fresh-vec", "fresh `Vec` (no pool)"),
    ("object-pool", "object-pool"),
    ("lockfree-object-pool", "lockfree-object-pool"),
    ("opool", "opool"),
    ("sharded-slab", "sharded-slab `Pool`"),
]
COLORS = ["#1b6ca8", "#e4812f", "#3a9e4f", "#c8413b", "#8a63b8", "#7f7f7f"]


def tsv_rows(path):
    """The rows of a tab-separated file with a header line, as dicts; none if it is missing."""
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def read_tsv(path):
    """Rows of a side file as dicts; the last line for an id wins (reruns append)."""
    return {(r["group"], r["function"], r["parameter"]): r for r in tsv_rows(path)}


def estimate_ns(target, group, function, parameter, fallback):
    """Criterion's per-op time (slope if present, else mean), or the side file's own."""
    parts = [target, "criterion", group, function] + ([parameter] if parameter else [])
    path = os.path.join(*parts, "new", "estimates.json")
    try:
        with open(path) as f:
            est = json.load(f)
    except (OSError, ValueError):
        return fallback
    for key in ("slope", "mean"):
        if est.get(key):
            return est[key]["point_estimate"]
    return fallback


def load(target, bench):
    """{(group, function, parameter): {"ns", "bytes", "extra"}} for one bench."""
    out = {}
    for key, row in read_tsv(os.path.join(target, "bench-alloc", bench + ".tsv")).items():
        out[key] = {
            "ns": estimate_ns(target, *key, float(row["ns_per_op"])),
            "bytes": float(row["bytes_per_op"]),
            "extra": float(row["extra_per_op"]),
        }
    return out


def fmt_time(ns):
    """A time per op: ns below 10 µs, else µs, else ms, three significant figures."""
    if ns < 1_000:
        return f"{ns:.3g} ns" if ns >= 100 else f"{ns:.1f} ns"
    if ns < 1_000_000:
        us = ns / 1_000
        return f"{us:.1f} µs" if us < 100 else f"{us:,.0f} µs"
    ms = ns / 1_000_000
    return f"{ms:.2f} ms" if ms < 10 else f"{ms:.1f} ms"


def fmt_bytes(b):
    if b < 10:
        return f"{b:.1f} B"
    if b < 10 * 1024:
        return f"{b:,.0f} B"
    if b < 10 * 1024 * 1024:
        return f"{b / 1024:,.1f} KiB"
    return f"{b / 1024 / 1024:,.1f} MiB"


def ratio(x, base):
    if base is None or x is None or base <= 0:
        return ""
    return f" ({x / base:.2f}×)" if x / base < 10 else f" ({x / base:,.0f}×)"


def setting_name(s):
    if s == "default":
        return "glibc default"
    if s.startswith("mmap"):
        return f"`MALLOC_MMAP_THRESHOLD_={s[4:]}`"
    return s


def go_results(path):
    """{(setting_kind, write_pct, column): row} from compare/go/results/summary.tsv."""
    out = {}
    for row in tsv_rows(path):
        col = GO_STRATEGIES.get(row["strategy"].lower().replace("_", ""))
        kind = GO_MEMLIMIT.get(row["memlimit"])
        if col and kind:
            out[(kind, int(row["write_pct"]), col)] = {
                "ns": float(row["ns_per_op"]),
                "bytes": float(row["bytes_per_op"]),
            }
    return out


def heavy_settings(heavy):
    """Allocator settings present, glibc default first."""
    found = {g[len("heavy-"):] for (g, _, _) in heavy}
    return sorted(found, key=lambda s: (s != "default", s))


def heavy_tables(heavy, go, go_version):
    settings = heavy_settings(heavy)
    pcts = sorted({int(p[1:]) for (_, _, p) in heavy if "-" not in p})
    head = "| writes | allocator | | " + " | ".join(n for _, n in HEAVY) + " |\n"
    head += "|---:|---|---|" + "---:|" * len(HEAVY) + "\n"
    rows = []  # (pct, setting label, impl label, {col: cell})
    for pct in pcts:
        for s in settings:
            cells = {k: heavy.get((f"heavy-{s}", k, f"w{pct}")) for k, _ in HEAVY}
            rows.append((pct, setting_name(s), "Rust", cells))
            kind = "default" if s == "default" else "tight"
            go_cells = {k: go.get((kind, pct, k)) for k, _ in HEAVY}
            if any(go_cells.values()):
                limit = "512MiB" if kind == "default" else "50MiB"
                rows.append((pct, f"`GOMEMLIMIT={limit}`", go_version, go_cells))
    time_md, bytes_md = head, head
    for pct, setting, impl, cells in rows:
        base = cells.get("poolswap")
        t, b = [], []
        for k, _ in HEAVY:
            c = cells.get(k)
            if c is None:
                t.append("–")
                b.append("–")
                continue
            t.append(fmt_time(c["ns"]) + ("" if k == "poolswap" else ratio(c["ns"], base and base["ns"])))
            bb = base["bytes"] if base and base["bytes"] >= 1 else None
            b.append(fmt_bytes(c["bytes"]) + ("" if k == "poolswap" else ratio(c["bytes"], bb)))
        time_md += f"| {pct}% | {setting} | {impl} | " + " | ".join(t) + " |\n"
        bytes_md += f"| {pct}% | {setting} | {impl} | " + " | ".join(b) + " |\n"
    return time_md, bytes_md


def read_table(read):
    threads = sorted({int(p[1:]) for (g, _, p) in read if g == "read"})
    md = "| strategy | " + " | ".join(f"{t} reader{'s' if t > 1 else ''}" for t in threads)
    md += " | B/op (max) |\n|---|" + "---:|" * (len(threads) + 1) + "\n"
    for key, label in READ:
        cells, worst = [], 0.0
        for t in threads:
            c = read.get(("read", key, f"t{t}"))
            base = read.get(("read", "poolswap", f"t{t}"))
            if c is None:
                cells.append("–")
                continue
            worst = max(worst, c["bytes"])
            r = "" if key == "poolswap" else ratio(c["ns"], base and base["ns"])
            cells.append(fmt_time(c["ns"]) + r)
        md += f"| {label} | " + " | ".join(cells) + f" | {worst:.2f} |\n"
    return md


def update_table(read):
    """One update with N other threads registered as readers (benches/read.rs, group update)."""
    others = sorted({int(p[1:]) for (g, _, p) in read if g == "update"})
    if not others:
        return ""
    md = "| barrier | " + " | ".join(f"{n} threads registered" for n in others) + " |\n"
    md += "|---|" + "---:|" * len(others) + "\n"
    for key, label in [("poolswap", "`membarrier`"), ("poolswap-fence", "`fence(SeqCst)`")]:
        cells = []
        for n in others:
            c = read.get(("update", key, f"t{n}"))
            cells.append("–" if c is None else fmt_time(c["ns"]))
        if any(c != "–" for c in cells):
            md += f"| {label} | " + " | ".join(cells) + " |\n"
    return md


def pool_table(pool):
    md = "| pool | get + drop, 1 thread | B/op | handoff (get → other thread drops) | B/op "
    md += "| factory calls/op (handoff) |\n|---|---:|---:|---:|---:|---:|\n"
    for key, label in POOL:
        loc = pool.get(("pool-local", key, ""))
        hand = pool.get(("pool-handoff", key, ""))
        bl = pool.get(("pool-local", "poolswap", ""))
        bh = pool.get(("pool-handoff", "poolswap", ""))
        cells = []
        for c, base in ((loc, bl), (hand, bh)):
            if c is None:
                cells += ["–", "–"]
                continue
            r = "" if key == "poolswap" else ratio(c["ns"], base and base["ns"])
            cells += [fmt_time(c["ns"]) + r, fmt_bytes(c["bytes"])]
        cells.append(f"{hand['extra']:.4f}" if hand else "–")
        md += f"| {label} | " + " | ".join(cells) + " |\n"
    return md


def heavy_svg(heavy, go):
    """Three panels (1/10/50% writes); in each, one cluster per allocator setting with
    one bar per strategy (plus the Go original's poolswap when known); linear scale per
    panel, value on each bar."""
    settings = heavy_settings(heavy)
    pcts = sorted({int(p[1:]) for (_, _, p) in heavy if "-" not in p})
    series = [(k, n.replace("`", ""), COLORS[i]) for i, (k, n) in enumerate(HEAVY)]
    with_go = any(k[2] == "poolswap" for k in go)
    if with_go:
        series.append(("go-poolswap", "Go poolswap (its GOMEMLIMIT under each cluster)", COLORS[5]))
    bar, gap, pad = 18, 22, 40
    cluster_w = len(series) * bar
    panel_w = pad + len(settings) * cluster_w + (len(settings) - 1) * gap + 40
    plot_h, top, bottom = 260, 75, 70
    width = max(len(pcts) * panel_w + 40, 700)
    height = top + plot_h + bottom + 40
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">',
        '<rect width="100%" height="100%" fill="white"/>',
        f'<text x="{width / 2}" y="20" text-anchor="middle" font-size="15">'
        "Heavy object (100k-entry map, 2 threads): time per op, lower is better</text>",
    ]
    for pi, pct in enumerate(pcts):
        x0 = 30 + pi * panel_w
        vals = []
        for s in settings:
            for k, _, _ in series:
                v = value(heavy, go, s, pct, k)
                if v is not None:
                    vals.append(v)
        unit, scale = ("ms", 1000.0) if vals and max(vals) >= 1000 else ("µs", 1.0)
        step = nice_step(max(vals) / scale if vals else 1)
        vmax = step * (int(max(vals) / scale / step) + 1) if vals else 1
        y_base = top + plot_h
        out.append(f'<text x="{x0 + panel_w / 2}" y="{top - 24}" text-anchor="middle" '
                   f'font-size="13">{pct}% writes</text>')
        tick = 0.0
        while tick <= vmax + 1e-9:
            ty = y_base - plot_h * tick / vmax
            out.append(f'<line x1="{x0 + pad - 6}" y1="{ty:.1f}" x2="{x0 + panel_w - 10}" '
                       f'y2="{ty:.1f}" stroke="{"#333" if tick == 0 else "#ddd"}"/>')
            out.append(f'<text x="{x0 + pad - 9}" y="{ty + 4:.1f}" text-anchor="end" '
                       f'fill="#555">{tick:g}</text>')
            tick += step
        out.append(f'<text x="{x0 + pad - 9}" y="{top - 8}" text-anchor="end" fill="#555">{unit}</text>')
        for si, s in enumerate(settings):
            cx = x0 + pad + si * (cluster_w + gap)
            for bi, (k, _, color) in enumerate(series):
                v = value(heavy, go, s, pct, k)
                if v is None:
                    continue
                h = plot_h * v / scale / vmax
                bx = cx + bi * bar
                out.append(f'<rect x="{bx}" y="{y_base - h:.1f}" width="{bar - 2}" '
                           f'height="{h:.1f}" fill="{color}"><title>{fmt_time(v * 1000)}</title></rect>')
                label = f"{v / scale:.3g}"
                ty = y_base - h - 3
                out.append(f'<text x="{bx + bar / 2 - 1}" y="{ty:.1f}" font-size="8" '
                           f'text-anchor="start" transform="rotate(-90 {bx + bar / 2 - 1} {ty:.1f})"'
                           f' dy="3">{label}</text>')
            name = "glibc default" if s == "default" else (
                f"mmap threshold {s[4:]}" if s.startswith("mmap") else s)
            out.append(f'<text x="{cx + cluster_w / 2}" y="{y_base + 16}" '
                       f'text-anchor="middle">{html.escape(name)}</text>')
            if with_go:
                # The Go bar of a cluster ran under Go's memory limit, not the Rust
                # allocator setting named above it (see value()).
                out.append(f'<text x="{cx + cluster_w / 2}" y="{y_base + 30}" '
                           f'text-anchor="middle" font-size="10" fill="#555">'
                           f'Go: GOMEMLIMIT={go_limit(s)}</text>')
    ly = height - 30
    lx = 30
    for _, name, color in series:
        out.append(f'<rect x="{lx}" y="{ly - 10}" width="12" height="12" fill="{color}"/>')
        out.append(f'<text x="{lx + 16}" y="{ly}">{html.escape(name)}</text>')
        lx += 30 + 7 * len(name)
    out.append("</svg>")
    return "\n".join(out) + "\n"


def plot_note(heavy, go):
    """The line that points to the plot and says what each cluster's bars ran with. A
    link, not an image: scripts/benchmarks_tables.py points it at bench-results/ when it
    copies the section into BENCHMARKS.md."""
    clusters = []
    for s in heavy_settings(heavy):
        name = "glibc's defaults" if s == "default" else setting_name(s)
        if go:
            name += f" (its Go poolswap bar: `GOMEMLIMIT={go_limit(s)}`)"
        clusters.append(name)
    return ("The plot of the time table is [heavy.svg](heavy.svg): one panel per write ratio, "
            "one cluster per allocator setting, left to right " + ", ".join(clusters) + ".")


def nice_step(vmax):
    """A round tick step giving 3 to 6 ticks up to vmax."""
    step = 10 ** math.floor(math.log10(vmax)) if vmax > 0 else 1
    for m in (1, 2, 5, 10):
        if vmax / (step * m) <= 5:
            return step * m
    return step * 10


def go_kind(setting):
    """The Go run that sits beside a Rust allocator setting: 512MiB beside glibc's
    defaults, 50MiB beside a tight mmap threshold."""
    return "default" if setting == "default" else "tight"


def go_limit(setting):
    """The GOMEMLIMIT of the Go run beside a Rust allocator setting."""
    return "512MiB" if go_kind(setting) == "default" else "50MiB"


def value(heavy, go, setting, pct, key):
    """Time per op of one bar, in µs, or None."""
    if key == "go-poolswap":
        c = go.get((go_kind(setting), pct, "poolswap"))
    else:
        c = heavy.get((f"heavy-{setting}", key, f"w{pct}"))
    return c["ns"] / 1000 if c else None


def commit():
    """The commit measured (with "+ local changes" if the work tree differs)."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no",
                                "--", "src", "benches", "Cargo.toml", "Cargo.lock"],
                               capture_output=True, text=True, check=True).stdout.strip()
        return head + (" + local changes" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def machine():
    model = platform.processor() or "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} CPUs, {platform.system()} {platform.release()}"


def toolchain():
    try:
        return subprocess.run(["rustc", "-V"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "rustc (unknown version)"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--target", default=os.environ.get("CARGO_TARGET_DIR", "target"))
    ap.add_argument("--out", default="bench-results")
    ap.add_argument("--go", default="compare/go/results/summary.tsv")
    ap.add_argument("--command", default="scripts/bench.sh")
    ap.add_argument("--seconds", type=int, default=None, help="how long the run took")
    args = ap.parse_args()

    heavy, read, pool = (load(args.target, b) for b in ("heavy", "read", "pool"))
    if not (heavy or read or pool):
        sys.exit(f"no results under {args.target}/bench-alloc: run scripts/bench.sh")
    go = go_results(args.go)
    go_version = "Go"
    info = os.path.join(os.path.dirname(args.go), "run-info.txt")
    if go and os.path.exists(info):
        with open(info) as f:
            for line in f:
                if line.startswith("go:"):
                    go_version = line.split()[-2].replace("go", "Go ", 1)  # "go1.26.8" -> "Go 1.26.8"

    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    took = f", took {args.seconds // 60} min {args.seconds % 60} s" if args.seconds else ""
    md = ["# poolswap benchmark results", ""]
    md.append(f"- Machine: {machine()}")
    md.append(f"- Toolchain: {toolchain()}, glibc malloc")
    md.append(f"- Date: {now}")
    md.append(f"- Commit: {commit()}")
    md.append(f"- Command: `{args.command}`{took}")
    if go:
        md.append(f"- Go rows: `{args.go}` (compare/go/run.sh; see run-info.txt there)")
    md.append("")
    md.append("Times are criterion's estimates; bytes and allocations per op come from a counting "
              "global allocator (every thread, warm-up included). Ratios are against poolswap in "
              "the same row or column.")
    md.append("")
    if heavy:
        t, b = heavy_tables(heavy, go, go_version)
        md += ["## Heavy object: time per op", "",
               "A 100,000-entry `HashMap<&str, &str>`; 2 threads; a write refills the whole map "
               "and publishes it, a read looks up one random key. Time per op = wall time / "
               "total ops (Go's `RunParallel`). `benches/heavy.rs`.", "", t,
               "## Heavy object: bytes allocated per op", "", b,
               plot_note(heavy, go), ""]
    if read:
        md += ["## Read path: acquire + read + release", "",
               "A `[u64; 8]`; N reader threads, one writer publishing every millisecond. Time per "
               "read = wall time / total reads. `benches/read.rs`.", "", read_table(read)]
        if update_table(read):
            md += ["### Update cost with threads registered as readers", "",
                   "`get_new` + fill + `update` of the same `[u64; 8]`, with N other threads "
                   "that have read once and are parked (their hazard slots are scanned). "
                   "`benches/read.rs`, group `update`.", "", update_table(read)]
    if pool:
        md += ["## Pools: get + drop of a `Vec<u8>` with 4 KiB capacity", "",
               "Handoff: one thread gets and sends through a bounded channel, another drops; the "
               "channel's cost is in every handoff figure. `benches/pool.rs`.", "", pool_table(pool)]
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "results.md"), "w") as f:
        f.write("\n".join(md))
    if heavy:
        with open(os.path.join(args.out, "heavy.svg"), "w") as f:
            f.write(heavy_svg(heavy, go))
    print(f"wrote {args.out}/results.md" + (f" and {args.out}/heavy.svg" if heavy else ""))


if __name__ == "__main__":
    main()
