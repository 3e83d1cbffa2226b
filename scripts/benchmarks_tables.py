#!/usr/bin/env python3
"""Copies the tables of bench-results/results.md into BENCHMARKS.md.

Run by scripts/bench.sh after tables.py, so the heavy, read and pool tables of
BENCHMARKS.md always come from the last `scripts/bench.sh` run. Standard library only.

BENCHMARKS.md marks each place to fill with a pair of comments:

    <!-- bench-results:SLUG -->
    ...replaced...
    <!-- /bench-results:SLUG -->

where SLUG is a section heading of results.md in lower case, with every run of other
characters than letters and digits turned into one `-` (`## Read path: acquire + read +
release` is `read-path-acquire-read-release`), or `run` for one line naming the run's
machine, toolchain, date, commit and command. A pair may appear more than once. A slug
that results.md lacks is an error; a section of results.md that no pair names is reported.

Usage: scripts/benchmarks_tables.py [OUT]   (OUT: the folder of results.md, default
bench-results)
"""
import pathlib
import re
import sys

root = pathlib.Path(__file__).resolve().parent.parent
out = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else root / "bench-results"
rel = out.resolve().relative_to(root).as_posix()
lines = (out / "results.md").read_text().splitlines()


def slug(heading):
    return re.sub(r"[^a-z0-9]+", "-", heading.lower()).strip("-")


# The header (between the title and the first section): "- Key: value" lines and notes.
header, sections, current = [], {}, None
for line in lines[1:]:
    if line.startswith("## "):
        current = slug(line[3:])
        sections[current] = []
    elif current is None:
        header.append(line)
    else:
        sections[current].append(line)

facts = dict(m.groups() for m in (re.match(r"- ([^:]+): (.*)", l) for l in header) if m)
notes = " ".join(l for l in header if l and not l.startswith("- "))
command = facts.get("Command", "`scripts/bench.sh`").replace(", took", " (took")
command += ")" if "(took" in command else ""
run = (f"Run: commit {facts.get('Commit', '?')}, {facts.get('Date', '?')}; "
       f"{facts.get('Machine', '?')}; {facts.get('Toolchain', '?')}; {command}; "
       f"[{rel}/results.md]({rel}/results.md).")
if "Go rows" in facts:
    run += f" Go rows: {facts['Go rows']}."
blocks = {"run": run + (" " + notes if notes else "")}
for name, body in sections.items():
    text = "\n".join(body).strip()
    # The plot sits beside results.md; BENCHMARKS.md is one folder up.
    text = text.replace("[heavy.svg](heavy.svg)", f"[{rel}/heavy.svg]({rel}/heavy.svg)")
    text = text.replace("](heavy.svg)", f"]({rel}/heavy.svg)")
    blocks[name] = text

target = root / "BENCHMARKS.md"
doc = target.read_text()
used = set()


def fill(m):
    name = m.group(1)
    if name not in blocks:
        sys.exit(f"BENCHMARKS.md names bench-results:{name}, which {rel}/results.md lacks "
                 f"(it has: {', '.join(sorted(blocks))})")
    used.add(name)
    return f"<!-- bench-results:{name} -->\n{blocks[name]}\n<!-- /bench-results:{name} -->"


pattern = re.compile(r"<!-- bench-results:([a-z0-9-]+) -->.*?<!-- /bench-results:\1 -->", re.S)
doc, count = pattern.subn(fill, doc)
if count == 0:
    sys.exit("BENCHMARKS.md has no bench-results markers")
target.write_text(doc)
for name in sorted(set(blocks) - used):
    print(f"note: section {name} of {rel}/results.md is not in BENCHMARKS.md", file=sys.stderr)
print(f"BENCHMARKS.md: {count} blocks replaced from {rel}/results.md")
