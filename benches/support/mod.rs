//! Plumbing shared by the bench binaries: allocation tallies, the side files the results
//! script reads, a deterministic per-thread random number generator, and runners that time
//! single-threaded and multi-threaded batches for criterion's `iter_custom`.
//!
//! Criterion reports time only. In the heavy, read and pool benches, every batch is also
//! bracketed by two readings of the counting global allocator
//! (`tests/support/counting_alloc.rs`, which those bench binaries install), and when a
//! benchmark finishes its totals go as one line to `$CARGO_TARGET_DIR/bench-alloc/<bench>.tsv`
//! (default `target/`): iterations, allocation
//! calls and bytes requested, per op, plus an optional extra counter (factory calls).
//! `scripts/tables.py` joins those lines with criterion's `estimates.json`.
//!
//! The counters are process-wide, so a tally includes what every thread of the benchmark
//! allocated during the batch, background writers included. Warm-up batches count too:
//! the figures are totals over everything criterion ran, divided by the operations run.
#![allow(dead_code)]

use std::fs::{self, OpenOptions};
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Barrier, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

use criterion::Criterion;

use crate::counting_alloc::Snapshot;

/// Totals over every batch of one benchmark.
#[derive(Debug, Default)]
pub struct Tally {
    /// Batches run (calls of the `iter_custom` routine).
    pub batches: u64,
    /// Operations run over all batches.
    pub ops: u64,
    /// Wall time of all batches.
    pub elapsed: Duration,
    /// Allocation calls during the batches, process-wide.
    pub allocs: u64,
    /// Bytes requested by those calls.
    pub bytes: u64,
    /// A bench-specific counter (factory calls), if the bench keeps one.
    pub extra: u64,
}

impl Tally {
    /// Adds one batch of `ops` operations.
    pub fn add(&mut self, ops: u64, elapsed: Duration, alloc: Snapshot) {
        self.batches += 1;
        self.ops += ops;
        self.elapsed += elapsed;
        self.allocs += alloc.allocs;
        self.bytes += alloc.bytes;
    }
}

/// Entries in a full map of the heavy-object benchmark.
pub const ENTRIES: usize = 100_000;

/// The heavy-object benchmark's 100,000 `(key, value)` pairs (keys `"0"`..`"99999"`, values
/// `"value-N"`), built once and leaked so they are `&'static str`.
pub fn entries() -> &'static [(&'static str, &'static str)] {
    static ENTRY_LIST: OnceLock<Vec<(&'static str, &'static str)>> = OnceLock::new();
    ENTRY_LIST.get_or_init(|| {
        let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
        (0..ENTRIES)
            .map(|i| (leak(i.to_string()), leak(format!("value-{i}"))))
            .collect()
    })
}

/// A seed for thread `t` of batch `batch` (pass [`Tally::batches`]): deterministic, but
/// different per batch so that short batches do not all replay the same sequence. The
/// inputs go through splitmix64's finaliser, as xorshift needs well-mixed, non-zero seeds.
pub fn seed(batch: u64, t: usize) -> u64 {
    let mut z = (batch << 8 | t as u64)
        .wrapping_add(1)
        .wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (z ^ (z >> 31)) | 1
}

/// One step of Marsaglia's xorshift64: cheap, allocation-free, and deterministic.
#[inline]
pub fn xorshift(state: &mut u64) -> u64 {
    let mut x = *state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *state = x;
    x
}

/// True under `cargo bench -- --test` (criterion runs every benchmark once): no side
/// files are written then, as one iteration tells nothing.
pub fn test_mode() -> bool {
    std::env::args().any(|a| a == "--test")
}

/// True when `POOLSWAP_BENCH_QUICK` is set to anything but `0`: warm-up and measurement
/// times shrink about tenfold, to check the whole pipeline in a few minutes.
pub fn quick() -> bool {
    std::env::var_os("POOLSWAP_BENCH_QUICK").is_some_and(|v| v != "0")
}

/// Scales a duration down in quick mode.
pub fn secs(s: f64) -> Duration {
    Duration::from_secs_f64(if quick() { s / 10.0 } else { s })
}

/// The criterion configuration every bench binary starts from: ten samples, no plots
/// (the results script draws its own), command-line arguments honoured.
pub fn criterion() -> Criterion {
    Criterion::default()
        .sample_size(10)
        .warm_up_time(secs(1.0))
        .measurement_time(secs(2.0))
        .without_plots()
        .configure_from_args()
}

/// Times `ops` calls of `op` on the current thread.
pub fn serial(ops: u64, tally: &mut Tally, mut op: impl FnMut()) -> Duration {
    let before = Snapshot::now();
    let start = Instant::now();
    for _ in 0..ops {
        op();
    }
    let elapsed = start.elapsed();
    tally.add(ops, elapsed, Snapshot::since(before));
    elapsed
}

/// How many of `ops` operations thread `t` of `threads` runs.
pub fn share(ops: u64, threads: usize, t: usize) -> u64 {
    let threads = threads as u64;
    ops / threads + u64::from((t as u64) < ops % threads)
}

/// Runs `threads` workers that together perform `ops` operations, as Go's
/// `b.RunParallel` does, and returns the wall time from their common start to the last
/// one's end. Criterion divides it by `ops`: time per op is wall time / total ops.
///
/// `worker(t, n, start)` is thread `t`'s body: it sets up what it needs (per-thread
/// handles, caches), waits on `start`, then runs its `n` operations. Spawning and set-up
/// are outside the timed region. `background` runs on one more thread from before the
/// start until the workers are done; it must return soon after its flag turns true.
pub fn parallel<W, B>(
    ops: u64,
    threads: usize,
    tally: &mut Tally,
    worker: W,
    background: B,
) -> Duration
where
    W: Fn(usize, u64, &Barrier) + Sync,
    B: FnOnce(&AtomicBool) + Send,
{
    let start = Barrier::new(threads + 1);
    let stop = AtomicBool::new(false);
    thread::scope(|s| {
        let bg = s.spawn(|| background(&stop));
        let workers: Vec<_> = (0..threads)
            .map(|t| {
                let (worker, start) = (&worker, &start);
                s.spawn(move || worker(t, share(ops, threads, t), start))
            })
            .collect();
        start.wait();
        let before = Snapshot::now();
        let t0 = Instant::now();
        for w in workers {
            w.join().expect("bench worker panicked");
        }
        let elapsed = t0.elapsed();
        let alloc = Snapshot::since(before);
        stop.store(true, Ordering::Relaxed);
        bg.join().expect("bench background thread panicked");
        tally.add(ops, elapsed, alloc);
        elapsed
    })
}

/// A `background` for [`parallel`] that does nothing.
pub fn idle(_: &AtomicBool) {}

/// Where the side files go: `$CARGO_TARGET_DIR/bench-alloc`, or the workspace's
/// `target/bench-alloc` (cargo runs a bench from its package's directory, `benches/`,
/// whose parent is the workspace root).
fn side_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(
        || PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../target")),
        PathBuf::from,
    );
    target.join("bench-alloc")
}

/// Column names of the side files, written as the first line of a new file.
const HEADER: &str =
    "group\tfunction\tparameter\tbatches\tops\tns_per_op\tallocs\tbytes\tallocs_per_op\tbytes_per_op\textra_name\textra_per_op";

/// Appends one benchmark's tally to `bench-alloc/<bench>.tsv`, and prints it. The
/// criterion id is `<group>/<function>/<parameter>`; `extra` names the extra counter.
/// Nothing is written in test mode or when the benchmark was filtered out.
pub fn record(
    bench: &str,
    group: &str,
    function: &str,
    parameter: &str,
    tally: &Tally,
    extra: Option<&str>,
) {
    if tally.ops == 0 || test_mode() {
        return;
    }
    let ops = tally.ops as f64;
    let ns = tally.elapsed.as_nanos() as f64 / ops;
    let (allocs, bytes) = (tally.allocs as f64 / ops, tally.bytes as f64 / ops);
    let extra_per_op = tally.extra as f64 / ops;
    let id = if parameter.is_empty() {
        format!("{group}/{function}")
    } else {
        format!("{group}/{function}/{parameter}")
    };
    let extra_text = extra.map_or(String::new(), |name| {
        format!(", {extra_per_op:.4} {name}/op")
    });
    eprintln!("{id}: {allocs:.3} allocs/op, {bytes:.1} B/op{extra_text}");
    let line = format!(
        "{group}\t{function}\t{parameter}\t{}\t{}\t{ns:.3}\t{}\t{}\t{allocs:.6}\t{bytes:.3}\t{}\t{extra_per_op:.6}\n",
        tally.batches,
        tally.ops,
        tally.allocs,
        tally.bytes,
        extra.unwrap_or("-"),
    );
    append(&format!("{bench}.tsv"), HEADER, &line);
}

/// Appends `line` (ending in a newline) to the side file `bench-alloc/<file>`, writing
/// `header` first if the file is new; warns instead of failing. For figures that are not
/// allocation tallies (latency percentiles, ratios), in files of their own.
pub fn append(file: &str, header: &str, line: &str) {
    let dir = side_dir();
    let path = dir.join(file);
    let result = fs::create_dir_all(&dir).and_then(|()| {
        let fresh = !path.exists();
        let mut file = OpenOptions::new().create(true).append(true).open(&path)?;
        if fresh {
            writeln!(file, "{header}")?;
        }
        file.write_all(line.as_bytes())
    });
    if let Err(e) = result {
        eprintln!("warning: could not write {}: {e}", path.display());
    }
}
