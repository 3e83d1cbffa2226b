//! A lookup service in miniature: readers hammer a map while a reloader rebuilds it.
//!
//! The example loads a word list (by default the SCOWL-based `wamerican` list shipped in
//! `examples/data/`, or any text file given as an argument, one key per line) into a pooled
//! `HashMap<&str, u32>` mapping each word to its line number. Then, for `--secs` seconds:
//!
//! * `--readers` reader threads look up random words through [`Container::acquire`], never
//!   waiting for the writer, and check every answer against the line number they expect;
//! * one reloader thread rebuilds the whole map from the file every `--reload-ms`
//!   milliseconds with [`Container::get_new`] + [`Container::update`].
//!
//! At the end it prints reads/s, reloads/s, p50 and p99 read latency, the bytes allocated per
//! reload (measured with a counting global allocator, warm-up reported separately from steady
//! state) and how many maps the pool's factory ever built.
//!
//! What it shows: the old map goes back to the pool once its last reader lets go, and the
//! pool's reset (`HashMap::clear`) keeps its capacity, so once the pool holds enough maps
//! a reload is pure hashing and inserting: **steady-state reloads allocate 0 bytes**, and the
//! factory stops being called after the first few reloads. The file is read into memory once
//! and the map borrows its keys from that buffer, so inserting never allocates a string.
//!
//! Run it with
//!
//! ```text
//! cargo run --release --example hot_reload [-- [PATH] [--secs N] [--readers N] [--reload-ms N] [--check]]
//! ```
//!
//! `--check` turns it into a smoke test: the exit status is non-zero if a steady-state reload
//! allocated anything or a reader ever saw a wrong answer.

#[path = "../tests/support/counting_alloc.rs"]
mod counting_alloc;

use std::collections::HashMap;
use std::hint::black_box;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use counting_alloc::Snapshot;
use poolswap::{Container, Pool};

#[global_allocator]
static ALLOC: counting_alloc::Counting = counting_alloc::Counting;

/// The data set loaded when no path is given.
const DEFAULT_PATH: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/examples/data/american-english"
);

/// Reloads counted as warm-up: the pool is still filling up with maps then.
const WARMUP_RELOADS: u64 = 10;

/// Latency samples each reader keeps (8 bytes each), allocated before the clock starts.
const SAMPLE_CAPACITY: usize = 1 << 17;

/// A reader times one read in this many at first; the stride doubles whenever its sample
/// buffer fills up, so the samples stay spread evenly over the whole run. A power of two.
const INITIAL_SAMPLE_STRIDE: u64 = 64;

const USAGE: &str = "\
usage: hot_reload [PATH] [--secs N] [--readers N] [--reload-ms N] [--check]

  PATH           text file, one key per line (default: examples/data/american-english)
  --secs N       how long to run, in seconds (default 3)
  --readers N    reader threads (default 2)
  --reload-ms N  pause between the starts of two reloads, in ms (default 5; 0 = back to back)
  --check        exit non-zero unless steady-state reloads allocated 0 bytes
                 and every read returned the right value";

/// The pooled value: word -> line number, keys borrowed from the file's text.
type Map = HashMap<&'static str, u32>;

/// Command-line settings.
#[derive(Debug)]
struct Args {
    path: String,
    secs: u64,
    readers: usize,
    reload_ms: u64,
    check: bool,
}

impl Args {
    /// Parses `[PATH] [--secs N] [--readers N] [--reload-ms N] [--check]`; `Ok(None)` means
    /// `--help` was asked for.
    fn parse(mut it: impl Iterator<Item = String>) -> Result<Option<Args>, String> {
        let mut args = Args {
            path: DEFAULT_PATH.to_owned(),
            secs: 3,
            readers: 2,
            reload_ms: 5,
            check: false,
        };
        let mut path_seen = false;
        while let Some(arg) = it.next() {
            // Accept both `--flag N` and `--flag=N`.
            let (flag, inline) = match arg.split_once('=') {
                Some((f, v)) if f.starts_with("--") => (f.to_owned(), Some(v.to_owned())),
                _ => (arg.clone(), None),
            };
            let mut value = |name: &str| -> Result<u64, String> {
                let v = inline
                    .clone()
                    .or_else(|| it.next())
                    .ok_or_else(|| format!("{name} needs a value"))?;
                v.parse()
                    .map_err(|_| format!("{name}: `{v}` is not a non-negative integer"))
            };
            match flag.as_str() {
                "-h" | "--help" => return Ok(None),
                "--secs" => args.secs = value("--secs")?,
                "--readers" => {
                    args.readers = usize::try_from(value("--readers")?)
                        .map_err(|_| "--readers: too large".to_owned())?;
                }
                "--reload-ms" => args.reload_ms = value("--reload-ms")?,
                "--check" if inline.is_none() => args.check = true,
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
        if args.secs == 0 {
            return Err("--secs must be at least 1".to_owned());
        }
        if args.readers == 0 {
            return Err("--readers must be at least 1".to_owned());
        }
        Ok(Some(args))
    }
}

/// A tiny xorshift64* generator: random keys without a dependency and without allocating.
struct XorShift(u64);

impl XorShift {
    fn new(seed: u64) -> Self {
        // Any non-zero state works; mix the seed so neighbouring seeds diverge at once.
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

    /// A value in `0..n` (`n > 0`); the modulo bias is irrelevant here.
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Latency samples of one reader, in a buffer allocated up front.
struct Sampler {
    samples: Vec<u64>,
    stride: u64,
}

impl Sampler {
    fn new() -> Self {
        Sampler {
            samples: Vec::with_capacity(SAMPLE_CAPACITY),
            stride: INITIAL_SAMPLE_STRIDE,
        }
    }

    /// Whether read number `n` should be timed (`stride` is a power of two).
    fn wants(&self, n: u64) -> bool {
        n & (self.stride - 1) == 0
    }

    /// Records one latency without ever growing the buffer: when it is full, keep every
    /// other sample and halve the sampling rate from now on.
    fn record(&mut self, ns: u64) {
        if self.samples.len() == self.samples.capacity() {
            let kept = self.samples.len() / 2;
            for i in 0..kept {
                self.samples[i] = self.samples[2 * i + 1];
            }
            self.samples.truncate(kept);
            self.stride *= 2;
        }
        self.samples.push(ns);
    }
}

/// What one reader did.
struct ReaderReport {
    reads: u64,
    wrong: u64,
    samples: Vec<u64>,
}

/// What the reloader did.
#[derive(Default)]
struct ReloadReport {
    reloads: u64,
    build_time: Duration,
    warmup_bytes: u64,
    warmup_allocs: u64,
    steady_reloads: u64,
    steady_bytes: u64,
    steady_allocs: u64,
    /// Reloads after warm-up that allocated anything at all.
    steady_allocating: u64,
    /// Factory calls made before steady state began.
    maps_at_warmup_end: usize,
    /// Everything the whole process allocated from the end of warm-up until the reloader
    /// stopped (readers included).
    steady_process: Snapshot,
}

/// The data set: the file's text and its keys.
struct Loaded {
    /// The whole file, leaked so that the maps can borrow their keys from it.
    text: &'static str,
    /// Each distinct non-empty line with its 1-based line number, in file order.
    entries: Vec<(&'static str, u32)>,
}

/// Reads `path` and returns its non-empty lines with their 1-based line numbers, duplicates
/// resolved the way `HashMap::insert` would (the last line wins), in file order.
fn load(path: &str) -> Result<Loaded, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {path}: {e}"))?;
    // The map's keys borrow from the text for the rest of the run, so leak it: a rebuild then
    // inserts `&str`s and never allocates a string.
    let text: &'static str = Box::leak(text.into_boxed_str());
    let mut last_line: HashMap<&'static str, u32> = HashMap::new();
    for (i, line) in text.lines().enumerate() {
        if line.is_empty() {
            continue;
        }
        let n = u32::try_from(i + 1).map_err(|_| format!("{path}: too many lines"))?;
        last_line.insert(line, n);
    }
    if last_line.is_empty() {
        return Err(format!("{path}: no keys (the file has no non-empty lines)"));
    }
    let mut entries: Vec<(&'static str, u32)> = last_line.into_iter().collect();
    entries.sort_unstable_by_key(|&(_, n)| n);
    Ok(Loaded { text, entries })
}

/// Makes the calling thread wait on a `parking_lot` lock once, before the clock starts.
///
/// `parking_lot` (the pool's depot locks) allocates its global parking table and each
/// thread's parking data the first time a thread has to wait for a lock. That is a
/// one-time cost of the lock library, not of a reload, but a rarely contended lock can
/// first be contended late in a run, where it would show up as a steady-state allocation.
fn warm_parking_lot() {
    let lock = parking_lot::Mutex::new(());
    let ready = parking_lot::Condvar::new();
    let mut guard = lock.lock();
    // A timed wait parks the thread, however short.
    let _ = ready.wait_for(&mut guard, Duration::from_micros(1));
}

/// One reader: random lookups until `stop`, timing a sample of them.
fn reader(
    container: &Container<Map>,
    entries: &[(&str, u32)],
    seed: u64,
    start: &Barrier,
    stop: &AtomicBool,
) -> ReaderReport {
    let mut rng = XorShift::new(seed);
    let mut sampler = Sampler::new();
    let (mut reads, mut wrong) = (0u64, 0u64);
    warm_parking_lot();
    start.wait();
    // Nothing in this loop allocates: the allocator's counters are process-wide, and the
    // reloader's per-reload measurement must only see what the reload itself does.
    while !stop.load(Relaxed) {
        let (word, line) = entries[rng.below(entries.len())];
        let timed = sampler.wants(reads);
        let t0 = timed.then(Instant::now);
        let got = container.acquire().and_then(|map| map.get(word).copied());
        if let Some(t0) = t0 {
            sampler.record(t0.elapsed().as_nanos() as u64);
        }
        if black_box(got) != Some(line) {
            wrong += 1;
        }
        reads += 1;
    }
    ReaderReport {
        reads,
        wrong,
        samples: sampler.samples,
    }
}

/// The reloader: rebuild the map from `entries` every `interval` until `stop`.
fn reloader(
    container: &Container<Map>,
    entries: &[(&'static str, u32)],
    interval: Duration,
    maps_built: &AtomicUsize,
    start: &Barrier,
    stop: &AtomicBool,
) -> ReloadReport {
    let mut r = ReloadReport::default();
    let mut steady_start = None;
    warm_parking_lot();
    start.wait();
    let mut next = Instant::now();
    while !stop.load(Relaxed) {
        let before = Snapshot::now();
        let t0 = Instant::now();

        // The reload itself: a recycled (cleared, still sized) map from the pool, refilled,
        // published. The version it replaces returns to the pool after its last reader.
        let mut map = container.get_new();
        for &(word, line) in entries {
            map.insert(word, line);
        }
        container.update(map);

        r.build_time += t0.elapsed();
        let d = Snapshot::since(before);
        r.reloads += 1;
        if r.reloads <= WARMUP_RELOADS {
            r.warmup_bytes += d.bytes;
            r.warmup_allocs += d.allocs;
            if r.reloads == WARMUP_RELOADS {
                r.maps_at_warmup_end = maps_built.load(Relaxed);
                steady_start = Some(Snapshot::now());
            }
        } else {
            r.steady_reloads += 1;
            r.steady_bytes += d.bytes;
            r.steady_allocs += d.allocs;
            r.steady_allocating += u64::from(d.bytes > 0);
        }

        next += interval;
        let now = Instant::now();
        if next > now {
            thread::sleep(next - now);
        } else {
            next = now; // Behind schedule: reload back to back, do not try to catch up.
        }
    }
    if let Some(s) = steady_start {
        r.steady_process = Snapshot::since(s);
    } else {
        r.maps_at_warmup_end = maps_built.load(Relaxed);
    }
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
    let Loaded { text, entries } = match load(&args.path) {
        Ok(loaded) => loaded,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let n_keys = entries.len();

    // The pool: the factory builds a map big enough for the whole data set and counts how
    // often it runs; reset clears a returned map, which keeps its capacity.
    let maps_built = Arc::new(AtomicUsize::new(0));
    let pool = {
        let maps_built = Arc::clone(&maps_built);
        Pool::new(
            move || {
                maps_built.fetch_add(1, Relaxed);
                Map::with_capacity(n_keys)
            },
            |map: &mut Map| {
                map.clear();
                true
            },
        )
    };
    let mut first = pool.get();
    first.extend(entries.iter().copied());
    let container = Container::new(pool.clone(), first);

    let interval = Duration::from_millis(args.reload_ms);
    let start = Barrier::new(args.readers + 2);
    let stop = AtomicBool::new(false);
    let (readers, reloads, elapsed) = thread::scope(|s| {
        let readers: Vec<_> = (0..args.readers)
            .map(|i| {
                let (container, entries, start, stop) = (&container, &entries, &start, &stop);
                s.spawn(move || reader(container, entries, i as u64 + 1, start, stop))
            })
            .collect();
        let reloads =
            s.spawn(|| reloader(&container, &entries, interval, &maps_built, &start, &stop));
        start.wait();
        let t0 = Instant::now();
        thread::sleep(Duration::from_secs(args.secs));
        stop.store(true, Relaxed);
        // Join the reloader first: it may be in the middle of a measured reload, and the
        // allocation counter is process-wide, so this thread must not allocate until it is done.
        let reloads = reloads.join().expect("reloader panicked");
        let readers: Vec<ReaderReport> = readers
            .into_iter()
            .map(|h| h.join().expect("reader panicked"))
            .collect();
        (readers, reloads, t0.elapsed())
    });

    let secs = elapsed.as_secs_f64();
    let reads: u64 = readers.iter().map(|r| r.reads).sum();
    let wrong: u64 = readers.iter().map(|r| r.wrong).sum();
    let mut samples: Vec<u64> = readers.into_iter().flat_map(|r| r.samples).collect();
    samples.sort_unstable();
    let maps = maps_built.load(Relaxed);
    let r = &reloads;
    let per_reload = |total: u64, n: u64| if n == 0 { 0.0 } else { total as f64 / n as f64 };
    let steady_per_reload = per_reload(r.steady_bytes, r.steady_reloads);

    println!(
        "poolswap hot_reload: {} keys from {} ({} bytes)",
        n_keys,
        args.path,
        text.len()
    );
    println!(
        "{} reader thread(s), 1 reloader (at most one reload per {} ms), ran {:.2} s\n",
        args.readers, args.reload_ms, secs
    );
    println!(
        "  {:<26} {:>14}  {:>14.0} /s",
        "reads",
        reads,
        reads as f64 / secs
    );
    println!("  {:<26} {:>14}", "wrong answers", wrong);
    println!(
        "  {:<26} {:>14}  {:>14.1} /s",
        "reloads",
        r.reloads,
        r.reloads as f64 / secs
    );
    println!(
        "  {:<26} {:>14.3} ms",
        "mean reload (build+swap)",
        per_reload(r.build_time.as_nanos() as u64, r.reloads) / 1e6
    );
    if samples.is_empty() {
        println!("  {:<26} {:>14}", "read latency", "no samples");
    } else {
        println!(
            "  {:<26} {:>14} ns",
            "read latency p50",
            percentile(&samples, 0.50)
        );
        println!(
            "  {:<26} {:>14} ns",
            "read latency p99",
            percentile(&samples, 0.99)
        );
        println!("  {:<26} {:>14}", "latency samples", samples.len());
    }
    let warmup_n = r.reloads.min(WARMUP_RELOADS);
    println!(
        "  {:<26} {:>14.0} B/reload  ({} allocs in {} reloads)",
        "alloc, warm-up reloads",
        per_reload(r.warmup_bytes, warmup_n),
        r.warmup_allocs,
        warmup_n
    );
    println!(
        "  {:<26} {:>14.0} B/reload  ({} allocs in {} reloads, {} allocating)",
        "alloc, steady reloads",
        steady_per_reload,
        r.steady_allocs,
        r.steady_reloads,
        r.steady_allocating
    );
    println!(
        "  {:<26} {:>14} B         ({} allocs, whole process after warm-up)",
        "alloc, steady, all threads", r.steady_process.bytes, r.steady_process.allocs
    );
    println!(
        "  {:<26} {:>14}  ({} during warm-up, {} after)",
        "maps built by factory",
        maps,
        r.maps_at_warmup_end,
        maps - r.maps_at_warmup_end
    );

    if args.check {
        let mut failed = false;
        if r.steady_reloads == 0 {
            eprintln!(
                "check failed: no reloads after the {WARMUP_RELOADS} warm-up ones; run longer"
            );
            failed = true;
        }
        if r.steady_bytes > 0 {
            eprintln!("check failed: steady-state reloads allocated {steady_per_reload:.0} bytes per reload");
            failed = true;
        }
        if wrong > 0 {
            eprintln!("check failed: {wrong} reads returned a wrong value");
            failed = true;
        }
        if failed {
            return ExitCode::FAILURE;
        }
        println!("\ncheck passed: steady-state reloads allocated 0 bytes, all reads correct");
    }
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Option<Args>, String> {
        Args::parse(args.iter().map(|s| s.to_string()))
    }

    #[test]
    fn parses_defaults_and_flags() {
        let a = parse(&[]).unwrap().unwrap();
        assert_eq!((a.secs, a.readers, a.reload_ms, a.check), (3, 2, 5, false));
        assert_eq!(a.path, DEFAULT_PATH);
        let a = parse(&[
            "f.txt",
            "--secs",
            "7",
            "--readers=4",
            "--reload-ms",
            "0",
            "--check",
        ])
        .unwrap()
        .unwrap();
        assert_eq!(
            (a.path.as_str(), a.secs, a.readers, a.reload_ms, a.check),
            ("f.txt", 7, 4, 0, true)
        );
        assert!(parse(&["--help"]).unwrap().is_none());
    }

    #[test]
    fn rejects_bad_arguments() {
        for bad in [
            &["--secs"][..],
            &["--secs", "x"],
            &["--secs", "0"],
            &["--readers", "0"],
            &["--reload-ms", "-1"],
            &["--bogus"],
            &["a", "b"],
            &["--check=1"],
        ] {
            assert!(parse(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn sampler_never_grows() {
        let mut s = Sampler::new();
        for i in 0..(3 * SAMPLE_CAPACITY as u64) {
            s.record(i);
        }
        assert_eq!(s.samples.capacity(), SAMPLE_CAPACITY);
        assert!(s.samples.len() <= SAMPLE_CAPACITY);
        assert!(s.stride > INITIAL_SAMPLE_STRIDE);
    }

    #[test]
    fn xorshift_stays_in_range() {
        let mut r = XorShift::new(1);
        assert!((0..10_000).all(|_| r.below(7) < 7));
    }
}
