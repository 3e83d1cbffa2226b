//! # The heavy-object benchmark: the Go original's, ported
//!
//! A `HashMap<&'static str, &'static str>` of 100,000 entries (keys `"0"`..`"99999"`,
//! values `"value-N"`) is shared by two threads (one per core on the reference machine)
//! that each run a random mix of operations, as Go's `b.RunParallel` does:
//!
//! - a **write** (1%, 10% or 50% of operations) produces a new version: refill a map with
//!   all 100,000 entries and publish it. Keys and values are `&'static str` built once, so
//!   a fill is hashing and inserting, as in Go, not string allocation; every new map is
//!   pre-sized for 100,000 entries;
//! - a **read** looks up one random key in the current version.
//!
//! The mix comes from a per-thread xorshift generator, so it is the same for every
//! strategy. Strategies (criterion function names):
//!
//! | name             | write                                          | read                          |
//! |------------------|------------------------------------------------|-------------------------------|
//! | `poolswap`       | `get_new`, fill, `update`                      | `acquire`, look up, release   |
//! | `poolswap-foldhash` | the same, the map hashed with foldhash's fast hasher instead of std's SipHash | the same |
//! | `arc-swap`       | fill a fresh map, `store(Arc::new(map))`       | `load`, look up               |
//! | `rwlock-arc`     | fill a fresh map, swap it in under write lock  | clone the `Arc` under read lock, look up |
//! | `rwlock-inplace` | write lock, `clear`, refill in place           | read lock, look up            |
//! | `left-right`     | one op = clear + refill, `publish` (applied to both copies) | `enter`, look up |
//!
//! Time per op is Go's `RunParallel` definition: wall time / total operations of all
//! threads (two; and sixteen too, as `w<pct>-t16`, on a machine with 16 cores or more). Bytes and allocations per op come from the counting global allocator and go
//! to `target/bench-alloc/heavy.tsv` (see `benches/support/mod.rs`).
//!
//! The allocator setting is part of the criterion group name, `heavy-<setting>`: `default`,
//! or `mmap<N>` when the process runs with `MALLOC_MMAP_THRESHOLD_=<N>` (glibc then
//! serves every block of N bytes or more straight from the OS and gives it back on free,
//! as in a memory-capped container; this stands in for the Go benchmark's GOMEMLIMIT).
//!
//! ```text
//! # glibc defaults
//! cargo bench -p poolswap-benches --bench heavy
//! # tight memory
//! MALLOC_MMAP_THRESHOLD_=131072 cargo bench -p poolswap-benches --bench heavy
//! # smoke run: each op once
//! cargo bench -p poolswap-benches --bench heavy -- --test
//! ```
//!
//! `scripts/bench.sh` runs both and writes the README's tables.
//!
//! Every strategy but `poolswap-foldhash` hashes with std's `RandomState` (SipHash-1-3,
//! keyed per map): what a `HashMap` uses unless told otherwise. Go's map hashes with AES
//! instructions where the CPU has them, so the Go original's benchmark
//! (`compare/go/`) fills its map with a faster hash; `poolswap-foldhash` is the same
//! strategy with a hasher of that class (foldhash, as `hashbrown` uses by default), to show
//! what of the difference is the hash.

use std::collections::hash_map::RandomState;
use std::collections::HashMap;
use std::hash::BuildHasher;
use std::hint::black_box;
use std::sync::{Arc, Mutex, RwLock};

use arc_swap::ArcSwap;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, SamplingMode};
use left_right::{Absorb, ReadHandle, ReadHandleFactory, WriteHandle};
use poolswap::{Container, Pool};

#[path = "../tests/support/counting_alloc.rs"]
mod counting_alloc;
mod support;

use support::{entries, Tally, ENTRIES};

#[global_allocator]
static ALLOC: counting_alloc::Counting = counting_alloc::Counting;

/// The shared object.
type Map = HashMap<&'static str, &'static str>;

/// Threads running operations (`RunParallel` uses one per core; the reference machine has
/// 2): 2, and 16 as well where 16 cores are available (parameter `w<pct>-t16`).
fn thread_counts() -> Vec<usize> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cores >= 16 {
        vec![2, 16]
    } else {
        vec![2]
    }
}
/// Percentages of operations that are writes.
const WRITE_PCTS: [u64; 3] = [1, 10, 50];

/// Inserts every entry: the work of one write.
fn fill<S: BuildHasher>(map: &mut HashMap<&'static str, &'static str, S>) {
    for &(k, v) in entries() {
        map.insert(k, v);
    }
}

/// A fresh, pre-sized, full map: what the pointer-swap strategies allocate per write.
fn filled() -> Map {
    let mut map = Map::with_capacity(ENTRIES);
    fill(&mut map);
    map
}

/// One way of sharing the map between a writer and readers.
trait Strategy: Sync {
    /// Per-thread read state (left-right's read handle); `()` for most.
    type Local;
    /// Builds a thread's read state, before the timed region.
    fn local(&self) -> Self::Local;
    /// Publishes a new, fully refilled version.
    fn write(&self);
    /// Looks `key` up in the current version.
    fn read(&self, local: &mut Self::Local, key: &str) -> Option<&'static str>;
}

/// poolswap: recycled maps, refcounted versions; `S` is the maps' hasher.
struct PoolSwap<S = RandomState>(Container<HashMap<&'static str, &'static str, S>>);

impl<S: BuildHasher + Default + Send + Sync + 'static> PoolSwap<S> {
    fn new() -> Self {
        let pool = Pool::new(
            || HashMap::with_capacity_and_hasher(ENTRIES, S::default()),
            |m: &mut HashMap<&'static str, &'static str, S>| {
                m.clear();
                true
            },
        );
        let mut init = pool.get();
        fill(&mut init);
        PoolSwap(Container::new(&pool, init))
    }
}

impl<S: BuildHasher + Default + Send + Sync + 'static> Strategy for PoolSwap<S> {
    type Local = ();
    fn local(&self) {}
    fn write(&self) {
        let mut map = self.0.get_new();
        fill(&mut map);
        self.0.update(map);
    }
    fn read(&self, _: &mut (), key: &str) -> Option<&'static str> {
        self.0.acquire().get(key).copied()
    }
}

/// arc-swap: a fresh `Arc<Map>` per write (Go's `atomic.Pointer`).
struct ArcSwapMap(ArcSwap<Map>);

impl Strategy for ArcSwapMap {
    type Local = ();
    fn local(&self) {}
    fn write(&self) {
        self.0.store(Arc::new(filled()));
    }
    fn read(&self, _: &mut (), key: &str) -> Option<&'static str> {
        self.0.load().get(key).copied()
    }
}

/// `RwLock<Arc<Map>>`: a fresh map per write, swapped under the lock (Go's `RWMutexSwap`).
struct RwLockArc(RwLock<Arc<Map>>);

impl Strategy for RwLockArc {
    type Local = ();
    fn local(&self) {}
    fn write(&self) {
        let new = Arc::new(filled());
        let old = std::mem::replace(&mut *self.0.write().unwrap(), new);
        drop(old); // outside the lock; frees the map unless a reader still holds it
    }
    fn read(&self, _: &mut (), key: &str) -> Option<&'static str> {
        let map = Arc::clone(&self.0.read().unwrap());
        map.get(key).copied()
    }
}

/// `RwLock<Map>`: one map, cleared and refilled under the write lock (Go's `RWMutexInPlace`).
struct RwLockInPlace(RwLock<Map>);

impl Strategy for RwLockInPlace {
    type Local = ();
    fn local(&self) {}
    fn write(&self) {
        let mut map = self.0.write().unwrap();
        map.clear();
        fill(&mut map);
    }
    fn read(&self, _: &mut (), key: &str) -> Option<&'static str> {
        self.0.read().unwrap().get(key).copied()
    }
}

/// left-right's copy of the map.
#[derive(Clone)]
struct LrMap(Map);

/// left-right's only operation: clear and refill.
struct Refill;

impl Absorb<Refill> for LrMap {
    fn absorb_first(&mut self, _: &mut Refill, _: &Self) {
        self.0.clear();
        fill(&mut self.0);
    }
    fn sync_with(&mut self, first: &Self) {
        self.0.clone_from(&first.0);
    }
}

/// left-right: two maps; a write applies the refill to one, publishes, waits for readers
/// to leave the other, and applies it there on the next publish. The single write handle
/// is shared by both threads under a mutex.
struct LeftRight {
    writer: Mutex<WriteHandle<LrMap, Refill>>,
    readers: ReadHandleFactory<LrMap>,
}

impl LeftRight {
    fn new() -> Self {
        let (mut writer, reader) = left_right::new_from_empty(LrMap(Map::with_capacity(ENTRIES)));
        writer.append(Refill).publish();
        LeftRight {
            writer: Mutex::new(writer),
            readers: reader.factory(),
        }
    }
}

impl Strategy for LeftRight {
    type Local = ReadHandle<LrMap>;
    fn local(&self) -> ReadHandle<LrMap> {
        self.readers.handle()
    }
    fn write(&self) {
        self.writer.lock().unwrap().append(Refill).publish();
    }
    fn read(&self, local: &mut ReadHandle<LrMap>, key: &str) -> Option<&'static str> {
        local.enter().and_then(|m| m.0.get(key).copied())
    }
}

/// The allocator setting this process runs under, for group names.
fn setting() -> String {
    match std::env::var("MALLOC_MMAP_THRESHOLD_") {
        Ok(n) => format!("mmap{n}"),
        Err(_) => "default".to_owned(),
    }
}

/// Benchmarks one strategy at one write percentage and records its allocations.
fn bench<S: Strategy>(c: &mut Criterion, group: &str, name: &str, pct: u64, strategy: S) {
    for threads in thread_counts() {
        bench_threads(c, group, name, pct, threads, &strategy);
    }
}

/// [`bench`] with `threads` threads.
fn bench_threads<S: Strategy>(
    c: &mut Criterion,
    group: &str,
    name: &str,
    pct: u64,
    threads: usize,
    strategy: &S,
) {
    let parameter = match threads {
        2 => format!("w{pct}"),
        n => format!("w{pct}-t{n}"),
    };
    let mut tally = Tally::default();
    let mut g = c.benchmark_group(group);
    // Ten samples, as every bench (`support::criterion`), but longer: an op takes ms.
    g.warm_up_time(support::secs(2.0))
        .measurement_time(support::secs(10.0))
        .sampling_mode(SamplingMode::Flat);
    g.bench_function(BenchmarkId::new(name, &parameter), |b| {
        b.iter_custom(|ops| {
            let batch = tally.batches;
            let worker = |t: usize, n: u64, start: &std::sync::Barrier| {
                let mut local = strategy.local();
                let mut rng = support::seed(batch, t);
                start.wait();
                for _ in 0..n {
                    let r = support::xorshift(&mut rng);
                    if r % 100 < pct {
                        strategy.write();
                    } else {
                        let key = entries()[(r >> 32) as usize % ENTRIES].0;
                        black_box(strategy.read(&mut local, key));
                    }
                }
            };
            support::parallel(ops, threads, &mut tally, worker, support::idle)
        });
    });
    g.finish();
    support::record("heavy", group, name, &parameter, &tally, None);
}

fn heavy(c: &mut Criterion) {
    entries(); // build the keys before anything is timed
    let group = format!("heavy-{}", setting());
    for pct in WRITE_PCTS {
        bench(c, &group, "poolswap", pct, PoolSwap::<RandomState>::new());
        bench(
            c,
            &group,
            "poolswap-foldhash",
            pct,
            PoolSwap::<foldhash::fast::RandomState>::new(),
        );
        bench(
            c,
            &group,
            "arc-swap",
            pct,
            ArcSwapMap(ArcSwap::from_pointee(filled())),
        );
        bench(
            c,
            &group,
            "rwlock-arc",
            pct,
            RwLockArc(RwLock::new(Arc::new(filled()))),
        );
        bench(
            c,
            &group,
            "rwlock-inplace",
            pct,
            RwLockInPlace(RwLock::new(filled())),
        );
        bench(c, &group, "left-right", pct, LeftRight::new());
    }
}

criterion_group! {
    name = benches;
    config = support::criterion();
    targets = heavy
}
criterion_main!(benches);
