//! An op log on real data: batches of inserts, overwrites and removals published with an
//! [`OpLog`] into an anagram index of a word list, while reader threads check that every
//! version they see holds exactly what its batch number says.
//!
//! The example loads a word list (by default the SCOWL-based `wamerican` list shipped in
//! `examples/data/`; any file with one word per line will do) into an anagram index: a
//! `Recycled<HashMap<String, (u64, Vec<String>)>>` from each word's *signature* (its
//! letters, lower-cased and sorted: `Listen` → `eilnst`) to a stamp and the words with that
//! signature, in file order (`eilnst` → `enlist, inlets, listen, silent, tinsel`). Then it
//! publishes `--batches` batches of changes through the writer, with a `--pause-us` pause
//! after each:
//!
//! * a batch moves `--batch-size` words: half of them, picked at random, leave the index,
//!   and as many words that left earlier come back (at the start, one word in 16 is left
//!   out to have some to bring back). Each anagram group the batch touches becomes one
//!   operation: [`MapOp::Remove`] when its last word leaves, [`MapOp::Insert`] of a new key
//!   when a word comes back to an empty group, and an `Insert` that overwrites the group
//!   otherwise. Every group a batch writes carries the batch's number as its stamp. Inserts
//!   and removals balance, and an overwrite changes a group by one word.
//! * `--readers` threads read the current version, never waiting for the writer. A read
//!   takes one guard and looks up three keys: a random signature of the whole list, and two
//!   keys that the version's own batch touched. Each answer (its stamp and a hash of its
//!   words, or its absence) is compared with what the version must hold after the batch
//!   whose number it carries ([`Versioned::seq`]), worked out before the run. A *torn
//!   batch* is a read in which one of the two keys shows the version's batch and the other
//!   does not. The readers' keys are built before the run: the reading loop allocates
//!   nothing.
//!
//! The writer builds each batch's operations from the plan (allocating their strings, as
//! decoding a change feed would), then times and measures its [`publish`](OpLog::publish)
//! alone: the first batches are warm-up (during the first `--readers + 1` of them the
//! writer itself holds a guard on each version, so that the pool builds, once, every
//! version the run can need: one per reader, the current one and the one being written),
//! the others steady state. With `--catch-up` it calls [`OpLog::catch_up`] after each
//! publish, in the pause: the idle versions replay there what the next publish would
//! otherwise replay (timed apart; its allocations count with the publish's).
//!
//! # What the figures mean
//!
//! * **publish p50 / p99 / max**: the time of one `publish` at steady state: taking a
//!   reused version from the pool, replaying on it the batches it missed (usually one),
//!   applying the new batch, and the swap ([`Container::update`]). On a 2-core machine the
//!   readers compete with the writer for the cores, and the tail includes that.
//! * **allocations per publish**: what the allocator counted during the steady-state
//!   publishes (a counting global allocator; the counter is process-wide, which is why the
//!   readers never allocate). The `oplog` module docs ("What it costs") expect 0 for a
//!   [`Recycled`] map whose inserts and removals balance: new entries take their key and
//!   value buffers from the version's free lists, removed ones go back to it, overwrites
//!   copy into the buffers already there. See [Allocations](self#allocations) for what this
//!   run measures instead.
//! * **reads/s**: guards taken per second by all readers together (three lookups each).
//! * **writer stats** ([`OpLog::stats`]): `applied / appended` is how many versions applied
//!   each operation (2 when two versions alternate, more while readers hold older ones);
//!   `full_syncs` counts whole-table copies (a version new from the pool's factory, or one
//!   that missed more than the op log keeps): all of them should fall in the warm-up.
//!
//! # Allocations
//!
//! On the bundled list (2 readers, batches of 64, 2,000 batches) the steady-state publishes
//! allocate about 37 times each, 0.6 per operation, not 0; nearly all are `realloc`s of
//! small strings. Two causes, both in how the ready-made [`MapOp`]s treat a [`Recycled`]
//! map:
//!
//! * **The version that applies an operation last takes its data by value**
//!   ([`Absorb::absorb_owned`](poolswap::oplog::Absorb::absorb_owned)): an insert moves the
//!   operation's key and group into the map instead of taking buffers from the free lists,
//!   while removals and overwrites still give buffers back. Every version applies every
//!   operation by value once in a while, so its free lists only grow: "spare buffers,
//!   current free lists" climbs by about one key and one group per removal (60,000 buffers
//!   after 2,000 batches), and the free lists' own growth allocates (the large allocations
//!   counted here).
//! * **Buffers wander**: a spare string recycled from a removed entry was sized for that
//!   entry's word (a full copy sizes every buffer exactly), and the next insert may hand it
//!   a longer one, which grows it. The buffers brought in by value are exact too, so the
//!   sizes never settle.
//!
//! `--check` therefore bounds the steady-state allocations at
//! [`MAX_STEADY_ALLOCS_PER_APPLY`] per operation *applied* (to one version:
//! `OpLogStats::applied`, about 4 per operation here), which does not depend on how many
//! versions circulate: this run measures 0.14 (1 to 4 readers: 0.13 to 0.15; batches of 2
//! words: 0.22), and copying every inserted key and group would cost at least 2. Make it 0
//! once the ready-made operations recycle as the module docs say.
//!
//! Run it with
//!
//! ```text
//! cargo run --release --example oplog [-- [PATH] [--batches N] [--batch-size K] [--readers N] [--pause-us N] [--catch-up] [--check]]
//! ```
//!
//! `--check` turns it into a smoke test: the exit status is non-zero if a reader saw a torn
//! batch or a wrong answer, if the steady-state publishes allocated more than
//! [`MAX_STEADY_ALLOCS_PER_APPLY`] times per operation applied, if a full copy happened
//! after the warm-up, or if the op log dropped operations that a version still lacked.

#[path = "../tests/support/counting_alloc.rs"]
mod counting_alloc;

use std::collections::{HashMap, HashSet};
use std::hash::{DefaultHasher, Hasher as _};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Barrier;
use std::thread;
use std::time::{Duration, Instant};

use counting_alloc::Snapshot;
use poolswap::oplog::{MapOp, OpLog, OpLogStats, ReadHandle, Versioned};
use poolswap::Recycled;

#[global_allocator]
static ALLOC: counting_alloc::Counting = counting_alloc::Counting;

/// The word list loaded when no path is given.
const DEFAULT_PATH: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/examples/data/american-english"
);

/// Batches after the guard-holding ones that still count as warm-up: a margin for
/// one-time costs (the readers' first reads, buffers of the first batches finding their
/// sizes).
const WARMUP_MARGIN: u64 = 100;

/// `--check`'s bound on allocations in the steady-state publishes, per operation applied to
/// a version (see [Allocations](self#allocations): the measured figure is about 0.14; it
/// should be 0).
const MAX_STEADY_ALLOCS_PER_APPLY: f64 = 0.5;

/// One word in this many starts outside the index, so that batches have words to bring
/// back.
const RESERVE_FRACTION: usize = 16;

/// The seed of the batches' random choices; the readers use 1, 2, ...
const PLAN_SEED: u64 = 0x00c0_ffee;

/// The hash of a missing entry in the plan (a real entry's hash is 0 with probability
/// 2^-64).
const ABSENT: u64 = 0;

const USAGE: &str = "\
usage: oplog [PATH] [--batches N] [--batch-size K] [--readers N] [--pause-us N] [--catch-up]
                  [--check]

  PATH            a word list, one word per line (default: examples/data/american-english)
  --batches N     change batches to publish, warm-up included (default 2000)
  --batch-size K  words moved per batch, half out of the index and half back in; even
                  (default 64)
  --readers N     reader threads (default 2)
  --pause-us N    pause after each publish, in microseconds (default 500)
  --catch-up      call OpLog::catch_up after each publish, before the pause: the idle
                  versions replay what they lack there, not in the next publish
  --check         exit non-zero if a reader saw a torn batch or a wrong answer, steady-state
                  publishes allocated more than 0.5 times per operation applied, a
                  full copy happened after warm-up, or the op log dropped operations that a
                  version still lacked";

/// A group: the number of the batch that last wrote it, and its words in file order.
type Group = (u64, Vec<String>);

/// The index: signature → group, with the free lists that recycle keys and groups.
type Index = Recycled<HashMap<String, Group>>;

type Op = MapOp<String, Group>;

/// Command-line settings.
#[derive(Debug)]
struct Args {
    path: String,
    batches: u64,
    batch_size: usize,
    readers: usize,
    pause_us: u64,
    catch_up: bool,
    check: bool,
}

impl Args {
    /// Parses the command line (`--flag N` or `--flag=N`); `Ok(None)` means `--help`.
    fn parse(mut it: impl Iterator<Item = String>) -> Result<Option<Args>, String> {
        let mut args = Args {
            path: DEFAULT_PATH.to_owned(),
            batches: 2000,
            batch_size: 64,
            readers: 2,
            pause_us: 500,
            catch_up: false,
            check: false,
        };
        let mut path_seen = false;
        while let Some(arg) = it.next() {
            let (flag, inline) = match arg.split_once('=') {
                Some((f, v)) if f.starts_with("--") => (f.to_owned(), Some(v.to_owned())),
                _ => (arg.clone(), None),
            };
            let mut number = |name: &str| -> Result<u64, String> {
                let v = inline
                    .clone()
                    .or_else(|| it.next())
                    .ok_or_else(|| format!("{name} needs a value"))?;
                v.parse()
                    .map_err(|_| format!("{name}: `{v}` is not a non-negative integer"))
            };
            let size =
                |n: u64, name: &str| usize::try_from(n).map_err(|_| format!("{name}: too large"));
            match flag.as_str() {
                "-h" | "--help" => return Ok(None),
                "--batches" => args.batches = number("--batches")?,
                "--batch-size" => args.batch_size = size(number("--batch-size")?, "--batch-size")?,
                "--readers" => args.readers = size(number("--readers")?, "--readers")?,
                "--pause-us" => args.pause_us = number("--pause-us")?,
                "--check" if inline.is_none() => args.check = true,
                "--catch-up" if inline.is_none() => args.catch_up = true,
                f if f.starts_with('-') && f != "-" => {
                    return Err(format!("unknown option `{arg}`"))
                }
                _ if path_seen => return Err(format!("unexpected argument `{arg}`")),
                _ => {
                    args.path = arg;
                    path_seen = true;
                }
            }
        }
        if args.batches == 0 || args.batches > u64::from(u32::MAX) {
            return Err("--batches must be between 1 and 2^32 - 1".to_owned());
        }
        if args.batch_size == 0 || args.batch_size % 2 == 1 {
            return Err("--batch-size must be even and at least 2".to_owned());
        }
        if args.readers == 0 {
            return Err("--readers must be at least 1".to_owned());
        }
        Ok(Some(args))
    }

    /// Batches that count as warm-up: the guard-holding ones and a margin.
    fn warmup(&self) -> u64 {
        self.readers as u64 + 1 + WARMUP_MARGIN
    }
}

/// A tiny xorshift64* generator: random choices without a dependency and without
/// allocating.
struct XorShift(u64);

impl XorShift {
    fn new(seed: u64) -> Self {
        // Any non-zero state works; mixing the seed makes neighbouring seeds diverge.
        XorShift(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A value in `0..n` (`n > 0`); the modulo bias does not matter here.
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// A word's anagram signature: its letters, lower-cased, sorted.
fn signature(word: &str) -> String {
    let mut letters: Vec<char> = word.chars().flat_map(char::to_lowercase).collect();
    letters.sort_unstable();
    letters.into_iter().collect()
}

/// What readers compare: a hash of an entry's stamp and words, or [`ABSENT`].
fn digest(entry: Option<&Group>) -> u64 {
    let Some((stamp, words)) = entry else {
        return ABSENT;
    };
    // `DefaultHasher::new()` has fixed keys: the same hash in every thread of the process.
    let mut h = DefaultHasher::new();
    h.write_u64(*stamp);
    for w in words {
        h.write(w.as_bytes());
        h.write_u8(0xff); // a byte no UTF-8 text holds: the words' boundaries count
    }
    h.finish()
}

/// What one batch does to one key.
#[derive(Clone, Copy, Debug)]
struct Change {
    /// The key, an index into [`Plan::keys`].
    key: u32,
    /// The key's group after the batch: a range of [`Plan::group_words`]; empty when the
    /// key's last word left (the entry is removed).
    words: (u32, u32),
}

/// Every batch of a run, and what every version must hold, worked out before the run.
struct Plan {
    /// The words, in file order (deduplicated).
    words: Vec<String>,
    /// The signatures of all the words, each once: the keys readers look up.
    keys: Vec<String>,
    /// The index before the first batch.
    initial: HashMap<String, Group>,
    /// Batch `b`'s changes are `changes[batch_start[b - 1]..batch_start[b]]`.
    changes: Vec<Change>,
    batch_start: Vec<u32>,
    /// Word indices of the groups the changes write, back to back.
    group_words: Vec<u32>,
    /// Key `k`'s history is `history[history_start[k]..history_start[k + 1]]`: (batch,
    /// digest) pairs by batch, the first for batch 0 (the initial index).
    history: Vec<(u32, u64)>,
    history_start: Vec<u32>,
    /// Words left out of the initial index.
    reserve: usize,
}

impl Plan {
    /// Plans `batches` batches of `batch_size` moves over the words of `text` (the first
    /// whitespace-separated token of each line; blank lines skipped, duplicates dropped).
    fn new(text: &str, batches: u64, batch_size: usize) -> Result<Plan, String> {
        let mut seen = HashSet::new();
        let words: Vec<String> = text
            .lines()
            .filter_map(|l| l.split_whitespace().next())
            .filter(|w| seen.insert(*w))
            .map(str::to_owned)
            .collect();
        let reserve = (words.len() / RESERVE_FRACTION).max(batch_size);
        if words.len() < reserve + batch_size {
            return Err(format!(
                "{} words: too few for batches of {batch_size} (at least {} needed)",
                words.len(),
                reserve + batch_size
            ));
        }
        let mut key_of_sig: HashMap<String, u32> = HashMap::new();
        let mut keys = Vec::new();
        let word_key: Vec<u32> = words
            .iter()
            .map(|w| {
                let sig = signature(w);
                *key_of_sig.entry(sig.clone()).or_insert_with(|| {
                    keys.push(sig);
                    (keys.len() - 1) as u32
                })
            })
            .collect();
        // Shuffle the words; the first `reserve` start outside the index.
        let mut rng = XorShift::new(PLAN_SEED);
        let mut order: Vec<u32> = (0..words.len() as u32).collect();
        for i in (1..order.len()).rev() {
            order.swap(i, rng.below(i + 1));
        }
        let mut outside = order[..reserve].to_vec();
        let mut inside = order[reserve..].to_vec();
        // members[k]: the word indices in key k's group, ascending (file order).
        let mut members: Vec<Vec<u32>> = vec![Vec::new(); keys.len()];
        for &w in &inside {
            members[word_key[w as usize] as usize].push(w);
        }
        for m in &mut members {
            m.sort_unstable();
        }
        let group = |m: &[u32], stamp: u64| -> Group {
            (
                stamp,
                m.iter().map(|&w| words[w as usize].clone()).collect(),
            )
        };
        let mut initial = HashMap::with_capacity(keys.len());
        // (key, batch, digest) of every change, batch 0 being the initial index.
        let mut events: Vec<(u32, u32, u64)> = Vec::with_capacity(keys.len());
        for (k, m) in members.iter().enumerate() {
            if m.is_empty() {
                events.push((k as u32, 0, ABSENT));
            } else {
                let g = group(m, 0);
                events.push((k as u32, 0, digest(Some(&g))));
                initial.insert(keys[k].clone(), g);
            }
        }

        let mut changes = Vec::new();
        let mut batch_start = vec![0u32];
        let mut group_words = Vec::new();
        // last_touched[k]: the last batch that touched key k (0: none yet).
        let mut last_touched = vec![0u32; keys.len()];
        let mut touched = Vec::new();
        let mut leaving = Vec::with_capacity(batch_size / 2);
        for b in 1..=batches as u32 {
            touched.clear();
            let mut touch = |w: u32, members: &mut Vec<Vec<u32>>, back: bool| {
                let k = word_key[w as usize];
                let m = &mut members[k as usize];
                match (m.binary_search(&w), back) {
                    (Err(at), true) => m.insert(at, w),
                    (Ok(at), false) => {
                        m.remove(at);
                    }
                    _ => unreachable!("word {w} moved twice in batch {b}"),
                }
                if last_touched[k as usize] != b {
                    last_touched[k as usize] = b;
                    touched.push(k);
                }
            };
            leaving.clear();
            for _ in 0..batch_size / 2 {
                let w = inside.swap_remove(rng.below(inside.len()));
                touch(w, &mut members, false);
                leaving.push(w);
            }
            for _ in 0..batch_size / 2 {
                let w = outside.swap_remove(rng.below(outside.len()));
                touch(w, &mut members, true);
                inside.push(w);
            }
            outside.extend_from_slice(&leaving);
            for &k in &touched {
                let m = &members[k as usize];
                let start = group_words.len() as u32;
                group_words.extend_from_slice(m);
                let words_at = (start, group_words.len() as u32);
                changes.push(Change {
                    key: k,
                    words: words_at,
                });
                let d = if m.is_empty() {
                    ABSENT
                } else {
                    digest(Some(&group(m, u64::from(b))))
                };
                events.push((k, b, d));
            }
            batch_start.push(changes.len() as u32);
        }

        // Stable: each key's events stay in batch order.
        events.sort_by_key(|&(k, _, _)| k);
        let mut history_start = Vec::with_capacity(keys.len() + 1);
        for (i, &(k, _, _)) in events.iter().enumerate() {
            if history_start.len() == k as usize {
                history_start.push(i as u32);
            }
        }
        history_start.push(events.len() as u32);
        let history = events.into_iter().map(|(_, b, d)| (b, d)).collect();
        Ok(Plan {
            words,
            keys,
            initial,
            changes,
            batch_start,
            group_words,
            history,
            history_start,
            reserve,
        })
    }

    /// The changes of batch `b` (1-based).
    fn batch(&self, b: u64) -> &[Change] {
        let b = b as usize;
        &self.changes[self.batch_start[b - 1] as usize..self.batch_start[b] as usize]
    }

    /// The operation that makes `change` in batch `b`: a new key and group, allocated.
    fn op(&self, change: &Change, b: u64) -> Op {
        let key = self.keys[change.key as usize].clone();
        let (start, end) = change.words;
        if start == end {
            return MapOp::Remove(key);
        }
        let words = self.group_words[start as usize..end as usize]
            .iter()
            .map(|&w| self.words[w as usize].clone())
            .collect();
        MapOp::Insert(key, (b, words))
    }

    /// The digest key `k` must have in the version after batch `seq`.
    fn expected(&self, k: usize, seq: u64) -> u64 {
        let h = &self.history[self.history_start[k] as usize..self.history_start[k + 1] as usize];
        // Never 0: every key's history starts at batch 0.
        let at = h.partition_point(|&(b, _)| u64::from(b) <= seq);
        h[at - 1].1
    }

    /// Whether key `k`'s entry in `index` is what the version after batch `seq` holds.
    fn holds(&self, index: &HashMap<String, Group>, k: usize, seq: u64) -> bool {
        digest(index.get(&self.keys[k])) == self.expected(k, seq)
    }
}

/// What one reader did.
#[derive(Debug, Default)]
struct ReaderReport {
    reads: u64,
    /// Keys whose entry differed from what the version should hold.
    wrong: u64,
    /// Reads where one key of the version's batch showed the batch and another did not.
    torn: u64,
}

/// One reader: three lookups per guard until `stop` (see the module docs). Allocates
/// nothing in its loop.
fn reader(
    container: &ReadHandle<Index>,
    plan: &Plan,
    seed: u64,
    start: &Barrier,
    stop: &AtomicBool,
) -> ReaderReport {
    let mut rng = XorShift::new(seed);
    let mut r = ReaderReport::default();
    counting_alloc::warm_parking_lot();
    // The first read registers this thread with the crate's hazard slots: before the clock.
    drop(container.acquire());
    start.wait();
    while !stop.load(Relaxed) {
        let version = container.acquire();
        let seq = Versioned::seq(&version);
        let index: &HashMap<String, Group> = &version;
        let ok = plan.holds(index, rng.below(plan.keys.len()), seq);
        r.wrong += u64::from(!ok);
        if seq > 0 {
            let batch = plan.batch(seq);
            let a = batch[rng.below(batch.len())].key as usize;
            let b = batch[rng.below(batch.len())].key as usize;
            let (ok_a, ok_b) = (plan.holds(index, a, seq), plan.holds(index, b, seq));
            r.wrong += u64::from(!ok_a) + u64::from(!ok_b);
            r.torn += u64::from(ok_a != ok_b);
        }
        r.reads += 1;
    }
    r
}

/// What the writer did.
#[derive(Debug, Default)]
struct WriterReport {
    /// Operations published, warm-up included.
    ops: u64,
    warmup: Snapshot,
    /// Steady-state publishes: their latencies (ns), and what they allocated.
    latencies: Vec<u64>,
    steady: Snapshot,
    /// Operations the steady-state publishes published.
    steady_ops: u64,
    /// Steady-state publishes that allocated anything.
    allocating: u64,
    /// The writer's stats at the end of the warm-up.
    stats_at_warmup: OpLogStats,
    /// Everything the process allocated during the steady-state publishes and between them
    /// (the writer building operations included).
    steady_process: Snapshot,
    /// With `--catch-up`: each steady-state catch-up's time (ns) and the operations all of
    /// them applied.
    catch_ups: Vec<u64>,
    catch_up_ops: u64,
}

/// The writer: builds each batch's operations and publishes them, timing and measuring
/// the publish; then sets `stop`.
fn writer(
    w: &mut OpLog<Index, Op>,
    plan: &Plan,
    args: &Args,
    start: &Barrier,
    stop: &AtomicBool,
) -> WriterReport {
    let mut r = WriterReport {
        latencies: Vec::with_capacity(args.batches as usize),
        ..WriterReport::default()
    };
    let hold = args.readers as u64 + 1;
    let warmup = args.warmup();
    let mut held = Vec::with_capacity(hold as usize);
    let pause = Duration::from_micros(args.pause_us);
    let mut steady_start = None;
    counting_alloc::warm_parking_lot();
    start.wait();
    for b in 1..=args.batches {
        // Warm-up: hold a guard on each of the first versions, so that the pool builds
        // (and the writer fully copies) every version the run can have out at once now.
        if b <= hold {
            held.push(w.read_handle().acquire());
        } else if b == hold + 1 {
            held.clear();
        }
        for change in plan.batch(b) {
            w.append(plan.op(change, b));
        }
        let ops = w.pending() as u64;
        r.ops += ops;

        let before = Snapshot::now();
        let t0 = Instant::now();
        let seq = w.publish();
        let ns = t0.elapsed().as_nanos() as u64;
        // Off the publish's time, but its allocations count with the publish's.
        let caught = args.catch_up.then(|| {
            let t0 = Instant::now();
            let ops = w.catch_up() as u64;
            (t0.elapsed().as_nanos() as u64, ops)
        });
        let d = Snapshot::since(before);

        assert_eq!(seq, b, "batch numbers follow the plan");
        if b <= warmup {
            r.warmup.allocs += d.allocs;
            r.warmup.bytes += d.bytes;
            if b == warmup {
                r.stats_at_warmup = w.stats();
                steady_start = Some(Snapshot::now());
            }
        } else {
            r.latencies.push(ns);
            if let Some((ns, ops)) = caught {
                r.catch_ups.push(ns);
                r.catch_up_ops += ops;
            }
            r.steady.allocs += d.allocs;
            r.steady.bytes += d.bytes;
            r.steady_ops += ops;
            r.allocating += u64::from(d.allocs > 0);
        }
        if !pause.is_zero() {
            thread::sleep(pause);
        }
    }
    if let Some(s) = steady_start {
        r.steady_process = Snapshot::since(s);
    } else {
        r.stats_at_warmup = w.stats();
    }
    stop.store(true, Relaxed);
    r
}

/// `p`-th percentile (0.0..=1.0) of sorted, non-empty `v`.
fn percentile(v: &[u64], p: f64) -> u64 {
    v[((v.len() - 1) as f64 * p).round() as usize]
}

fn main() -> ExitCode {
    let args = match Args::parse(std::env::args().skip(1)) {
        Ok(Some(args)) => args,
        Ok(None) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("error: {e}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let text = match std::fs::read_to_string(&args.path) {
        Ok(text) => text,
        Err(e) => {
            eprintln!("error: cannot read {}: {e}", args.path);
            if args.path == DEFAULT_PATH {
                // The word list is in the repository, not in the crates.io package.
                eprintln!(
                    "the default word list ships with the source repository only (not the \
                     crates.io package); pass any word list, one word per line: \
                     `cargo run --release --example oplog -- /usr/share/dict/words`"
                );
            }
            return ExitCode::from(2);
        }
    };
    let t0 = Instant::now();
    let mut plan = match Plan::new(&text, args.batches, args.batch_size) {
        Ok(plan) => plan,
        Err(e) => {
            eprintln!("error: {}: {e}", args.path);
            return ExitCode::from(2);
        }
    };
    let plan_time = t0.elapsed();
    drop(text);

    let initial = std::mem::take(&mut plan.initial);
    let initial_groups = initial.len();
    // The versions the op log circulates, made now rather than by the first publishes: the
    // current one, one per reader (each holds one guard at a time), the one being written.
    let mut w: OpLog<Index, Op> = OpLog::builder(Recycled::new(initial))
        .versions(args.readers + 2)
        .build();
    let container = w.read_handle();
    let start = Barrier::new(args.readers + 1);
    let stop = AtomicBool::new(false);
    let t0 = Instant::now();
    let (readers, wr, elapsed) = thread::scope(|s| {
        let readers: Vec<_> = (0..args.readers)
            .map(|i| {
                let (container, plan, start, stop) = (&container, &plan, &start, &stop);
                s.spawn(move || reader(container, plan, i as u64 + 1, start, stop))
            })
            .collect();
        let wr = writer(&mut w, &plan, &args, &start, &stop);
        let elapsed = t0.elapsed();
        let readers: Vec<ReaderReport> = readers
            .into_iter()
            .map(|h| h.join().expect("reader panicked"))
            .collect();
        (readers, wr, elapsed)
    });
    report(
        &args,
        &plan,
        &w,
        &readers,
        &wr,
        elapsed,
        plan_time,
        initial_groups,
    )
}

/// Prints the run's figures, and under `--check` decides the exit status.
#[allow(clippy::too_many_arguments)]
fn report(
    args: &Args,
    plan: &Plan,
    w: &OpLog<Index, Op>,
    readers: &[ReaderReport],
    wr: &WriterReport,
    elapsed: Duration,
    plan_time: Duration,
    initial_groups: usize,
) -> ExitCode {
    let secs = elapsed.as_secs_f64();
    let reads: u64 = readers.iter().map(|r| r.reads).sum();
    let wrong: u64 = readers.iter().map(|r| r.wrong).sum();
    let torn: u64 = readers.iter().map(|r| r.torn).sum();
    let stats = w.stats();
    let warmup = args.warmup().min(args.batches);
    let steady = args.batches - warmup;
    let mut lat = wr.latencies.clone();
    lat.sort_unstable();
    let per = |x: u64, n: u64| if n == 0 { 0.0 } else { x as f64 / n as f64 };
    let now = w.read_handle().acquire();
    let index: &Index = &now;
    let free_lists = Recycled::free_lists(index).stats();

    println!(
        "poolswap oplog example: {} words from {}, {} anagram groups ({} words held back), planned in {:.2} s",
        plan.words.len(),
        args.path,
        initial_groups,
        plan.reserve,
        plan_time.as_secs_f64()
    );
    println!(
        "{} batches of {} word moves ({:.1} operations each), {} reader thread(s), {} us pause, ran {:.2} s\n",
        args.batches,
        args.batch_size,
        per(wr.ops, args.batches),
        args.readers,
        args.pause_us,
        secs
    );
    println!(
        "  {:<32} {:>12}  {:>12.0} /s",
        "reads (3 lookups each)",
        reads,
        reads as f64 / secs
    );
    println!("  {:<32} {:>12}", "wrong answers", wrong);
    println!("  {:<32} {:>12}", "torn batches", torn);
    println!(
        "  {:<32} {:>12}  (first {} warm-up)",
        "batches published", stats.publishes, warmup
    );
    if lat.is_empty() {
        println!(
            "  {:<32} {:>12}",
            "publish latency", "no steady-state publishes"
        );
    } else {
        let us = |ns: u64| ns as f64 / 1e3;
        println!(
            "  {:<32} {:>12.1} us  p99 {:.1} us, max {:.1} us",
            "publish p50",
            us(percentile(&lat, 0.50)),
            us(percentile(&lat, 0.99)),
            us(lat[lat.len() - 1])
        );
    }
    if !wr.catch_ups.is_empty() {
        let mut c = wr.catch_ups.clone();
        c.sort_unstable();
        println!(
            "  {:<32} {:>12.1} us  p99 {:.1} us ({} operations applied, off the publishes)",
            "catch-up between publishes, p50",
            percentile(&c, 0.50) as f64 / 1e3,
            percentile(&c, 0.99) as f64 / 1e3,
            wr.catch_up_ops
        );
    }
    println!(
        "  {:<32} {:>12.2}  ({} allocs, {} B in {} publishes)",
        "allocs per publish, warm-up",
        per(wr.warmup.allocs, warmup),
        wr.warmup.allocs,
        wr.warmup.bytes,
        warmup
    );
    let per_op = per(wr.steady.allocs, wr.steady_ops);
    let per_apply = per(wr.steady.allocs, stats.applied - wr.stats_at_warmup.applied);
    println!(
        "  {:<32} {:>12.3}  ({per_op:.3} per operation, {per_apply:.3} per operation applied; {} allocs, {} B in {} publishes, {} allocating)",
        "allocs per publish, steady",
        per(wr.steady.allocs, steady),
        wr.steady.allocs,
        wr.steady.bytes,
        steady,
        wr.allocating
    );
    println!(
        "  {:<32} {:>12}  ({} B: publishes, and the writer building operations)",
        "allocs, steady, whole process", wr.steady_process.allocs, wr.steady_process.bytes
    );
    println!(
        "  {:<32} {:>12}  ({:.2} per operation)",
        "operations applied",
        stats.applied,
        per(stats.applied, stats.appended)
    );
    println!(
        "  {:<32} {:>12}  ({} in warm-up)",
        "full syncs (whole-table copies)", stats.full_syncs, wr.stats_at_warmup.full_syncs
    );
    println!(
        "  {:<32} {:>12}  (op log {} ops now, {} versions tracked)",
        "ops dropped by op log truncation", stats.truncated, stats.ops_held, stats.versions
    );
    println!(
        "  {:<32} {:>12}  ({} B; {} reused, {} fresh, {} renewed)",
        "spare buffers, current free lists",
        free_lists.spare,
        free_lists.spare_bytes,
        free_lists.reused,
        free_lists.fresh,
        free_lists.renewed
    );
    println!("  {:<32} {:>12}", "groups in last version", now.len());
    drop(now);

    let mut failed = false;
    if args.check {
        if steady == 0 {
            eprintln!(
                "check failed: no batches after the {warmup} warm-up ones; use more --batches"
            );
            failed = true;
        }
        if wrong > 0 || torn > 0 {
            eprintln!("check failed: readers saw {wrong} wrong answers and {torn} torn batches");
            failed = true;
        }
        if per_apply > MAX_STEADY_ALLOCS_PER_APPLY {
            eprintln!(
                "check failed: steady-state publishes allocated {per_apply:.3} times per \
                 operation applied ({} allocs, {} B), bound {MAX_STEADY_ALLOCS_PER_APPLY}",
                wr.steady.allocs, wr.steady.bytes
            );
            failed = true;
        }
        let late = stats.full_syncs - wr.stats_at_warmup.full_syncs;
        if late > 0 {
            eprintln!("check failed: {late} full copies after the warm-up");
            failed = true;
        }
        // A reader holds a guard for three lookups, never for the hundreds of batches after
        // which the op log drops what its holder lacks: a drop means an idle spare was left
        // behind, the step before a late full copy (which then needs a reader holding a
        // guard at the wrong moment, so the check above alone caught it one run in four).
        if stats.truncated > 0 {
            eprintln!(
                "check failed: the op log dropped {} operations that a version still lacked",
                stats.truncated
            );
            failed = true;
        }
        if !failed {
            println!(
                "\ncheck passed: no torn batch, every answer right, steady-state publishes within \
                 {MAX_STEADY_ALLOCS_PER_APPLY} allocations per operation applied, no late full \
                 copy, no operation dropped from the op log"
            );
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
