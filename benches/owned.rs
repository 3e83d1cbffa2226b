//! # Owned data inside a version: a routing table rebuilt from text on every update
//!
//! A `HashMap<String, Vec<String>>` of 1,000 routes × 3 backends, parsed
//! from text (`route-K=backend-K-V-a,backend-K-V-b,backend-K-V-c`, one line per route) on
//! every update and published, while 4 reader threads look up random routes in the
//! current version. The text alternates between two versions `V`, so every update
//! publishes different content. Criterion function names (group `owned`):
//!
//! | name                | version type                  | pool reset / write                        |
//! |---------------------|-------------------------------|-------------------------------------------|
//! | `poolswap-recycled` | `Recycled<HashMap<..>>`       | `r.clear()`: nested buffers to its free lists, refilled from them |
//! | `poolswap-clear`    | `HashMap<..>`                 | `m.clear()`: keeps the table, drops every `String` and `Vec` |
//! | `arc-swap`          | `HashMap<..>`                 | a fresh pre-sized map per update, `store(Arc::new(map))` |
//!
//! One op is one update (take a version, parse the text into it, publish), timed on
//! criterion's thread while the readers run: on a machine with fewer than 5 cores they
//! share the cores with the writer, and the time per update includes that.
//!
//! Besides time, allocations and bytes per update go to `target/bench-alloc/owned.tsv`
//! and stderr (counting global allocator, process-wide, readers included, criterion's
//! warm-up included; see `benches/support/mod.rs`), with the versions the pool's factory
//! built. Then [`STEADY_UPDATES`] more updates are counted alone, readers still running,
//! and printed as the steady state. Each reader checks every answer (3 backends) and the
//! bench fails if one was wrong.
//!
//! ```text
//! cargo bench -p poolswap-benches --bench owned
//! # smoke run: each variant once
//! cargo bench -p poolswap-benches --bench owned -- --test
//! # the renewal series instead (below)
//! OWNED_SERIES=24000 cargo bench -p poolswap-benches --bench owned
//! ```
//!
//! With `OWNED_SERIES=<updates>` set, criterion does not run; the bench prints two series
//! instead, to see what the free lists' renewal and idle release do in the long run:
//!
//! 1. *Long run*: the `poolswap-recycled` variant, readers running, for `<updates>` updates
//!    (past the renewal onset: a reuse budget is 5,000 to 6,000 takes by default); every
//!    2,000 updates, the allocations per update in those 2,000 (process-wide) and the
//!    current version's free-list stats.
//! 2. *Burst then drain*: one `Recycled<Vec<String>>` built once with
//!    1,000 × 64 KiB strings, then `<updates>` builds of 4 short strings; at chosen update
//!    counts, the bytes its free lists keep spare after a build, against the bytes the build's
//!    own buffers hold (*live*).

use std::collections::HashMap;
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;
use criterion::{criterion_group, criterion_main, Criterion};
use poolswap::recycle::FreeLists;
use poolswap::{Container, Pool, Recycled};

#[path = "../tests/support/counting_alloc.rs"]
mod counting_alloc;
mod support;

use counting_alloc::Snapshot;
use support::Tally;

#[global_allocator]
static ALLOC: counting_alloc::Counting = counting_alloc::Counting;

/// Routes in the table (3 backends each).
const ROUTES: usize = 1_000;
/// Reader threads looking up random routes during every measurement.
const READERS: usize = 4;
/// Updates counted alone after criterion's run, for the steady state.
const STEADY_UPDATES: u64 = 1_000;

/// The shared object.
type Table = HashMap<String, Vec<String>>;

/// The two texts updates alternate between, made once.
fn texts() -> &'static [String; 2] {
    static TEXTS: OnceLock<[String; 2]> = OnceLock::new();
    TEXTS.get_or_init(|| {
        [0, 1].map(|v| {
            (0..ROUTES)
                .map(|k| {
                    format!("route-{k}=backend-{k}-{v}-a,backend-{k}-{v}-b,backend-{k}-{v}-c\n")
                })
                .collect()
        })
    })
}

/// The route names readers look up, made once (`route-0` .. `route-999`).
fn keys() -> &'static [String] {
    static KEYS: OnceLock<Vec<String>> = OnceLock::new();
    KEYS.get_or_init(|| (0..ROUTES).map(|k| format!("route-{k}")).collect())
}

/// Each line of `text` as its route and its backends.
fn lines(text: &str) -> impl Iterator<Item = (&str, std::str::Split<'_, char>)> {
    text.lines().map(|line| {
        let (key, backends) = line.split_once('=').expect("key=backends");
        (key, backends.split(','))
    })
}

/// Parses `text` into `map`, taking every `String` and `Vec` from `lists`.
fn refill_from_lists(map: &mut Table, lists: &mut FreeLists, text: &str) {
    for (key, backends) in lines(text) {
        let mut list: Vec<String> = lists.take();
        list.extend(backends.map(|b| lists.string_from(b)));
        map.insert(lists.string_from(key), list);
    }
}

/// Parses `text` into `map`, allocating every `String` and `Vec`.
fn refill_fresh(map: &mut Table, text: &str) {
    for (key, backends) in lines(text) {
        map.insert(key.to_owned(), backends.map(str::to_owned).collect());
    }
}

/// One way of publishing the table.
trait Strategy: Sync {
    /// Builds a version from `text` and publishes it.
    fn update(&self, text: &str);
    /// The number of backends of `key` in the current version (3; 0 if missing).
    fn lookup(&self, key: &str) -> usize;
    /// Versions the pool's factory built so far (0 without a pool).
    fn built(&self) -> u64 {
        0
    }
}

/// poolswap, each version a `Recycled` map with its own free lists.
struct Recycling {
    routes: Container<Recycled<Table>>,
    built: Arc<AtomicU64>,
}

impl Recycling {
    fn new() -> Self {
        let built = Arc::new(AtomicU64::new(0));
        let counter = Arc::clone(&built);
        let pool = Pool::new(
            move || {
                counter.fetch_add(1, Relaxed);
                Recycled::<Table>::default()
            },
            |r| {
                r.clear();
                true
            },
        );
        let mut first = pool.get();
        let (map, lists) = Recycled::parts_mut(&mut first);
        refill_from_lists(map, lists, &texts()[0]);
        Recycling {
            routes: Container::new(&pool, first),
            built,
        }
    }
}

impl Strategy for Recycling {
    fn update(&self, text: &str) {
        let mut next = self.routes.get_new();
        let (map, lists) = Recycled::parts_mut(&mut next);
        refill_from_lists(map, lists, text);
        self.routes.update(next);
    }
    fn lookup(&self, key: &str) -> usize {
        self.routes.acquire().get(key).map_or(0, Vec::len)
    }
    fn built(&self) -> u64 {
        self.built.load(Relaxed)
    }
}

/// poolswap, each version a plain map reset with `clear()`.
struct Clearing {
    routes: Container<Table>,
    built: Arc<AtomicU64>,
}

impl Clearing {
    fn new() -> Self {
        let built = Arc::new(AtomicU64::new(0));
        let counter = Arc::clone(&built);
        let pool = Pool::new(
            move || {
                counter.fetch_add(1, Relaxed);
                Table::new()
            },
            |m: &mut Table| {
                m.clear();
                true
            },
        );
        let mut first = pool.get();
        refill_fresh(&mut first, &texts()[0]);
        Clearing {
            routes: Container::new(&pool, first),
            built,
        }
    }
}

impl Strategy for Clearing {
    fn update(&self, text: &str) {
        let mut next = self.routes.get_new();
        refill_fresh(&mut next, text);
        self.routes.update(next);
    }
    fn lookup(&self, key: &str) -> usize {
        self.routes.acquire().get(key).map_or(0, Vec::len)
    }
    fn built(&self) -> u64 {
        self.built.load(Relaxed)
    }
}

/// arc-swap: a fresh map per update (pre-sized, as the heavy bench's).
struct Fresh(ArcSwap<Table>);

impl Fresh {
    fn new() -> Self {
        Fresh(ArcSwap::from_pointee(Self::build(&texts()[0])))
    }
    fn build(text: &str) -> Table {
        let mut map = Table::with_capacity(ROUTES);
        refill_fresh(&mut map, text);
        map
    }
}

impl Strategy for Fresh {
    fn update(&self, text: &str) {
        self.0.store(Arc::new(Self::build(text)));
    }
    fn lookup(&self, key: &str) -> usize {
        self.0.load().get(key).map_or(0, Vec::len)
    }
}

/// Makes the calling thread wait on a `parking_lot` lock once: its first wait allocates
/// the thread's parking data (see tests/alloc.rs), a one-time cost to pay before measuring.
fn warm_parking_lot() {
    let lock = parking_lot::Mutex::new(());
    let ready = parking_lot::Condvar::new();
    let mut guard = lock.lock();
    let _ = ready.wait_for(&mut guard, Duration::from_micros(1));
}

/// One reader: random lookups until `stop`; returns (reads, wrong answers).
fn reader<S: Strategy>(strategy: &S, t: usize, stop: &AtomicBool) -> (u64, u64) {
    warm_parking_lot();
    let mut rng = support::seed(0, t);
    let (mut reads, mut wrong) = (0u64, 0u64);
    while !stop.load(Relaxed) {
        let key = &keys()[(support::xorshift(&mut rng) >> 32) as usize % ROUTES];
        wrong += u64::from(black_box(strategy.lookup(key)) != 3);
        reads += 1;
    }
    (reads, wrong)
}

/// Benchmarks one strategy with [`READERS`] readers running, and records its allocations.
fn bench<S: Strategy>(c: &mut Criterion, name: &str, strategy: &S) {
    let stop = AtomicBool::new(false);
    let mut version = 0usize;
    let mut update = || {
        version += 1;
        strategy.update(&texts()[version % 2]);
    };
    let (reads, wrong) = thread::scope(|s| {
        let readers: Vec<_> = (0..READERS)
            .map(|t| {
                let stop = &stop;
                s.spawn(move || reader(strategy, t, stop))
            })
            .collect();

        let mut tally = Tally::default();
        c.benchmark_group("owned").bench_function(name, |b| {
            b.iter_custom(|ops| support::serial(ops, &mut tally, &mut update))
        });
        tally.extra = strategy.built();
        support::record("owned", "owned", name, "", &tally, Some("versions built"));

        if tally.ops > 0 && !support::test_mode() {
            // The tally above includes warm-up (the first updates fill the pool and the
            // free lists); this is the steady state alone, readers still running.
            let before = Snapshot::now();
            let t0 = Instant::now();
            for _ in 0..STEADY_UPDATES {
                update();
            }
            let elapsed = t0.elapsed();
            let a = Snapshot::since(before);
            let n = STEADY_UPDATES as f64;
            eprintln!(
                "owned/{name}: steady state {:.1} us/update, {:.4} allocs/update, {:.1} B/update \
                 ({} allocs in {STEADY_UPDATES} updates after the run, {READERS} readers; {} versions built)",
                elapsed.as_secs_f64() * 1e6 / n,
                a.allocs as f64 / n,
                a.bytes as f64 / n,
                a.allocs,
                strategy.built(),
            );
        }
        stop.store(true, Relaxed);
        readers
            .into_iter()
            .map(|h| h.join().expect("reader panicked"))
            .fold((0, 0), |(r, w), (r1, w1)| (r + r1, w + w1))
    });
    // Every route of the last version is whole.
    assert!(keys().iter().all(|k| strategy.lookup(k) == 3));
    assert_eq!(
        wrong, 0,
        "{name}: {wrong} of {reads} reads got a wrong answer"
    );
}

/// Updates between two rows of the long-run series.
const SERIES_STEP: u64 = 2_000;

/// `OWNED_SERIES=<updates>`: the number of updates of the series, if asked for.
fn series_updates() -> Option<u64> {
    let v = std::env::var("OWNED_SERIES").ok()?;
    Some(v.parse().expect("OWNED_SERIES=<updates>"))
}

/// The long-run series: allocations per update and the current version's free lists, every
/// [`SERIES_STEP`] updates, readers running.
fn long_run_series(updates: u64) {
    let strategy = Recycling::new();
    let stop = AtomicBool::new(false);
    thread::scope(|s| {
        for t in 0..READERS {
            let (strategy, stop) = (&strategy, &stop);
            s.spawn(move || reader(strategy, t, stop));
        }
        eprintln!("long run: {ROUTES} routes x 3 backends, {READERS} readers");
        eprintln!("updates\tallocs/update\tspare\tspare bytes\trenewed\tversions built");
        let mut done = 0u64;
        while done < updates {
            let before = Snapshot::now();
            for _ in 0..SERIES_STEP {
                done += 1;
                strategy.update(&texts()[(done % 2) as usize]);
            }
            let a = Snapshot::since(before);
            let stats = Recycled::free_lists(&strategy.routes.acquire()).stats();
            eprintln!(
                "{done}\t{:.4}\t{}\t{}\t{}\t{}",
                a.allocs as f64 / SERIES_STEP as f64,
                stats.spare,
                stats.spare_bytes,
                stats.renewed,
                strategy.built()
            );
        }
        stop.store(true, Relaxed);
    });
}

/// The burst-then-drain series: one 1,000 x 64 KiB build, then `updates` builds of 4 short
/// strings; the spare bytes after chosen builds.
fn burst_series(updates: u64) {
    let mut r = Recycled::new(Vec::<String>::new());
    r.extend((0..1_000).map(|_| String::with_capacity(64 << 10)));
    eprintln!("burst: 1,000 x 64 KiB strings once, then builds of 4 short strings");
    eprintln!("updates\tspare\tspare bytes\tlive bytes\trenewed");
    let rows = [
        0u64, 100, 200, 500, 1_000, 2_000, 5_000, 6_000, 10_000, 15_000, 20_000, 40_000, 80_000,
    ];
    for n in 1..=updates {
        r.clear();
        let (list, lists) = Recycled::parts_mut(&mut r);
        for i in 0..4 {
            list.push(lists.string_from(["a", "bb", "ccc", "dddd"][i]));
        }
        if rows.contains(&n) || n == updates {
            let stats = Recycled::free_lists(&r).stats();
            let live: usize = r.capacity() * std::mem::size_of::<String>()
                + r.iter().map(String::capacity).sum::<usize>();
            eprintln!(
                "{n}\t{}\t{}\t{live}\t{}",
                stats.spare, stats.spare_bytes, stats.renewed
            );
        }
    }
}

fn owned(c: &mut Criterion) {
    texts();
    keys(); // made before anything is counted
    if let Some(updates) = series_updates() {
        long_run_series(updates);
        burst_series(updates);
        return;
    }
    let recycling = Recycling::new();
    bench(c, "poolswap-recycled", &recycling);
    // Whether renewal had started (a reuse budget is 5,000 to 6,000 takes, and each
    // position of a version's free lists is taken once per refill of it; a spent budget
    // renews only a buffer much larger than its last use, none in this table).
    eprintln!(
        "owned/poolswap-recycled: the current version's free lists: {:?}",
        Recycled::free_lists(&recycling.routes.acquire()).stats()
    );
    bench(c, "poolswap-clear", &Clearing::new());
    bench(c, "arc-swap", &Fresh::new());
}

criterion_group! {
    name = benches;
    config = support::criterion();
    targets = owned
}
criterion_main!(benches);
