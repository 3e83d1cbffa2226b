//! # The read path on a small object
//!
//! N reader threads (1, 2, 4, 8, every power of two up to the cores available, and the
//! cores minus one) each acquire the current version of a small object
//! (`[u64; 8]`), read one word, and release it, while one writer thread publishes a new
//! version every millisecond. Time per op is Go's `RunParallel` definition: wall time /
//! total reads of all reader threads (so on a 2-core machine the 4- and 8-thread figures
//! measure throughput under oversubscription). The writer runs outside the count; its
//! allocations (arc-swap's `Arc` per store) do count in bytes per op.
//!
//! Strategies (criterion function names):
//!
//! | name                 | read                                     | write                        |
//! |----------------------|------------------------------------------|------------------------------|
//! | `poolswap`           | `acquire`, read, drop the guard          | `get_new`, fill, `update`    |
//! | `poolswap-cache`     | `Cache::load` (per-thread cache), read   | `get_new`, fill, `update`    |
//! | `arc-swap-load`      | `load`, read, drop the guard             | `store(Arc::new(..))`        |
//! | `arc-swap-cache`     | `Cache::load` (per-thread cache), read   | `store(Arc::new(..))`        |
//! | `rwlock-arc`         | clone the `Arc` under `std` read lock    | swap under the write lock    |
//! | `parking-lot-rwlock` | `parking_lot::RwLock<T>` read lock, read | write lock, overwrite        |
//! | `left-right`         | `enter`, read, drop the guard            | append op, `publish`         |
//!
//! poolswap's rows are named for the barrier mode the process chose
//! ([`poolswap::barrier_mode`]): `poolswap` and `poolswap-cache` with `membarrier`,
//! `poolswap-fence` and `poolswap-cache-fence` with `fence(SeqCst)` (run the bench with
//! `POOLSWAP_BARRIER=fence` for those; that run measures arc-swap's `load` again, as
//! `arc-swap-load-fence-run`, for a ratio taken within one run).
//!
//! A second group, `update`, times one `get_new` + fill + `update` with 2, 16 and 64 other
//! threads registered as readers (each has read once and is parked): the cost of the heavy
//! barrier and of the writer's scan of every thread's hazard slots.
//!
//! Bytes and allocations per op go to `target/bench-alloc/read.tsv`.
//!
//! ```text
//! cargo bench --bench read
//! cargo bench --bench read -- --test      # smoke run
//! cargo bench --bench read -- poolswap    # one strategy
//! POOLSWAP_BARRIER=fence cargo bench --bench read -- poolswap   # the fallback barrier
//! ```

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier, Mutex, RwLock};
use std::thread;
use std::time::Duration;

use arc_swap::{ArcSwap, Cache};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use left_right::{Absorb, ReadHandle, ReadHandleFactory, WriteHandle};
use poolswap::{BarrierMode, Container, Pool};

#[path = "../tests/support/counting_alloc.rs"]
mod counting_alloc;
mod support;

use support::Tally;

#[global_allocator]
static ALLOC: counting_alloc::Counting = counting_alloc::Counting;

/// The shared object: small, so that the cost measured is the synchronisation.
type Small = [u64; 8];

/// Reader thread counts: 1, 2, 4, 8, the powers of two up to the cores, and the cores
/// minus one (a writer's core left free).
fn readers() -> Vec<usize> {
    let cores = thread::available_parallelism().map_or(1, |n| n.get());
    let mut counts = vec![1, 2, 4, 8];
    counts.extend((4..).map(|k| 1 << k).take_while(|&n| n <= cores));
    counts.push(cores.saturating_sub(1).max(1));
    counts.sort_unstable();
    counts.dedup();
    counts
}
/// Pause between the writer's updates.
const WRITE_EVERY: Duration = Duration::from_millis(1);

/// One way of sharing the object between a writer and readers.
trait Strategy: Sync {
    /// Per-thread read state (a cache or a read handle); `()` for most.
    type Local;
    /// Builds a thread's read state, before the timed region.
    fn local(&self) -> Self::Local;
    /// Publishes a new version with every word set to `v`.
    fn write(&self, v: u64);
    /// Reads word `i` of the current version.
    fn read(&self, local: &mut Self::Local, i: usize) -> u64;
}

/// poolswap: recycled versions, refcounted.
struct PoolSwap(Container<Small>);

impl Strategy for PoolSwap {
    type Local = ();
    fn local(&self) {}
    fn write(&self, v: u64) {
        let mut new = self.0.get_new();
        *new = [v; 8];
        self.0.update(new);
    }
    fn read(&self, _: &mut (), i: usize) -> u64 {
        self.0.acquire()[i]
    }
}

/// poolswap through a per-thread `poolswap::Cache`.
struct PoolSwapCache(Arc<Container<Small>>);

impl Strategy for PoolSwapCache {
    type Local = poolswap::Cache<Small, Arc<Container<Small>>>;
    fn local(&self) -> Self::Local {
        poolswap::Cache::new(Arc::clone(&self.0))
    }
    fn write(&self, v: u64) {
        let mut new = self.0.get_new();
        *new = [v; 8];
        self.0.update(new);
    }
    fn read(&self, cache: &mut Self::Local, i: usize) -> u64 {
        cache.load()[i]
    }
}

/// arc-swap, `load` per read.
struct ArcSwapLoad(ArcSwap<Small>);

impl Strategy for ArcSwapLoad {
    type Local = ();
    fn local(&self) {}
    fn write(&self, v: u64) {
        self.0.store(Arc::new([v; 8]));
    }
    fn read(&self, _: &mut (), i: usize) -> u64 {
        self.0.load()[i]
    }
}

/// arc-swap through a per-thread `Cache`, which re-loads only when the version changed.
struct ArcSwapCache(Arc<ArcSwap<Small>>);

impl Strategy for ArcSwapCache {
    type Local = Cache<Arc<ArcSwap<Small>>, Arc<Small>>;
    fn local(&self) -> Self::Local {
        Cache::new(Arc::clone(&self.0))
    }
    fn write(&self, v: u64) {
        self.0.store(Arc::new([v; 8]));
    }
    fn read(&self, cache: &mut Self::Local, i: usize) -> u64 {
        cache.load()[i]
    }
}

/// `std::sync::RwLock<Arc<T>>`: clone the `Arc` under the read lock.
struct RwLockArc(RwLock<Arc<Small>>);

impl Strategy for RwLockArc {
    type Local = ();
    fn local(&self) {}
    fn write(&self, v: u64) {
        let new = Arc::new([v; 8]);
        let old = std::mem::replace(&mut *self.0.write().unwrap(), new);
        drop(old);
    }
    fn read(&self, _: &mut (), i: usize) -> u64 {
        let current = Arc::clone(&self.0.read().unwrap());
        current[i]
    }
}

/// `parking_lot::RwLock<T>`: read under the lock, overwrite in place.
struct ParkingLotRwLock(parking_lot::RwLock<Small>);

impl Strategy for ParkingLotRwLock {
    type Local = ();
    fn local(&self) {}
    fn write(&self, v: u64) {
        *self.0.write() = [v; 8];
    }
    fn read(&self, _: &mut (), i: usize) -> u64 {
        self.0.read()[i]
    }
}

/// left-right's copy of the object.
#[derive(Clone)]
struct LrSmall(Small);

impl Absorb<u64> for LrSmall {
    fn absorb_first(&mut self, v: &mut u64, _: &Self) {
        self.0 = [*v; 8];
    }
    fn sync_with(&mut self, first: &Self) {
        self.0 = first.0;
    }
}

/// left-right: per-thread read handles; the one write handle sits in a mutex that only
/// the writer thread takes.
struct LeftRight {
    writer: Mutex<WriteHandle<LrSmall, u64>>,
    readers: ReadHandleFactory<LrSmall>,
}

impl Strategy for LeftRight {
    type Local = ReadHandle<LrSmall>;
    fn local(&self) -> Self::Local {
        self.readers.handle()
    }
    fn write(&self, v: u64) {
        self.writer.lock().unwrap().append(v).publish();
    }
    fn read(&self, local: &mut Self::Local, i: usize) -> u64 {
        local.enter().map_or(0, |g| g.0[i])
    }
}

/// Benchmarks one strategy with `readers` reader threads and records its allocations.
fn bench<S: Strategy>(c: &mut Criterion, name: &str, readers: usize, strategy: &S) {
    let parameter = format!("t{readers}");
    let mut tally = Tally::default();
    let mut g = c.benchmark_group("read");
    g.bench_function(BenchmarkId::new(name, &parameter), |b| {
        b.iter_custom(|ops| {
            let reader = |_: usize, n: u64, start: &Barrier| {
                let mut local = strategy.local();
                start.wait();
                for k in 0..n {
                    black_box(strategy.read(&mut local, k as usize % 8));
                }
            };
            let writer = |stop: &AtomicBool| {
                let mut v = 0;
                while !stop.load(Ordering::Relaxed) {
                    thread::sleep(WRITE_EVERY);
                    v += 1;
                    strategy.write(v);
                }
            };
            support::parallel(ops, readers, &mut tally, reader, writer)
        });
    });
    g.finish();
    support::record("read", "read", name, &parameter, &tally, None);
}

/// Runs `strategy` at every reader count.
fn bench_all<S: Strategy>(c: &mut Criterion, name: &str, strategy: S) {
    for readers in readers() {
        bench(c, name, readers, &strategy);
    }
}

fn read(c: &mut Criterion) {
    let pool = Pool::new(|| [0; 8], |_: &mut Small| true);
    let init = pool.get();
    let container = Container::new(&pool, init);
    // Named for the barrier mode, chosen when the first container was made (just now).
    let fence = poolswap::barrier_mode() == BarrierMode::Fence;
    let suffix = if fence { "-fence" } else { "" };
    bench_all(c, &format!("poolswap{suffix}"), PoolSwap(container));
    let init = pool.get();
    bench_all(
        c,
        &format!("poolswap-cache{suffix}"),
        PoolSwapCache(Arc::new(Container::new(&pool, init))),
    );
    if fence {
        // The peers do not depend on the mode: measured in the default run; arc-swap's
        // `load` once more here, so that the fallback's ratio comes from one run.
        bench_all(
            c,
            "arc-swap-load-fence-run",
            ArcSwapLoad(ArcSwap::from_pointee([0; 8])),
        );
        return;
    }
    bench_all(
        c,
        "arc-swap-load",
        ArcSwapLoad(ArcSwap::from_pointee([0; 8])),
    );
    bench_all(
        c,
        "arc-swap-cache",
        ArcSwapCache(Arc::new(ArcSwap::from_pointee([0; 8]))),
    );
    bench_all(c, "rwlock-arc", RwLockArc(RwLock::new(Arc::new([0; 8]))));
    bench_all(
        c,
        "parking-lot-rwlock",
        ParkingLotRwLock(parking_lot::RwLock::new([0; 8])),
    );
    let (mut writer, reader) = left_right::new_from_empty(LrSmall([0; 8]));
    writer.publish();
    bench_all(
        c,
        "left-right",
        LeftRight {
            writer: Mutex::new(writer),
            readers: reader.factory(),
        },
    );
}

/// One update's cost with `others` other threads registered as readers, parked.
fn update(c: &mut Criterion) {
    let pool = Pool::new(|| [0; 8], |_: &mut Small| true);
    let init = pool.get();
    let container = Container::new(&pool, init);
    let suffix = match poolswap::barrier_mode() {
        BarrierMode::Fence => "-fence",
        BarrierMode::Membarrier => "",
    };
    let mut g = c.benchmark_group("update");
    for others in [2, 16, 64] {
        let done = Barrier::new(others + 1);
        let registered = Barrier::new(others + 1);
        thread::scope(|s| {
            for _ in 0..others {
                s.spawn(|| {
                    drop(black_box(container.acquire()));
                    registered.wait();
                    done.wait();
                });
            }
            registered.wait();
            let mut tally = Tally::default();
            let parameter = format!("t{others}");
            g.bench_function(
                BenchmarkId::new(format!("poolswap{suffix}"), &parameter),
                |b| {
                    let mut v = 0;
                    b.iter_custom(|ops| {
                        support::serial(ops, &mut tally, || {
                            v += 1;
                            let mut new = container.get_new();
                            *new = [v; 8];
                            container.update(new);
                        })
                    });
                },
            );
            support::record(
                "read",
                "update",
                &format!("poolswap{suffix}"),
                &parameter,
                &tally,
                None,
            );
            done.wait();
        });
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = support::criterion();
    targets = read, update
}
criterion_main!(benches);
