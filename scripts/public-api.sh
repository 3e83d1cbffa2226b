#!/usr/bin/env bash
# Prints the crate's public API, one item a line, sorted: every public path (modules,
# types, functions, constants, traits, re-exports), each public field, variant and inherent
# method or associated item with its signature, each trait's items, and every trait impl
# of a public type or of a public trait, auto-trait impls (Send, Sync, Unpin, ...) included.
# Blanket impls (From<T> for T, Any, ...) are left out. Paths are the public ones
# (`poolswap::Guard`, not the private module that defines it), so moving code between
# private modules changes nothing here; a diff of two listings is a diff of the API.
#
# Usage: scripts/public-api.sh [OUTPUT]   (stdout when no OUTPUT)
#
# Reads rustdoc's JSON output, which needs a nightly toolchain (`rustup toolchain install
# nightly`), with the user-facing features on (serde, async; not the tests' `internals`).
# Compare listings made with the same nightly: the JSON format changes between nightlies
# (the script checks the format version it was written against and says so when it differs).
#
# cargo-public-api does this more thoroughly; this script avoids building it (several
# hundred crates) and pinning the nightly it needs.
set -euo pipefail

cd "$(dirname "$0")/.."
target_dir="${CARGO_TARGET_DIR:-target}"
cargo +nightly rustdoc --quiet --lib --features serde,async -- -Z unstable-options --output-format json
json="$target_dir/doc/poolswap.json"

listing=$(python3 - "$json" <<'PY'
import json
import sys

KNOWN_FORMAT = 57
doc = json.load(open(sys.argv[1]))
if doc["format_version"] != KNOWN_FORMAT:
    print(f"public-api.sh: rustdoc JSON format {doc['format_version']}, written against "
          f"{KNOWN_FORMAT}: check the output", file=sys.stderr)
index = doc["index"]
paths = doc["paths"]
CRATE = index[str(doc["root"])]["name"]


def kind(item):
    return next(iter(item["inner"]))


def inner(item):
    return item["inner"][kind(item)]


# Pass 1: the public path of every item reachable from the crate root (first found wins,
# breadth first, so the shortest path: a re-export at the root beats its module's path).
public = {}
queue = [(doc["root"], CRATE)]
while queue:
    item_id, path = queue.pop(0)
    if item_id in public:
        continue
    public[item_id] = path
    item = index[str(item_id)]
    if kind(item) != "module":
        continue
    for child_id in inner(item)["items"]:
        child = index[str(child_id)]
        if kind(child) == "use":
            use = inner(child)
            target = use["id"]
            if target is None or str(target) not in index:
                continue
            if use["is_glob"]:
                queue.append((target, path))  # its items land in this module
            else:
                queue.append((target, f"{path}::{use['name']}"))
        elif child["visibility"] == "public" and child["name"] is not None:
            queue.append((child_id, f"{path}::{child['name']}"))


def path_of(item_id, written):
    if item_id in public:
        return public[item_id]
    if item_id is not None and str(item_id) in paths:
        return "::".join(paths[str(item_id)]["path"])
    return written


def fmt_args(args):
    if not args:
        return ""
    if "angle_bracketed" in args:
        ab = args["angle_bracketed"]
        parts = []
        for arg in ab["args"]:
            if arg == "infer":
                parts.append("_")
            elif "type" in arg:
                parts.append(ty(arg["type"]))
            elif "lifetime" in arg:
                parts.append(arg["lifetime"])
            elif "const" in arg:
                parts.append(arg["const"]["expr"])
        for c in ab["constraints"]:
            binding = c["binding"]
            name = c["name"] + fmt_args(c["args"])
            if "equality" in binding:
                term = binding["equality"]
                parts.append(f"{name} = " + (ty(term["type"]) if "type" in term
                                             else term["constant"]["expr"]))
            else:
                parts.append(f"{name}: " + bounds(binding["constraint"]))
        return f"<{', '.join(parts)}>" if parts else ""
    if "parenthesized" in args:
        p = args["parenthesized"]
        out = f"({', '.join(ty(t) for t in p['inputs'])})"
        if p["output"] is not None:
            out += f" -> {ty(p['output'])}"
        return out
    return "(..)"


def rpath(p):
    return path_of(p["id"], p["path"]) + fmt_args(p["args"])


def hrtb(params):
    return f"for<{', '.join(gp['name'] for gp in params)}> " if params else ""


def bound(b):
    if "trait_bound" in b:
        tb = b["trait_bound"]
        mod = {"none": "", "maybe": "?", "maybe_const": "~const "}[tb["modifier"]]
        return hrtb(tb["generic_params"]) + mod + rpath(tb["trait"])
    if "outlives" in b:
        return b["outlives"]
    if "use" in b:
        return "use<" + ", ".join(a if isinstance(a, str) else next(iter(a.values()))
                                  for a in b["use"]) + ">"
    return str(b)


def bounds(bs):
    return " + ".join(bound(b) for b in bs)


def ty(t):
    if t is None:
        return "()"
    k = next(iter(t))
    v = t[k]
    if k == "resolved_path":
        return rpath(v)
    if k == "generic" or k == "primitive":
        return v
    if k == "borrowed_ref":
        lt = f"{v['lifetime']} " if v["lifetime"] else ""
        return f"&{lt}{'mut ' if v['is_mutable'] else ''}{ty(v['type'])}"
    if k == "raw_pointer":
        return f"*{'mut' if v['is_mutable'] else 'const'} {ty(v['type'])}"
    if k == "tuple":
        return "(" + ", ".join(ty(x) for x in v) + ("," if len(v) == 1 else "") + ")"
    if k == "slice":
        return f"[{ty(v)}]"
    if k == "array":
        return f"[{ty(v['type'])}; {v['len']}]"
    if k == "impl_trait":
        return f"impl {bounds(v)}"
    if k == "dyn_trait":
        traits = [hrtb(pt["generic_params"]) + rpath(pt["trait"]) for pt in v["traits"]]
        if v["lifetime"]:
            traits.append(v["lifetime"])
        return "dyn " + " + ".join(traits)
    if k == "function_pointer":
        return hrtb(v["generic_params"]) + header(v["header"]) + "fn" + sig(v["sig"])
    if k == "qualified_path":
        trait = f" as {rpath(v['trait'])}" if v["trait"] else ""
        return f"<{ty(v['self_type'])}{trait}>::{v['name']}{fmt_args(v['args'])}"
    if k == "infer":
        return "_"
    return str(t)


def header(h):
    out = ""
    if h["is_const"]:
        out += "const "
    if h["is_async"]:
        out += "async "
    if h["is_unsafe"]:
        out += "unsafe "
    if h["abi"] != "Rust":
        out += f'extern "{h["abi"]}" ' if isinstance(h["abi"], str) else "extern "
    return out


def sig(s):
    args = []
    for name, t in s["inputs"]:
        if name == "self":
            if t == {"generic": "Self"}:
                args.append("self")
                continue
            if "borrowed_ref" in t and t["borrowed_ref"]["type"] == {"generic": "Self"}:
                r = t["borrowed_ref"]
                lt = f"{r['lifetime']} " if r["lifetime"] else ""
                args.append(f"&{lt}{'mut ' if r['is_mutable'] else ''}self")
                continue
        args.append(f"{name}: {ty(t)}")
    out = f"({', '.join(args)})"
    if s["output"] is not None:
        out += f" -> {ty(s['output'])}"
    return out


def generics(g):
    params = []
    for p in g["params"]:
        k = p["kind"]
        if "lifetime" in k:
            o = k["lifetime"]["outlives"]
            params.append(p["name"] + (f": {' + '.join(o)}" if o else ""))
        elif "type" in k:
            if k["type"]["is_synthetic"]:
                continue
            b = k["type"]["bounds"]
            d = k["type"]["default"]
            params.append(p["name"] + (f": {bounds(b)}" if b else "")
                          + (f" = {ty(d)}" if d else ""))
        elif "const" in k:
            params.append(f"const {p['name']}: {ty(k['const']['type'])}")
    return f"<{', '.join(params)}>" if params else ""


def where(g):
    preds = []
    for wp in g["where_predicates"]:
        if "bound_predicate" in wp:
            bp = wp["bound_predicate"]
            preds.append(hrtb(bp["generic_params"]) + f"{ty(bp['type'])}: {bounds(bp['bounds'])}")
        elif "lifetime_predicate" in wp:
            lp = wp["lifetime_predicate"]
            preds.append(f"{lp['lifetime']}: {' + '.join(lp['outlives'])}")
        elif "eq_predicate" in wp:
            ep = wp["eq_predicate"]
            preds.append(f"{ty(ep['lhs'])} = {ty(ep['rhs']['type']) if 'type' in ep['rhs'] else ep['rhs']}")
    return f" where {', '.join(preds)}" if preds else ""


def attrs(item):
    out = ""
    for a in item["attrs"]:
        if a == "non_exhaustive" or (isinstance(a, dict) and "non_exhaustive" in a):
            out += "#[non_exhaustive] "
    return out


lines = set()


def fn_line(item, path, vis="pub "):
    f = inner(item)
    g = f["generics"]
    return (f"{vis}{header(f['header'])}fn {path}{generics(g)}{sig(f['sig'])}{where(g)}")


def assoc(item, path, vis, block=""):
    k = kind(item)
    v = inner(item)
    if k == "function":
        lines.add(fn_line(item, path, vis) + block)
    elif k == "assoc_const":
        val = f" = {v['value']}" if v.get("value") else ""
        lines.add(f"{vis}const {path}: {ty(v['type'])}{val}{block}")
    elif k == "assoc_type":
        b = f": {bounds(v['bounds'])}" if v["bounds"] else ""
        t = f" = {ty(v['type'])}" if v.get("type") else ""
        lines.add(f"{vis}type {path}{generics(v['generics'])}{b}{t}{where(v['generics'])}{block}")


def impl_line(impl_item):
    im = inner(impl_item)
    g = im["generics"]
    neg = "!" if im["is_negative"] else ""
    unsafe = "unsafe " if im["is_unsafe"] else ""
    return (f"{unsafe}impl{generics(g)} {neg}{rpath(im['trait'])} for {ty(im['for'])}"
            f"{where(g)}")


# Traits whose impls say nothing a user can rely on on stable Rust.
UNSTABLE_MARKERS = {"core::marker::Freeze", "core::marker::UnsafeUnpin",
                    "core::marker::StructuralPartialEq"}


def impls(impl_ids):
    for impl_id in impl_ids:
        impl_item = index[str(impl_id)]
        im = inner(impl_item)
        if im["blanket_impl"] is not None:
            continue
        if im["trait"] is not None:
            if path_of(im["trait"]["id"], im["trait"]["path"]) not in UNSTABLE_MARKERS:
                lines.add(impl_line(impl_item))
            continue
        # An inherent item: its path is the impl's self type (`poolswap::Pool<T>`, or
        # `poolswap::Pool<poolswap::Recycled<T>>` for a specialised block), and the block's
        # bounds follow in brackets, so moving a method between blocks shows too.
        g = im["generics"]
        block = f"  [impl{generics(g)}{where(g)}]" if g["params"] or g["where_predicates"] else ""
        for item_id in im["items"]:
            item = index[str(item_id)]
            if item["visibility"] == "public":
                assoc(item, f"{ty(im['for'])}::{item['name']}", "pub ", block)


def fields(field_ids, owner, vis_needed=True):
    for fid in field_ids:
        if fid is None:
            continue
        f = index[str(fid)]
        if vis_needed and f["visibility"] != "public":
            continue
        lines.add(f"pub {owner}::{f['name']}: {ty(inner(f))}")


seen = set()
for item_id, path in sorted(public.items(), key=lambda kv: kv[1]):
    if item_id in seen:
        continue
    seen.add(item_id)
    item = index[str(item_id)]
    k = kind(item)
    v = inner(item)
    a = attrs(item)
    if k == "module":
        lines.add(f"pub mod {path}")
    elif k == "struct":
        g = v["generics"]
        sk = v["kind"]
        lines.add(f"{a}pub struct {path}{generics(g)}{where(g)}")
        if "plain" in sk:
            fields(sk["plain"]["fields"], path)
        elif "tuple" in sk:
            for i, fid in enumerate(sk["tuple"]):
                if fid is not None and index[str(fid)]["visibility"] == "public":
                    lines.add(f"pub {path}::{i}: {ty(inner(index[str(fid)]))}")
        impls(v["impls"])
    elif k == "enum":
        g = v["generics"]
        lines.add(f"{a}pub enum {path}{generics(g)}{where(g)}")
        for vid in v["variants"]:
            var = index[str(vid)]
            vk = inner(var)["kind"]
            vpath = f"{path}::{var['name']}"
            if vk == "plain":
                disc = inner(var).get("discriminant")
                lines.add(f"{attrs(var)}{vpath}" + (f" = {disc['expr']}" if disc else ""))
            elif "tuple" in vk:
                tys = [ty(inner(index[str(f)])) if f is not None else "_" for f in vk["tuple"]]
                lines.add(f"{attrs(var)}{vpath}({', '.join(tys)})")
            else:
                lines.add(f"{attrs(var)}{vpath} {{ .. }}")
                fields(vk["struct"]["fields"], vpath, vis_needed=False)
        impls(v["impls"])
    elif k == "union":
        lines.add(f"pub union {path}{generics(v['generics'])}")
        fields(v["fields"], path)
        impls(v["impls"])
    elif k == "trait":
        g = v["generics"]
        unsafe = "unsafe " if v["is_unsafe"] else ""
        sup = f": {bounds(v['bounds'])}" if v["bounds"] else ""
        lines.add(f"pub {unsafe}trait {path}{generics(g)}{sup}{where(g)}")
        for tid in v["items"]:
            t = index[str(tid)]
            assoc(t, f"{path}::{t['name']}", "")
        for impl_id in v["implementations"]:
            impl_item = index[str(impl_id)]
            if inner(impl_item)["blanket_impl"] is None:
                lines.add(impl_line(impl_item))
    elif k == "function":
        lines.add(fn_line(item, path))
    elif k == "constant":
        lines.add(f"pub const {path}: {ty(v['type'])} = {v['const']['expr']}")
    elif k == "static":
        lines.add(f"pub static {'mut ' if v['is_mutable'] else ''}{path}: {ty(v['type'])}")
    elif k == "type_alias":
        g = v["generics"]
        lines.add(f"pub type {path}{generics(g)} = {ty(v['type'])}{where(g)}")
    elif k == "macro":
        lines.add(f"macro {path}!")
    elif k == "proc_macro":
        lines.add(f"proc macro {path}")
    else:
        lines.add(f"pub {k} {path}")

# External re-exports (a `pub use` of another crate's item) have no local item to walk.
for item_id, path in list(public.items()):
    item = index[str(item_id)]
    if kind(item) != "module":
        continue
    for child_id in inner(item)["items"]:
        child = index[str(child_id)]
        if kind(child) == "use" and child["visibility"] == "public":
            use = inner(child)
            if use["id"] is None or str(use["id"]) not in index:
                lines.add(f"pub use {path}::{use['name']} = {use['source']}")

print("\n".join(sorted(lines)))
PY
)

if [ $# -ge 1 ]; then
    printf '%s\n' "$listing" >"$1"
else
    printf '%s\n' "$listing"
fi
