#!/usr/bin/env python3
"""Copies bench-results/results.md into README.md between the bench-results markers.

Run by scripts/bench.sh after tables.py, so the README's performance tables always come
from the last `scripts/bench.sh` run. Standard library only.
"""
import pathlib
import sys

root = pathlib.Path(__file__).resolve().parent.parent
out = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else root / "bench-results"
results = (out / "results.md").read_text().splitlines()
# Drop the document title; demote headings one level to sit under "## Performance".
body = [("#" + line) if line.startswith("## ") else line for line in results[1:]]
rel = out.resolve().relative_to(root)
# No relative links or images: crates.io resolves them against `repository`, which is unset,
# so the README names the plot's path in the source package instead.
body = [line.replace("[heavy.svg](heavy.svg)", f"`{rel}/heavy.svg` (in the source package)")
        .replace("![heavy benchmark](heavy.svg)",
                 f"The plot of the time table is `{rel}/heavy.svg` (in the source package).")
        for line in body]

readme = root / "README.md"
text = readme.read_text()
start, end = "<!-- bench-results:start -->", "<!-- bench-results:end -->"
if start not in text or end not in text:
    sys.exit("README.md lacks the bench-results markers")
head, rest = text.split(start, 1)
_, tail = rest.split(end, 1)
readme.write_text(head + start + "\n" + "\n".join(body).strip() + "\n" + end + tail)
print(f"README.md: performance tables replaced from {out / 'results.md'}")
