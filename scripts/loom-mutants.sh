#!/usr/bin/env bash
# Ordering mutants: weakens one atomic ordering (or removes one fence) in src/ at a time,
# rebuilds the crate under `--cfg loom` and runs the loom models until one fails. A site
# whose weakening no model catches must say why beside it, or the script exits non-zero.
#
# Usage: scripts/loom-mutants.sh [--list] [--skip-marked] [--no-baseline] [PATH[:LINE]...]
#   PATH       a file or a folder under src/ (default: src); PATH:LINE only that line's sites
#   --list     print the sites and their mutants, classify them (build once), run nothing
#   --skip-marked  do not run the mutants of sites that carry a marker (report them as such)
#   --no-baseline  skip the unmutated run (its timings order the models, fastest first;
#              without it, the timings of the last baseline's logs are used, if any)
#   Paths are run in the order given (each folder's files in name order).
#
# Sites: every `Ordering::Acquire`, `Release`, `AcqRel` and `SeqCst` argument in src/, and
# every `fence(...)` / `compiler_fence(...)` call; comments are skipped. Each becomes the
# next weaker ordering:
#
#   load                       SeqCst -> Acquire,  Acquire -> Relaxed
#   store                      SeqCst -> Release,  Release -> Relaxed
#   read-modify-write (swap, fetch_*, a compare-and-swap's success, fetch_update's set)
#                              SeqCst -> AcqRel,   AcqRel -> Acquire and AcqRel -> Release
#                              (two mutants),      Acquire -> Relaxed, Release -> Relaxed
#   compare-and-swap failure (and fetch_update's fetch)
#                              SeqCst -> Acquire,  Acquire -> Relaxed
#   fence, compiler_fence      the call is removed (replaced by `()`)
#
# A call the script cannot classify (an ordering passed to a helper) is reported as
# "unclassified" and fails the run: teach the script, or write the site differently.
#
# Not modelled: the loom build does not compile every site (`cfg(not(loom))` code, the
# `async` feature, which the loom build leaves out, Linux's membarrier mode, unit tests).
# Detection rule: the script replaces every selected site's ordering at once with a
# distinct unknown name (`Ordering::LoomMutantsProbe<N>`) and builds the library under
# `--cfg loom`; the sites the compiler reports are compiled there, the rest are reported
# "not modelled" and not run (they need no marker). Code that loom compiles but that no
# model reaches (a background thread the models never start) is not detected: its
# mutants survive and need a marker that says so.
#
# Marker: a site whose mutant survives is accepted when it carries a written reason, a
# comment `// loom-mutants: <why the weaker ordering is not caught>` on the site's line,
# or starting on a line of the `//` comment block that ends just above the site's line
# (so a reason may run over several lines). One marker covers every site on its line.
# A marked site that a model catches is reported "caught (stale marker)": delete it.
#
# Models run for a site, by its file (the first named file that fails stops the mutant;
# within a file the models run one at a time, fastest first by the baseline, and the first
# failure stops it; every file ends with tests/loom.rs, the read path's models):
#
#   src/pool/**, src/pool.rs, src/recycle/**, src/recycle.rs  loom_pool, loom
#   src/oplog/**, src/oplog.rs                                 loom_oplog, loom
#   src/container/subscribe.rs, src/container/wakers.rs       loom_notify, loom
#   src/container/raw.rs (its subscribers' side too)           loom, loom_notify
#   src/reclaim/**, src/reclaim.rs                             loom, loom_oplog
#   everything else (refcount.rs, container/, sync.rs, ...)   loom
#
# LOOM_MUTANTS_MODELS=loom_notify,loom (model files, comma-separated) replaces the table for
# every site of the run: to check a survivor against models the table does not name.
#
# Build: RUSTFLAGS="--cfg loom" cargo test --release (no debug assertions, as the first
# loom build of .ci/run), in the default target directory; LOOM_MAX_PREEMPTIONS=3, 1 for
# loom_pool (as .ci/run). A model that runs past max(120 s, 5 x its baseline) is stopped
# and the next one run; a mutant that no model catches and one outran is reported
# "timeout" (not caught: it needs a look).
#
# The mutation is made in place, in the working tree, after a copy of the file is saved
# under target/loom-mutants/backup/; the copy is put back after each mutant, on exit, on
# Ctrl-C and on SIGTERM, and at the start of the next run if a run was killed (SIGKILL)
# with a mutant in place (the mutated token carries `/* loom-mutant */`). Uncommitted
# changes survive: the backup is the file as it was, not git's copy.
#
# Output: one line per mutant as it finishes, then the table; the run's log and each
# mutant's model output are in target/loom-mutants/. Exit status: 0 if every mutant of a
# modelled site was caught or its site is marked; 1 otherwise (survivor without marker,
# timeout, build failure, unclassified site); 2 if the unmutated models fail.
set -euo pipefail
cd "$(dirname "$0")/.."
work=target/loom-mutants
mkdir -p "$work"

# Puts back any file left mutated (the Python side does it per mutant; this is the net
# for a signal between the mutation and its own cleanup).
restore() {
    if [ -d "$work/backup" ]; then
        (cd "$work/backup" && find . -type f -print0) | while IFS= read -r -d '' f; do
            cp "$work/backup/$f" "$f"
            rm -f "$work/backup/$f"
            echo "loom-mutants: restored ${f#./}" >&2
        done
    fi
}
restore
trap restore EXIT
trap 'restore; exit 130' INT
trap 'restore; exit 143' TERM HUP

python3 - "$@" <<'PY'
import json, os, re, shutil, signal, subprocess, sys, time

WORK = "target/loom-mutants"
BACKUP = os.path.join(WORK, "backup")
ENV = dict(os.environ, RUSTFLAGS="--cfg loom", CARGO_TERM_COLOR="never")
ENV.pop("CARGO_TARGET_DIR", None)
PREEMPTIONS = {"loom_pool": "1"}


def stop(signum, frame):
    raise KeyboardInterrupt


signal.signal(signal.SIGTERM, stop)
signal.signal(signal.SIGHUP, stop)

args = sys.argv[1:]
opt_list = "--list" in args
skip_marked = "--skip-marked" in args
no_baseline = "--no-baseline" in args
paths = [a for a in args if not a.startswith("--")] or ["src"]
unknown = [a for a in args if a.startswith("--") and a not in
           ("--list", "--skip-marked", "--no-baseline")]
if unknown:
    sys.exit(f"loom-mutants: unknown option {unknown[0]}")

log = open(os.path.join(WORK, "run.log"), "w")


def say(line=""):
    print(line, flush=True)
    log.write(line + "\n")
    log.flush()


# ---- which files, which lines --------------------------------------------------------------
targets = {}  # file -> set of lines, or None for every line
for p in paths:
    line = None
    m = re.fullmatch(r"(.*):(\d+)", p)
    if m:
        p, line = m.group(1), int(m.group(2))
    p = os.path.normpath(p)
    if not (p == "src" or p.startswith("src/")) or not os.path.exists(p):
        sys.exit(f"loom-mutants: {p}: not a file or folder under src/")
    files = [p] if os.path.isfile(p) else sorted(
        os.path.join(d, f) for d, _, fs in os.walk(p) for f in fs if f.endswith(".rs"))
    for f in files:
        if line is None:
            targets[f] = None
        elif targets.get(f, set()) is not None:
            targets.setdefault(f, set()).add(line)


def models_for(path):
    if os.environ.get("LOOM_MUTANTS_MODELS"):
        return os.environ["LOOM_MUTANTS_MODELS"].split(",")
    if re.match(r"src/(pool|recycle)(/|\.rs$)", path):
        return ["loom_pool", "loom"]
    if re.match(r"src/oplog(/|\.rs$)", path):
        return ["loom_oplog", "loom"]
    if path in ("src/container/subscribe.rs", "src/container/wakers.rs"):
        return ["loom_notify", "loom"]
    if path == "src/container/raw.rs":
        return ["loom", "loom_notify"]
    if re.match(r"src/reclaim(/|\.rs$)", path):
        return ["loom", "loom_oplog"]
    return ["loom"]


# ---- finding the sites ---------------------------------------------------------------------
def blank_comments(text):
    """The text with comments and string literals' contents replaced by spaces (offsets kept)."""
    out, i, n = list(text), 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out[i:j] = " " * (j - i)
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out[i:j] = [ch if ch == "\n" else " " for ch in text[i:j]]
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out[i + 1:j] = [ch if ch == "\n" else " " for ch in text[i + 1:j]]
            i = j + 1
        elif c == "'" and i + 2 < n and (text[i + 2] == "'" or text[i + 1] == "\\"):
            j = text.find("'", i + 2)  # a char literal such as '"' or '\n'
            out[i + 1:j] = " " * (j - i - 1)
            i = j + 1
        else:
            i += 1
    return "".join(out)


RMW = {"swap", "fetch_add", "fetch_sub", "fetch_and", "fetch_or", "fetch_xor", "fetch_nand",
       "fetch_max", "fetch_min"}
WEAKER = {
    "load": {"SeqCst": ["Acquire"], "Acquire": ["Relaxed"]},
    "store": {"SeqCst": ["Release"], "Release": ["Relaxed"]},
    "rmw": {"SeqCst": ["AcqRel"], "AcqRel": ["Acquire", "Release"], "Acquire": ["Relaxed"],
            "Release": ["Relaxed"]},
    "failure": {"SeqCst": ["Acquire"], "Acquire": ["Relaxed"]},
}


def call_of(clean, pos):
    """(function name, argument index, offset of its '(') of the call whose argument list
    holds offset `pos`, or None."""
    depth, arg, i = 0, 0, pos - 1
    while i >= 0:
        c = clean[i]
        if c in ")]}":
            depth += 1
        elif c in "([{":
            if depth == 0:
                if c != "(":
                    return None
                j = i - 1
                while j >= 0 and clean[j].isspace():
                    j -= 1
                k = j
                while k >= 0 and (clean[k].isalnum() or clean[k] == "_"):
                    k -= 1
                return clean[k + 1:j + 1], arg, i
            depth -= 1
        elif c == "," and depth == 0:
            arg += 1
        elif c == ";" and depth == 0:
            return None
        i -= 1
    return None


def matching_paren(clean, open_at):
    depth = 0
    for i in range(open_at, len(clean)):
        if clean[i] == "(":
            depth += 1
        elif clean[i] == ")":
            depth -= 1
            if depth == 0:
                return i
    raise ValueError("unbalanced")


def marker_of(lines, lineno):
    """The `loom-mutants:` reason that covers 1-based line `lineno`, or None."""
    m = re.search(r"//\s*loom-mutants:\s*(.*)", lines[lineno - 1])
    if m:
        return m.group(1).strip()
    block, k = [], lineno - 2
    while k >= 0 and lines[k].lstrip().startswith("//"):
        block.insert(0, lines[k].lstrip().lstrip("/").strip())
        k -= 1
    for i, text in enumerate(block):
        if text.startswith("loom-mutants:"):
            return " ".join([text[len("loom-mutants:"):].strip()] + block[i + 1:])
    return None


def sites_of(path, only_lines):
    text = open(path).read()
    clean = blank_comments(text)
    lines = text.split("\n")
    line_of = lambda off: text.count("\n", 0, off) + 1
    found = []
    fence_spans = []
    for m in re.finditer(r"\b(compiler_fence|fence)\s*\(", clean):
        start, open_at = m.start(), m.end() - 1
        end = matching_paren(clean, open_at) + 1
        fence_spans.append((start, end))
        found.append(dict(file=path, line=line_of(start), col=start - text.rfind("\n", 0, start),
                          kind=m.group(1), order=text[open_at + 1:end - 1].strip(),
                          start=start, end=end, mutants=[("removed", "()")]))
    for m in re.finditer(r"\bOrdering::(Acquire|Release|AcqRel|SeqCst)\b", clean):
        if any(s <= m.start() < e for s, e in fence_spans):
            continue
        order = m.group(1)
        call = call_of(clean, m.start())
        kind = None
        if call:
            name, arg, _ = call
            if name == "load":
                kind = "load"
            elif name == "store":
                kind = "store"
            elif name in RMW:
                kind = "rmw"
            elif name in ("compare_exchange", "compare_exchange_weak"):
                kind = {2: "rmw", 3: "failure"}.get(arg)
            elif name == "fetch_update":
                kind = {0: "rmw", 1: "failure"}.get(arg)
        desc = f"{call[0]}#{call[1]}" if call else "?"
        site = dict(file=path, line=line_of(m.start()), col=m.start() - text.rfind("\n", 0, m.start()),
                    kind=kind or f"unclassified({desc})", order=order,
                    start=m.start(), end=m.end(), mutants=[])
        if kind:
            site["mutants"] = [(w, f"Ordering::{w}") for w in WEAKER[kind].get(order, [])]
            if not site["mutants"]:
                site["kind"] = f"unclassified({kind} with {order})"
        found.append(site)
    found.sort(key=lambda s: s["start"])
    out = []
    for s in found:
        if only_lines is not None and s["line"] not in only_lines:
            continue
        s["marker"] = marker_of(lines, s["line"])
        s["op"] = text[s["start"]:s["end"]] if s["kind"] in ("fence", "compiler_fence") else \
            f"{s['kind']} {s['order']}"
        out.append(s)
    return out


sites = []
for f in targets:
    sites += sites_of(f, targets[f])
if not sites:
    sys.exit("loom-mutants: no sites in " + " ".join(paths))


# ---- mutating a file, and putting it back --------------------------------------------------
def mutate(path, edits):
    """Applies [(start, end, replacement)] to `path` after saving a copy; `restore` undoes."""
    keep = os.path.join(BACKUP, path)
    os.makedirs(os.path.dirname(keep), exist_ok=True)
    if not os.path.exists(keep):
        shutil.copyfile(path, keep)
    text = open(keep).read()
    for start, end, new in sorted(edits, reverse=True):
        text = text[:start] + new + text[end:]
    with open(path, "w") as f:
        f.write(text)


def restore_all():
    for d, _, fs in os.walk(BACKUP):
        for f in fs:
            keep = os.path.join(d, f)
            shutil.copyfile(keep, os.path.relpath(keep, BACKUP))
            os.remove(keep)


def cargo(args, out):
    with open(out, "w") as f:
        return subprocess.run(["cargo"] + args, env=ENV, stdout=f, stderr=subprocess.STDOUT,
                              stdin=subprocess.DEVNULL).returncode


# ---- not modelled: which sites the loom build compiles -------------------------------------
def classify():
    by_file = {}
    for n, s in enumerate(sites):
        s["probe"] = f"LoomMutantsProbe{n}"
        rep = f"Ordering::{s['probe']}"
        if s["kind"] in ("fence", "compiler_fence"):
            # The probe goes in the fence's argument.
            text = open(s["file"]).read()
            open_at = text.index("(", s["start"])
            by_file.setdefault(s["file"], []).append((open_at + 1, s["end"] - 1, rep))
        else:
            by_file.setdefault(s["file"], []).append((s["start"], s["end"], rep))
    try:
        for f, edits in by_file.items():
            mutate(f, edits)
        out = os.path.join(WORK, "probe.log")
        cargo(["build", "--release", "--lib", "--message-format=short"], out)
        reported = set(re.findall(r"LoomMutantsProbe(\d+)", open(out).read()))
    finally:
        restore_all()
    if not reported:
        sys.exit(f"loom-mutants: the probe build reported no site: see {out}")
    for n, s in enumerate(sites):
        s["modelled"] = str(n) in reported


# ---- the models ----------------------------------------------------------------------------


def build(model, out):
    rc = cargo(["test", "--release", "--no-run", "--message-format=json", "--test", model], out)
    if rc != 0:
        return None
    for line in open(out):
        if line.startswith("{"):
            msg = json.loads(line)
            if msg.get("reason") == "compiler-artifact" and msg.get("executable") and \
                    msg["target"]["name"] == model:
                return msg["executable"]
    return None


def list_models(exe):
    r = subprocess.run([exe, "--list", "--format=terse"], capture_output=True, text=True)
    return [l[:-len(": test")] for l in r.stdout.splitlines() if l.endswith(": test")]


timing = {}  # (model file, test) -> seconds of the baseline


def old_timings(model):
    """The per-model times in the last baseline's log of `model`, if there is one."""
    out = os.path.join(WORK, f"baseline-{model}.log")
    if not os.path.exists(out):
        return
    test = None
    for line in open(out, errors="replace"):
        m = re.match(r"==== [^:]+::(\S+)", line)
        if m:
            test = m.group(1)
        m = re.search(r"finished in ([0-9.]+)s", line)
        if m and test:
            timing[(model, test)] = float(m.group(1))


def run_one(model, exe, test, out, limit):
    env = dict(os.environ, LOOM_MAX_PREEMPTIONS=PREEMPTIONS.get(model, "3"))
    for k in ("LOOM_LOG", "LOOM_CHECKPOINT_FILE", "LOOM_MAX_BRANCHES"):
        env.pop(k, None)
    t = time.time()
    with open(out, "a") as f:
        f.write(f"\n==== {model}::{test}\n")
        f.flush()
        p = subprocess.Popen([exe, "--exact", test, "--test-threads=1"], env=env, stdout=f,
                             stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                             start_new_session=True)
        try:
            rc = p.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            rc = None
        except BaseException:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            raise
    return rc, time.time() - t


def ordered(model, tests):
    # A model without a baseline time (new since) goes last.
    return sorted(tests, key=lambda t: timing.get((model, t), float("inf")))


def panic_line(out):
    """The message of the first panic in a model's output (the line after `panicked at`)."""
    after = False
    for line in open(out, errors="replace"):
        if after:
            return line.strip()[:160]
        after = "panicked at" in line
    return ""


# ---- main ----------------------------------------------------------------------------------
def fmt_site(s):
    return f"{s['file']}:{s['line']}"


say(f"loom-mutants: {len(sites)} sites in {' '.join(paths)}, {time.strftime('%H:%M:%S', time.gmtime())} UTC")
results = []
try:
    classify()
    if opt_list:
        for s in sites:
            state = "loom" if s["modelled"] else "not modelled"
            muts = ", ".join(f"{s['order']}->{w}" if w != "removed" else "removed"
                             for w, _ in s["mutants"])
            mark = f"  [marker: {s['marker']}]" if s["marker"] else ""
            say(f"{fmt_site(s):34} {s['op']:24} {state:13} {muts}{mark}")
        sys.exit(0)

    needed = []
    for s in sites:
        if s["modelled"] and s["mutants"] and not (skip_marked and s["marker"]):
            for m in models_for(s["file"]):
                if m not in needed:
                    needed.append(m)
    if no_baseline:
        for model in needed:
            old_timings(model)
    if not no_baseline and needed:
        say(f"baseline: {' '.join(needed)} unmutated")
        for model in needed:
            out = os.path.join(WORK, f"baseline-{model}.log")
            exe = build(model, out)
            if not exe:
                say(f"baseline: {model} does not build; see {out}")
                sys.exit(2)
            open(out, "w").close()
            for test in list_models(exe):
                rc, secs = run_one(model, exe, test, out, 3600)
                timing[(model, test)] = secs
                if rc != 0:
                    say(f"baseline: {model}::{test} fails unmutated; see {out}")
                    sys.exit(2)
            total = sum(v for (m, _), v in timing.items() if m == model)
            say(f"baseline: {model} passes, {total:.0f} s")

    os.makedirs(os.path.join(WORK, "mutants"), exist_ok=True)
    for n, s in enumerate(sites):
        if not s["kind"] in WEAKER and s["kind"] not in ("fence", "compiler_fence"):
            results.append((s, "-", "unclassified", ""))
            say(f"UNCLASSIFIED {fmt_site(s)} {s['op']}")
            continue
        for weaker, rep in s["mutants"]:
            what = "removed" if weaker == "removed" else f"{s['order']}->{weaker}"
            if not s["modelled"]:
                results.append((s, what, "not modelled", "not compiled under --cfg loom"))
                continue
            if skip_marked and s["marker"]:
                results.append((s, what, "marked, not run", s["marker"]))
                continue
            tag = re.sub(r"[^A-Za-z0-9]+", "_", f"{s['file'][4:]}_{s['line']}_{s['col']}_{what}")
            out = os.path.join(WORK, "mutants", tag + ".log")
            open(out, "w").close()
            t0 = time.time()
            status, detail = "survived", ""
            timed_out = []
            mutate(s["file"], [(s["start"], s["end"], rep + " /* loom-mutant */")])
            try:
                for model in models_for(s["file"]):
                    exe = build(model, out + ".build")
                    if not exe:
                        status, detail = "build failed", out + ".build"
                        break
                    for test in ordered(model, list_models(exe)):
                        limit = max(120.0, 5 * timing.get((model, test), 60.0))
                        rc, secs = run_one(model, exe, test, out, limit)
                        if rc is None:
                            # No verdict: another model may still catch it.
                            timed_out.append(f"{model}::{test} past {limit:.0f} s")
                            continue
                        if rc != 0:
                            status = "caught"
                            detail = f"{model}::{test} ({secs:.0f} s)"
                            break
                    if status != "survived":
                        break
            finally:
                restore_all()
            if status == "survived" and timed_out:
                status, detail = "timeout", ", ".join(timed_out)
            if status == "caught" and s["marker"]:
                status = "caught (stale marker)"
            if status == "survived" and s["marker"]:
                status, detail = "survived (marked)", s["marker"]
            results.append((s, what, status, detail))
            say(f"{status:22} {fmt_site(s):34} {s['op']:24} {what:18} {time.time() - t0:5.0f} s  {detail}")
            if status == "caught":
                why = panic_line(out)
                if why:
                    log.write(f"    {why}\n")
except KeyboardInterrupt:
    say("loom-mutants: interrupted; the table below has the mutants run so far")
finally:
    restore_all()

say("")
say(f"{'status':22} {'site':34} {'operation':24} {'mutant':18} detail")
for s, what, status, detail in results:
    say(f"{status:22} {fmt_site(s):34} {s['op']:24} {what:18} {detail}")
done = {(id(s), w) for s, w, _, _ in results}
left = [(s, w) for s in sites for w, _ in s["mutants"]
        if (id(s), "removed" if w == "removed" else f"{s['order']}->{w}") not in done]
for s, w in left:
    say(f"{'not run':22} {fmt_site(s):34} {s['op']:24} {s['order']}->{w}")
counts = {}
for _, _, status, _ in results:
    counts[status] = counts.get(status, 0) + 1
say("")
say("totals: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())) +
    (f", {len(left)} not run" if left else ""))
bad = [r for r in results if r[2] in ("survived", "timeout", "build failed", "unclassified")]
say(f"loom-mutants: done {time.strftime('%H:%M:%S', time.gmtime())} UTC")
sys.exit(1 if bad or left else 0)
PY
