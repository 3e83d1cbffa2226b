//! `--oplog`: publish only what changed.
//!
//! The reloader re-reads and re-parses the file exactly as in the default mode, but into a
//! scratch table of its own (two of them, alternating: the previous parse and the new
//! one), compares the new parse with the previous one ([`diff`]) and appends an operation
//! per changed entry to an [`OpLog`], which publishes them as one batch. An unchanged
//! file publishes nothing.

use std::collections::HashMap;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Barrier;
use std::thread;
use std::time::{Duration, Instant};

use poolswap::oplog::{MapOp, OpLog, OpLogStats, ReadHandle, Versioned};
use poolswap::Recycled;

use super::counting_alloc::{warm_parking_lot, Snapshot};
use super::edit::{Editor, Reference};
use super::{load, new_version, percentile, Args, Floors, ReaderReport, Sampler, Table, Version};
use super::{XorShift, WARMUP_RELOADS};

/// What readers see in `--oplog` mode: key → values, with the free lists that recycle them.
pub(crate) type Index = Recycled<HashMap<String, Vec<String>>>;

/// A change to [`Index`].
pub(crate) type Op = MapOp<String, Vec<String>>;

/// `--check`'s bound on what the steady-state publishes allocate, per operation applied to a
/// version (`OpLogStats::applied`: each operation is applied in every version that
/// circulates, so this does not depend on how many do).
///
/// Measured: about 0.38 (bundled list, 64 keys per edit, 2 readers: 1.0 per operation, each
/// applied in 2.7 versions). 0 is the aim, but the
/// ready-made operations on a `Recycled` map do not recycle everything yet: a key without
/// values holds an empty list with no buffer, and an edit that gives it a value grows that
/// list in place, a new buffer in every version (the free lists' spare lists are not used for
/// it); a restored key goes into the version that applies it last by value, with the
/// operation's buffers, so that version's free lists only grow; and recycled strings of one
/// size are handed longer ones (the `oplog` example example, "Allocations", measures the
/// last two alone). The bound is 2.6 times the measurement, below copying every inserted
/// key and list (at least 2 per application).
const MAX_PUBLISH_ALLOCS_PER_APPLY: f64 = 1.0;

/// Calls `op` with operations that turn `old` into `new`, applied in any order, and returns
/// how many: an insert for each entry of `new` that `old` lacks or holds with other values
/// (an overwrite, then), and a removal for each key of `old` that `new` lacks.
///
/// The operations own copies of the changed entries (allocated); an unchanged entry costs
/// a lookup and a comparison, a key of `old` one more lookup. [`Differ`] avoids most of
/// them when the file kept its lines in place.
pub(crate) fn diff_maps(
    old: &HashMap<String, Vec<String>>,
    new: &HashMap<String, Vec<String>>,
    mut op: impl FnMut(Op),
) -> usize {
    let mut n = 0;
    for (key, values) in new {
        if old.get(key) != Some(values) {
            op(MapOp::Insert(key.clone(), values.clone()));
            n += 1;
        }
    }
    for key in old.keys() {
        if !new.contains_key(key) {
            op(MapOp::Remove(key.clone()));
            n += 1;
        }
    }
    n
}

/// A key's place: in the new text (`true`) or the old one, and its byte range there.
type KeyAt = (bool, usize, usize);

/// Diffs two parses of a file, by its lines where it can.
///
/// When the two texts have as many lines and differ on few of them (lines edited in place,
/// commented out or back in: what an edit usually does), only the keys on the lines that
/// differ can have changed: a key whose lines are all unchanged has the same lines, in the
/// same places, in both. Then the diff costs one pass over the texts and two lookups per
/// key on a changed line. Otherwise it looks every key up ([`diff_maps`]).
pub(crate) struct Differ {
    /// The most changed lines compared line by line.
    budget: usize,
    /// Scratch: the keys on changed lines (capacity for `2 * budget`, kept).
    suspects: Vec<KeyAt>,
}

impl Differ {
    /// A differ for files of about `lines` lines: it compares line by line up to a
    /// sixteenth of them changed (at least 64).
    pub(crate) fn new(lines: usize) -> Differ {
        Differ::with_budget((lines / 16).max(64))
    }

    fn with_budget(budget: usize) -> Differ {
        Differ {
            budget,
            suspects: Vec::with_capacity(2 * budget),
        }
    }

    /// Calls `op` with operations that turn `old.map` into `new.map` (see [`diff_maps`]);
    /// returns how many. Allocates only the operations' keys and values.
    pub(crate) fn diff(&mut self, old: &Table, new: &Table, mut op: impl FnMut(Op)) -> usize {
        if old.text == new.text {
            return 0; // the same text parses the same
        }
        if !self.changed_keys(&old.text, &new.text) {
            return diff_maps(&old.map, &new.map, op);
        }
        let mut n = 0;
        for &(in_new, start, end) in &self.suspects {
            let key = if in_new { &new.text } else { &old.text };
            let key = &key[start..end];
            match (old.map.get(key), new.map.get(key)) {
                (before, Some(now)) if before != Some(now) => {
                    op(MapOp::Insert(key.to_owned(), now.clone()));
                    n += 1;
                }
                (Some(_), None) => {
                    op(MapOp::Remove(key.to_owned()));
                    n += 1;
                }
                _ => {}
            }
        }
        n
    }

    /// Collects in `suspects`, each once, the keys on the lines where `old` and `new`
    /// differ. False if they have different numbers of lines or differ on more than the
    /// budget.
    fn changed_keys(&mut self, old: &str, new: &str) -> bool {
        self.suspects.clear();
        let (mut lines_old, mut lines_new) = (old.split_inclusive('\n'), new.split_inclusive('\n'));
        let (mut at_old, mut at_new, mut changed) = (0, 0, 0);
        loop {
            match (lines_old.next(), lines_new.next()) {
                (None, None) => break,
                (Some(a), Some(b)) => {
                    if a != b {
                        changed += 1;
                        if changed > self.budget {
                            return false;
                        }
                        if let Some((s, e)) = key_in(a, at_old) {
                            self.suspects.push((false, s, e));
                        }
                        if let Some((s, e)) = key_in(b, at_new) {
                            self.suspects.push((true, s, e));
                        }
                    }
                    at_old += a.len();
                    at_new += b.len();
                }
                _ => return false,
            }
        }
        let text = |&(in_new, s, e): &KeyAt| if in_new { &new[s..e] } else { &old[s..e] };
        self.suspects.sort_unstable_by(|x, y| text(x).cmp(text(y)));
        self.suspects.dedup_by(|x, y| text(x) == text(y));
        true
    }
}

/// The byte range of the key of `line`, which starts at byte `at` of its text, as
/// [`parse`](super::parse) finds it; `None` for a blank or comment line.
fn key_in(line: &str, at: usize) -> Option<(usize, usize)> {
    let content = super::uncommented(line);
    let key = content.split_whitespace().next()?;
    let start = at + (content.len() - content.trim_start().len());
    Some((start, start + key.len()))
}

/// One reader: random lookups in the current version until `stop`, timing a sample of them
/// (from `acquire` through the lookup), each answer checked against the edit the version
/// holds (its batch number: one publish per edit), plus two keys of that edit, which must
/// agree: one showing the edit and the other not is a torn batch.
fn reader(
    container: &ReadHandle<Index>,
    reference: &Reference,
    seed: u64,
    start: &Barrier,
    stop: &AtomicBool,
) -> ReaderReport {
    let mut rng = XorShift::new(seed);
    let mut sampler = Sampler::new();
    let (mut reads, mut wrong, mut torn) = (0u64, 0u64, 0u64);
    let original = reference.original();
    let key = |i: usize| &original.text[original.keys[i].0..original.keys[i].1];
    let per_edit = reference.per_edit();
    warm_parking_lot();
    drop(container.acquire()); // registers this thread's hazard slots before the clock
    start.wait();
    // Nothing in this loop allocates (the allocator's counters are process-wide).
    while !stop.load(Relaxed) {
        let timed = sampler.wants(reads);
        let t0 = timed.then(Instant::now);
        let version = container.acquire();
        let index: &HashMap<String, Vec<String>> = &version;
        let i = rng.below(original.keys.len());
        let answer = index.get(key(i));
        if let Some(t0) = t0 {
            sampler.record(t0.elapsed().as_nanos() as u64);
        }
        let edit = Versioned::seq(&version);
        wrong += u64::from(!reference.answer_ok(i, edit, answer));
        if edit > 0 && per_edit > 0 {
            let a = reference.edited(edit, rng.below(per_edit));
            let b = reference.edited(edit, rng.below(per_edit));
            let ok_a = reference.answer_ok(a, edit, index.get(key(a)));
            let ok_b = reference.answer_ok(b, edit, index.get(key(b)));
            wrong += u64::from(!ok_a) + u64::from(!ok_b);
            torn += u64::from(ok_a != ok_b);
        }
        reads += 1;
    }
    ReaderReport {
        reads,
        wrong,
        torn,
        samples: sampler.samples,
    }
}

/// What the reloader did in `--oplog` mode.
#[derive(Default)]
struct OpLogReport {
    reloads: u64,
    failed: u64,
    last_error: Option<std::io::Error>,
    /// Warm-up reloads, and what they allocated in all.
    warmup_reloads: u64,
    warmup: Snapshot,
    /// Steady-state reloads: time and allocations of each phase, operations published.
    steady_reloads: u64,
    load_time: Duration,
    diff_time: Duration,
    load: Snapshot,
    diff: Snapshot,
    publish: Snapshot,
    /// Reloads whose read and parse allocated.
    load_allocating: u64,
    ops: u64,
    /// Publish latencies (ns) of the steady-state reloads that published.
    publish_ns: Vec<u64>,
    stats: OpLogStats,
    stats_at_warmup: OpLogStats,
    /// Everything the process allocated from the end of warm-up until the reloader stopped.
    steady_process: Snapshot,
}

/// Adds what was allocated since `before` to `into`; returns it.
fn add_since(into: &mut Snapshot, before: Snapshot) -> Snapshot {
    let d = Snapshot::since(before);
    into.allocs += d.allocs;
    into.bytes += d.bytes;
    d
}

/// Settings of the reloader.
struct Reloading<'a> {
    path: &'a str,
    interval: Duration,
    /// Reloads during which the reloader holds a guard on the current version (see
    /// [`reloader`]).
    hold: u64,
    warmup: u64,
}

/// The reloader: before each reload lets `editor` change the file (outside the
/// measurement), then reads and parses it into `next`, diffs it against `prev`, publishes
/// the difference and swaps the two, every `interval` until `stop`.
///
/// During the first `hold` reloads it holds a guard on each version, so that the pool
/// builds (and the writer copies whole) every version the run can have out at once then,
/// not later: one per reader, the current one and the one being written.
#[allow(clippy::too_many_arguments)]
fn reloader(
    writer: &mut OpLog<Index, Op>,
    mut prev: Version,
    mut next: Version,
    mut floors: Floors,
    mut editor: Option<Editor<'_>>,
    how: &Reloading<'_>,
    start: &Barrier,
    stop: &AtomicBool,
) -> OpLogReport {
    let mut r = OpLogReport {
        publish_ns: Vec::with_capacity(1 << 16),
        ..OpLogReport::default()
    };
    let mut held = Vec::with_capacity(how.hold as usize);
    let mut differ = Differ::new(prev.keys.len());
    // The edit the current version holds: with an editor, each reload publishes one.
    let mut edit = 0;
    let mut steady_start = None;
    warm_parking_lot();
    start.wait();
    let mut next_at = Instant::now();
    while !stop.load(Relaxed) {
        let n = r.reloads + 1;
        if n <= how.hold {
            held.push(writer.read_handle().acquire());
        } else if n == how.hold + 1 {
            held.clear();
        }
        let written = match editor.as_mut() {
            Some(editor) => editor.write(edit + 1),
            None => Ok(()),
        };

        let before = Snapshot::now();
        let mut this = Snapshot::default();
        let t0 = Instant::now();
        next.clear();
        let loaded = written.and_then(|()| load(how.path, &mut next, &mut floors));
        let load_time = t0.elapsed();
        let load = add_since(&mut this, before);
        let mut published = None;
        if loaded.is_ok() {
            let b = Snapshot::now();
            let t = Instant::now();
            let ops = differ.diff(&prev, &next, |op| writer.append(op));
            let diff_time = t.elapsed();
            let diff = add_since(&mut this, b);
            let b = Snapshot::now();
            let t = Instant::now();
            let seq = writer.publish();
            let publish_ns = t.elapsed().as_nanos() as u64;
            // Before the pause: the idle versions replay the batch now, so that the next
            // reload's publish applies only its own. Untimed (the reloader has the time);
            // what it allocates counts with the publish.
            writer.catch_up();
            let publish = add_since(&mut this, b);
            std::mem::swap(&mut prev, &mut next);
            if editor.is_some() {
                edit += 1;
                assert_eq!(seq, edit, "one publish per edit");
            }
            published = Some((ops, diff_time, diff, publish_ns, publish));
        }
        r.reloads += 1;
        if let Err(e) = loaded {
            r.failed += 1;
            r.last_error = Some(e);
        }

        if n <= how.warmup {
            r.warmup_reloads += 1;
            r.warmup.allocs += this.allocs;
            r.warmup.bytes += this.bytes;
            if n == how.warmup {
                r.stats_at_warmup = writer.stats();
                steady_start = Some(Snapshot::now());
            }
        } else {
            r.steady_reloads += 1;
            r.load_time += load_time;
            r.load.allocs += load.allocs;
            r.load.bytes += load.bytes;
            r.load_allocating += u64::from(load.allocs > 0);
            if let Some((ops, diff_time, diff, publish_ns, publish)) = published {
                r.ops += ops as u64;
                r.diff_time += diff_time;
                r.diff.allocs += diff.allocs;
                r.diff.bytes += diff.bytes;
                r.publish.allocs += publish.allocs;
                r.publish.bytes += publish.bytes;
                if ops > 0 && r.publish_ns.len() < r.publish_ns.capacity() {
                    r.publish_ns.push(publish_ns);
                }
            }
        }

        next_at += how.interval;
        let now = Instant::now();
        if next_at > now {
            thread::sleep(next_at - now);
        } else {
            next_at = now; // Behind schedule: reload back to back, do not catch up.
        }
    }
    match steady_start {
        Some(s) => r.steady_process = Snapshot::since(s),
        None => r.stats_at_warmup = writer.stats(),
    }
    r.stats = writer.stats();
    r
}

/// Runs `--oplog` mode: `prev` is the file's first parse, `reference` the file as readers
/// check it, `editor` (with `--edit-lines`) changes the file at `path` before each reload.
pub(crate) fn run(
    args: &Args,
    reference: &Reference,
    editor: Option<Editor<'_>>,
    path: &str,
    prev: Version,
    mut floors: Floors,
) -> ExitCode {
    // The second scratch table, loaded twice as the first was (its buffers and free lists).
    let before = Snapshot::now();
    let mut next = new_version();
    let _ = load(path, &mut next, &mut floors);
    next.clear();
    let _ = load(path, &mut next, &mut floors);
    let mut writer: OpLog<Index, Op> = OpLog::new(Recycled::new(prev.map.clone()));
    let initial = Snapshot::since(before);
    let container = writer.read_handle();
    let hold = args.readers as u64 + 1;
    let how = Reloading {
        path,
        interval: Duration::from_millis(args.reload_ms),
        hold,
        warmup: hold + WARMUP_RELOADS,
    };

    let start = Barrier::new(args.readers + 2);
    let stop = AtomicBool::new(false);
    let (readers, r, elapsed) = thread::scope(|s| {
        let readers: Vec<_> = (0..args.readers)
            .map(|i| {
                let (container, start, stop) = (&container, &start, &stop);
                s.spawn(move || reader(container, reference, i as u64 + 1, start, stop))
            })
            .collect();
        let (writer, how, start, stop) = (&mut writer, &how, &start, &stop);
        let reloads =
            s.spawn(move || reloader(writer, prev, next, floors, editor, how, start, stop));
        start.wait();
        let t0 = Instant::now();
        thread::sleep(Duration::from_secs(args.secs));
        stop.store(true, Relaxed);
        // The reloader first: the allocation counter is process-wide, and this thread must
        // not allocate while a reload is being measured.
        let r = reloads.join().expect("reloader panicked");
        let readers: Vec<ReaderReport> = readers
            .into_iter()
            .map(|h| h.join().expect("reader panicked"))
            .collect();
        (readers, r, t0.elapsed())
    });

    let secs = elapsed.as_secs_f64();
    let reads: u64 = readers.iter().map(|r| r.reads).sum();
    let wrong: u64 = readers.iter().map(|r| r.wrong).sum();
    let torn: u64 = readers.iter().map(|r| r.torn).sum();
    let mut samples: Vec<u64> = readers.into_iter().flat_map(|r| r.samples).collect();
    samples.sort_unstable();
    let mut publish_ns = r.publish_ns.clone();
    publish_ns.sort_unstable();
    let per = |x: u64, n: u64| if n == 0 { 0.0 } else { x as f64 / n as f64 };
    let ms = |d: Duration, n: u64| per(d.as_nanos() as u64, n) / 1e6;
    let n = r.steady_reloads;
    let original = reference.original();

    println!(
        "poolswap hot_reload --oplog: {} keys from {} ({} bytes), re-read and re-parsed on every \
         reload; only the entries that changed are published",
        original.keys.len(),
        args.path,
        original.text.len()
    );
    if reference.per_edit() > 0 {
        println!(
            "the reloader reads a copy it edits before each reload: {} keys change per edit \
             (half removed, half given a new first value; the previous edit undone)",
            reference.per_edit()
        );
    }
    println!(
        "{} reader thread(s), 1 reloader (at most one reload per {} ms), ran {secs:.2} s\n",
        args.readers, args.reload_ms
    );
    println!(
        "  {:<32} {:>12}  {:>12.0} /s",
        "reads",
        reads,
        reads as f64 / secs
    );
    println!("  {:<32} {:>12}", "wrong answers", wrong);
    println!("  {:<32} {:>12}", "torn batches", torn);
    println!(
        "  {:<32} {:>12}  {:>12.1} /s  ({} warm-up)",
        "reloads",
        r.reloads,
        r.reloads as f64 / secs,
        r.warmup_reloads
    );
    println!("  {:<32} {:>12}", "failed reloads", r.failed);
    println!(
        "  {:<32} {:>12.3} ms  (steady state)",
        "mean read+parse",
        ms(r.load_time, n)
    );
    println!(
        "  {:<32} {:>12.3} ms  ({:.1} operations per reload)",
        "mean diff",
        ms(r.diff_time, n),
        per(r.ops, n)
    );
    if publish_ns.is_empty() {
        println!("  {:<32} {:>12}", "publish", "nothing changed");
    } else {
        let us = |ns: u64| ns as f64 / 1e3;
        println!(
            "  {:<32} {:>12.1} us  p99 {:.1} us, max {:.1} us",
            "publish p50",
            us(percentile(&publish_ns, 0.50)),
            us(percentile(&publish_ns, 0.99)),
            us(publish_ns[publish_ns.len() - 1])
        );
    }
    if !samples.is_empty() {
        println!(
            "  {:<32} {:>12} ns  p99 {} ns",
            "read latency p50",
            percentile(&samples, 0.50),
            percentile(&samples, 0.99)
        );
    }
    println!(
        "  {:<32} {:>12} B         ({} allocs: the first parse, a second scratch table and \
         the writer's first version)",
        "alloc, before the clock", initial.bytes, initial.allocs
    );
    println!(
        "  {:<32} {:>12.0} B/reload  ({} allocs in {} reloads)",
        "alloc, warm-up reloads",
        per(r.warmup.bytes, r.warmup_reloads),
        r.warmup.allocs,
        r.warmup_reloads
    );
    println!(
        "  {:<32} {:>12.0} B/reload  ({} allocs in {} reloads, {} allocating)",
        "alloc, steady, read+parse",
        per(r.load.bytes, n),
        r.load.allocs,
        n,
        r.load_allocating
    );
    println!(
        "  {:<32} {:>12.0} B/reload  ({:.1} allocs/reload: the operations' keys and values)",
        "alloc, steady, diff",
        per(r.diff.bytes, n),
        per(r.diff.allocs, n)
    );
    let publish_per_op = per(r.publish.allocs, r.ops);
    let applied = r.stats.applied - r.stats_at_warmup.applied;
    let publish_per_apply = per(r.publish.allocs, applied);
    println!(
        "  {:<32} {:>12.0} B/reload  ({:.1} allocs/reload, {publish_per_op:.3} per operation, \
         {publish_per_apply:.3} per operation applied)",
        "alloc, steady, publish",
        per(r.publish.bytes, n),
        per(r.publish.allocs, n)
    );
    println!(
        "  {:<32} {:>12} B         ({} allocs, whole process after warm-up)",
        "alloc, steady, all threads", r.steady_process.bytes, r.steady_process.allocs
    );
    let s = &r.stats;
    println!(
        "  {:<32} {:>12}  ({:.2} per operation: versions that applied each)",
        "operations applied",
        s.applied,
        per(s.applied, s.appended)
    );
    println!(
        "  {:<32} {:>12}  ({} in warm-up)",
        "full syncs (whole-table copies)", s.full_syncs, r.stats_at_warmup.full_syncs
    );
    if let Some(e) = &r.last_error {
        eprintln!("last failed reload: {e}");
    }

    let mut failed = false;
    if args.check {
        if n == 0 {
            eprintln!(
                "check failed: no reloads after the {} warm-up ones; run longer",
                how.warmup
            );
            failed = true;
        }
        if r.load.allocs > 0 {
            eprintln!(
                "check failed: steady-state reads and parses allocated {} times ({} B)",
                r.load.allocs, r.load.bytes
            );
            failed = true;
        }
        if publish_per_apply > MAX_PUBLISH_ALLOCS_PER_APPLY {
            eprintln!(
                "check failed: steady-state publishes allocated {publish_per_apply:.3} times per \
                 operation applied, bound {MAX_PUBLISH_ALLOCS_PER_APPLY}"
            );
            failed = true;
        }
        let late = s.full_syncs - r.stats_at_warmup.full_syncs;
        if late > 0 {
            eprintln!("check failed: {late} full copies after the warm-up");
            failed = true;
        }
        if r.failed > 0 {
            eprintln!("check failed: {} reloads failed", r.failed);
            failed = true;
        }
        if wrong > 0 || torn > 0 {
            eprintln!("check failed: readers saw {wrong} wrong answers and {torn} torn batches");
            failed = true;
        }
        if !failed {
            println!(
                "\ncheck passed: steady-state reads and parses allocated 0 bytes, publishes \
                 within {MAX_PUBLISH_ALLOCS_PER_APPLY} allocation per operation applied, no late full \
                 copy, all reads correct, no torn batch"
            );
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

#[cfg(test)]
mod tests {
    use super::super::edit::parsed;
    use super::*;
    use poolswap::oplog::Absorb;
    use proptest::prelude::*;

    type Map = HashMap<String, Vec<String>>;

    /// `old` with `ops` applied in order, after checking that `n` counts them.
    fn applied(old: &Map, ops: &[Op], n: usize) -> Map {
        assert_eq!(n, ops.len());
        let mut out = old.clone();
        for op in ops {
            out.absorb(op);
        }
        out
    }

    /// `old` with `diff_maps(old, new)` applied, and how many operations that took.
    fn patched(old: &Map, new: &Map) -> (Map, usize) {
        let mut ops = Vec::new();
        let n = diff_maps(old, new, |op| ops.push(op));
        (applied(old, &ops, n), n)
    }

    /// The same through a [`Differ`] with `budget`, from the texts.
    fn patched_text(old: &str, new: &str, budget: usize) -> (Map, Map, usize) {
        let (old, new) = (parsed(old), parsed(new));
        let mut ops = Vec::new();
        let n = Differ::with_budget(budget).diff(&old, &new, |op| ops.push(op));
        (applied(&old.map, &ops, n), new.map.clone(), n)
    }

    fn map(entries: &[(&str, &[&str])]) -> Map {
        entries
            .iter()
            .map(|(k, vs)| (k.to_string(), vs.iter().map(|v| v.to_string()).collect()))
            .collect()
    }

    #[test]
    fn diff_maps_by_hand() {
        let old = map(&[("a", &["1"]), ("b", &[]), ("c", &["2", "3"]), ("d", &["4"])]);
        let new = map(&[("a", &["1"]), ("b", &["x"]), ("c", &["2"]), ("e", &[])]);
        let (got, n) = patched(&old, &new);
        assert_eq!(got, new);
        assert_eq!(
            n, 4,
            "b and c overwritten, d removed, e inserted; a untouched"
        );
        // Nothing changed: nothing to publish.
        assert_eq!(patched(&new, &new), (new.clone(), 0));
        // From and to nothing.
        assert_eq!(patched(&Map::new(), &new).0, new);
        assert_eq!(patched(&new, &Map::new()), (Map::new(), new.len()));
        // A value list reordered is a change.
        let swapped = map(&[("a", &["1"]), ("b", &["x"]), ("c", &["3", "2"]), ("e", &[])]);
        assert_eq!(patched(&new, &swapped), (swapped.clone(), 1));
    }

    #[test]
    fn line_by_line_by_hand() {
        // Same number of lines: line by line. `w` is on two lines, one of them changed;
        // `y` is commented out, `z` commented in, `v` moves to another line.
        let old = "x 1 2\ny\n# z 5\nw 3\nw 4\nv\nu\n";
        let new = "x 1 2\n#y\nz 5\nw 3\nw 9\nu\nv\n";
        let (got, want, n) = patched_text(old, new, 64);
        assert_eq!(got, want);
        assert_eq!(
            n, 3,
            "y removed, z inserted, w overwritten; v and u unchanged"
        );
        // The same with no budget: every key looked up, the same result.
        let (got, want, n) = patched_text(old, new, 0);
        assert_eq!((got, n), (want, 3));
        // A line more: every key looked up.
        let (got, want, _) = patched_text(old, "q\n", 64);
        assert_eq!(got, want);
        // Equal texts: nothing.
        assert_eq!(patched_text(old, old, 64).2, 0);
    }

    fn small_map() -> impl Strategy<Value = Map> {
        prop::collection::hash_map(
            "[a-e]{1,2}",
            prop::collection::vec("[xy]{0,2}", 0..3),
            0..12,
        )
    }

    /// A line: blank, a comment, or a key (from a few) with values and maybe a comment.
    fn line() -> impl Strategy<Value = String> {
        prop_oneof![
            1 => Just(String::new()),
            1 => Just("# note".to_owned()),
            6 => ("[a-d]", prop::collection::vec("[xy]{1,2}", 0..3), any::<bool>()).prop_map(
                |(k, vs, hash)| {
                    let mut l = format!("{k} {}", vs.join(" "));
                    if hash {
                        l.insert(0, '#');
                    }
                    l
                }
            ),
        ]
    }

    proptest! {
        #[test]
        fn diff_maps_applied_to_old_gives_new(old in small_map(), new in small_map()) {
            let (got, n) = patched(&old, &new);
            prop_assert_eq!(&got, &new);
            // No operation for an unchanged entry.
            let unchanged = new.iter().filter(|&(k, v)| old.get(k) == Some(v)).count();
            let removed = old.keys().filter(|k| !new.contains_key(*k)).count();
            prop_assert_eq!(n, new.len() - unchanged + removed);
        }

        #[test]
        fn differ_applied_to_old_gives_new(
            old in prop::collection::vec(line(), 0..10),
            edits in prop::collection::vec((any::<prop::sample::Index>(), line()), 0..6),
            other in prop::collection::vec(line(), 0..10),
            in_place in any::<bool>(),
            budget in 0usize..4,
        ) {
            // Either lines of `old` replaced in place, or another file altogether.
            let new = if in_place {
                let mut new = old.clone();
                for (at, l) in edits {
                    if !new.is_empty() {
                        let i = at.index(new.len());
                        new[i] = l;
                    }
                }
                new
            } else {
                other
            };
            let (old, new) = (old.join("\n"), new.join("\n"));
            let (got, want, n) = patched_text(&old, &new, budget);
            prop_assert_eq!(&got, &want);
            let (_, m) = patched(&parsed(&old).map, &want);
            prop_assert_eq!(n, m, "as many operations as the full diff");
        }
    }
}
