#!/usr/bin/env python3
"""Checks the layout of src/: no import cycle between files, no import from a lower layer to
a higher one, no two files with the same name, nothing included from tests/.

An edge A -> B is a path in A's code (a `use` item, or an inline `crate::`/`super::`/`self::`
path; comments and `#[cfg(..test..)]` inline modules are skipped) that names an item of file B.
`mod` declarations, `pub use` re-exports and a front file's uses of its own children
(`pool.rs` -> `pool/shared.rs`) are not edges: the front file is the module's map, built
from its parts; the parts' uses of the front file's items are edges. Paths through the crate root's
re-exports (`crate::Container`) resolve to the file that defines the item.

Layers, lowest first: a file may use its own layer and the layers below it.

The op log talks to the pool only through the pool's writer side (`pool::Writer`, described
in `src/pool.rs`): a file of the op log (`src/oplog.rs`, `src/oplog/`) may not import from
`src/reclaim/`, and no file outside `src/pool/` may name a pool item marked
`// layout: one caller` (a comment just above its `fn`, among its docs and attributes): the
getters behind `Writer`. A marked method (`&self`) is named by `.name(` or `::name`, a marked
associated function by `::name`.
Usage: scripts/check-layout.py [--graph]   Standard library only.
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent / "src"
# Lowest first. The first path segment under `crate` names the layer.
LAYERS = [
    {"sync"},
    {"refcount"},
    {"reclaim"},
    {"pool"},
    {"container"},
    {"recycle"},
    {"oplog"},
    {"serialize", "compile_fail_tests", ""},
]
RANK = {name: i for i, names in enumerate(LAYERS) for name in names}


def module_of(path):
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts == ["lib"]:
        return ()
    return tuple(parts)


files = {module_of(p): p for p in ROOT.rglob("*.rs")}


def strip(text):
    out, skip_depth = [], None
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if skip_depth is None and re.match(r"\s*#\[cfg\(.*\btest\b.*\)\]", line):
            j = i + 1
            while j < len(lines) and lines[j].strip().startswith("#["):
                j += 1
            if j < len(lines) and re.match(r"\s*(pub(\([^)]*\))?\s+)?mod \w+\s*\{", lines[j]):
                depth = 0
                for k in range(j, len(lines)):
                    depth += lines[k].count("{") - lines[k].count("}")
                    if depth == 0 and "{" in "".join(lines[j:k + 1]):
                        break
                i = k + 1
                continue
        line = re.sub(r"//.*", "", line)
        out.append(line)
        i += 1
    return "\n".join(out)


def expand(tree):
    """`a::{b, c::{d, e}}` -> [a::b, a::c::d, a::c::e]."""
    tree = tree.strip()
    m = re.match(r"^(.*?)::\{(.*)\}$", tree, re.S)
    if not m:
        return [re.sub(r"\s+as\s+\w+$", "", tree)]
    prefix, inner = m.group(1), m.group(2)
    parts, depth, cur = [], 0, ""
    for ch in inner:
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        depth += ch == "{"
        depth -= ch == "}"
        cur += ch
    parts.append(cur)
    out = []
    for p in parts:
        if p.strip():
            for e in expand(p):
                out.append(prefix if e == "self" else prefix + "::" + e)
    return out


def absolute(mod, path):
    segs = [s.strip() for s in path.split("::")]
    if segs[0] == "crate":
        base, segs = [], segs[1:]
    elif segs[0] in ("super", "self"):
        base = list(mod)
        while segs and segs[0] in ("super", "self"):
            if segs[0] == "super":
                base = base[:-1]
            segs = segs[1:]
    else:
        return None
    return base + segs


def root_reexports():
    text = strip(files[()].read_text())
    out = {}
    for m in re.finditer(r"pub use\s+([^;]+);", text):
        for p in expand(m.group(1)):
            segs = p.split("::")
            out[segs[-1]] = tuple(s for s in segs[:-1] if s not in ("crate", "self"))
    return out


REEXPORT = root_reexports()


def resolve(segs):
    if segs and len(segs) >= 1 and tuple(segs[:1]) not in files and segs[0] in REEXPORT:
        segs = list(REEXPORT[segs[0]]) + segs[1:]
    best = ()
    for n in range(1, len(segs) + 1):
        if tuple(segs[:n]) in files:
            best = tuple(segs[:n])
    return best


edges = {m: set() for m in files}
problems = []
for mod, path in files.items():
    raw = path.read_text()
    if re.search(r'#\[path\s*=\s*"[^"]*tests/', raw):
        problems.append(f"{path.relative_to(ROOT.parent)} includes a file from tests/")
    text = strip(raw)
    paths = []
    for m in re.finditer(r"(?<![\w:])(pub(\([^)]*\))?\s+)?use\s+([^;]+);", text):
        if m.group(1):  # a re-export
            continue
        paths += expand(m.group(3))
    body = re.sub(r"(?<![\w:])(pub(\([^)]*\))?\s+)?use\s+[^;]+;", "", text)
    paths += re.findall(r"(?<![\w:])(?:crate|super|self)(?:::\w+)+", body)
    for p in paths:
        segs = absolute(mod, p)
        if segs is None:
            continue
        target = resolve(segs)
        # A front file's use of its own children is the layer's map: not an edge.
        if target != mod and target in files and target[:len(mod)] != mod:
            edges[mod].add(target)


def name(m):
    return str(files[m].relative_to(ROOT.parent))


def layer(m):
    return RANK.get(m[0] if m else "", None)


for m, outs in edges.items():
    for t in outs:
        lm, lt = layer(m), layer(t)
        if lm is None or lt is None:
            problems.append(f"no layer for {name(m) if lm is None else name(t)}: add it to LAYERS")
        elif lt > lm:
            problems.append(f"upward import: {name(m)} -> {name(t)}")

# The op log reaches the pool and reclamation only through `pool::Writer`.
OPLOG = {m for m in files if m[:1] == ("oplog",)}
for m in OPLOG:
    for t in edges[m]:
        if t[:1] == ("reclaim",):
            problems.append(f"op log past the pool's writer side: {name(m)} -> {name(t)}")

ONE_CALLER = {}  # fn name -> (defining file, whether it takes `self`)
for m, p in files.items():
    if m[:1] != ("pool",):
        continue
    lines = p.read_text().splitlines()
    for i, line in enumerate(lines):
        if not re.match(r"\s*//\s*layout:\s*one caller\b", line):
            continue
        for follow in lines[i + 1:]:
            f = re.match(r"\s*(?:pub(?:\([^)]*\))?\s+)?(?:unsafe\s+)?fn\s+(\w+)[^(]*\(\s*(&?\s*(?:'\w+\s+)?(?:mut\s+)?self\b)?", follow)
            if f:
                ONE_CALLER[f.group(1)] = (name(m), bool(f.group(2)))
                break
            if not re.match(r"\s*(///|//|#\[)", follow):
                problems.append(f"{name(m)}: `// layout: one caller` above no fn")
                break
for m, p in files.items():
    if m[:1] == ("pool",):
        continue
    text = strip(p.read_text())
    for fn, (home, method) in ONE_CALLER.items():
        pattern = rf"(\.\s*{fn}\s*\(|::\s*{fn}\b)" if method else rf"::\s*{fn}\b"
        if re.search(pattern, text):
            problems.append(f"{name(m)} names `{fn}` ({home}), marked for one caller: use pool::Writer")

# Cycles: Tarjan's strongly connected components.
index, low, stack, on, sccs, counter = {}, {}, [], set(), [], [0]


def visit(v):
    index[v] = low[v] = counter[0]
    counter[0] += 1
    stack.append(v)
    on.add(v)
    for w in edges[v]:
        if w not in index:
            visit(w)
            low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        comp = []
        while True:
            w = stack.pop()
            on.discard(w)
            comp.append(w)
            if w == v:
                break
        if len(comp) > 1:
            sccs.append(comp)


sys.setrecursionlimit(10000)
for v in sorted(files):
    if v not in index:
        visit(v)
for comp in sccs:
    problems.append("import cycle: " + " <-> ".join(sorted(name(m) for m in comp)))

names = {}
for m, p in files.items():
    names.setdefault(p.name, []).append(name(m))
for n, ps in names.items():
    if len(ps) > 1 and n not in ("lib.rs",):
        problems.append(f"same file name: {', '.join(sorted(ps))}")

if "--graph" in sys.argv:
    for m in sorted(edges):
        print(name(m), "->", ", ".join(sorted(name(t) for t in edges[m])))
if problems:
    print("check-layout: problems in src/:")
    print("\n".join(sorted(set(problems))))
    sys.exit(1)
print(f"check-layout: {len(files)} files, no cycle, no upward import, no shared file name")
