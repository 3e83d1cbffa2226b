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
//! (`POOLSWAP_BARRIER=fence` forces the fence mode): `poolswap` and `poolswap-cache` with `membarrier`,
//! `poolswap-fence` and `poolswap-cache-fence` with `fence(SeqCst)` (run the bench with
//! `POOLSWAP_BARRIER=fence` for those; that run measures arc-swap's `load` again, as
//! `arc-swap-load-fence-run`, for a ratio taken within one run).
//!
//! # Writers, reclamation and held guards (issue 19)
//!
//! The other groups time what a reclamation costs and who pays it. Unless a row says
//! otherwise, "an update" is one `get_new` + fill + `update` of a `[u64; 8]` on the bench's
//! thread; a writer whose pool has nothing idle reclaims inside `get_new`, and an update
//! that leaves 8 versions retired reclaims inside `update`,
//! so both are in the figure. The pools start empty, so a lone writer's `get_new` misses,
//! and reclaims, on nearly every update (its pool holds the current version and the one
//! just retired). poolswap rows take the `-fence` suffix as
//! above.
//!
//! | group / function / parameter        | what is timed                                                                         | target (issues 19, 34)    |
//! |-------------------------------------|---------------------------------------------------------------------------------------|---------------------------|
//! | `update/poolswap/t{2,16,64}`        | an update, N other threads registered as readers (read once), parked, holding nothing | ≤ 400 ns at 64, ≤ 1.2× t2 |
//! | `update-held/poolswap/t64`          | an update, 64 parked threads each holding 8 guards on the same 8 old versions         | ≤ 5 µs                    |
//! | `update-held/poolswap/distinct512`  | an update, 64 parked threads each holding guards on 8 old versions of its own (512)   | ≤ 10× `update/…/t64`      |
//! | `update-held/poolswap/distinct4096` | an update, 1 parked thread holding guards on 4,096 different old versions             | ≤ 10× `update/…/t2`       |
//! | `update-active/poolswap/t1`         | an update, one reader thread spinning `acquire`, read, drop on the same container     | ≤ 1 µs                    |
//! | `update-two/poolswap/one`           | an update of one container (its own pool) on one thread                               | –                         |
//! | `update-two/poolswap/two`           | one update on each of two containers (own pools), on two threads at once              | ≥ 1.8× `one`'s updates/s  |
//! | `drop/poolswap`                     | dropping the last guard on a retired `Vec<u64>` of 1,000 words                        | p99 ≤ 100 ns              |
//! | `drop/arc-swap`                     | dropping the last `Arc` of a `Vec<u64>` of 1,000 words (frees it)                     | –                         |
//! | `many-guards/poolswap/held{1,64}`   | `acquire` + drop on one container while the thread holds guards on 1 or 64 others     | held64 ≤ 2× held1         |
//!
//! - `update-held` builds the held versions in 8 rounds (every thread acquires one guard,
//!   then the writer updates), so those 8 versions stay on the retired list for the whole
//!   row and every update after the threshold runs a reclamation that finds them held.
//!   The `distinct` rows build them one at a time (one thread acquires, then the writer
//!   updates), so no two guards share a version: every pass finds 512 or 4,096 versions
//!   held, and the automatic passes wait for as many retirements before the next. The
//!   4,096 guards of one thread are counted past its 128 hazard slots.
//! - `update-two`: criterion's throughput is in updates (1 per iteration for `one`, 2 for
//!   `two`); the ratio of the two rows' updates per second (from the batches' own clock)
//!   is printed and appended to `bench-alloc/update-two.tsv`. The second thread lives for
//!   the whole row and is released for each batch through a barrier.
//! - `drop`: a batch drops up to [`HAZARD_SLOTS`] values at once between two
//!   clock readings (a thread's guards beyond that many are counted, a different path),
//!   after setting them up untimed: poolswap acquires a guard, updates (which retires the
//!   version the guard holds) and checks that the guard holds a hazard slot; arc-swap takes
//!   `load_full`, stores a new `Arc` and checks that the loaded one is the last. poolswap's
//!   setup reclaims before each batch, so the pool stays at a handful of versions. On the
//!   first call of each row (so only when the filter selects it), 100,000 drops (1,000
//!   under `--test`) are also timed one by one with `Instant`, and their p50, p99 and
//!   maximum printed and appended to `bench-alloc/drop-latency.tsv`, beside the same
//!   percentiles of an empty pair of clock readings (row `timer`), which every
//!   per-drop figure includes.
//! - `many-guards`: 65 containers on one pool; with 64 guards held, 8 take the thread's
//!   hazard slots and the rest, and the timed `acquire`, are counted.
//! - arc-swap's `drop` row does not depend on the mode; the fence run measures it again
//!   as `arc-swap-fence-run`, for a ratio within one run.
//!
//! Bytes and allocations per op go to `target/bench-alloc/read.tsv`.
//!
//! ```text
//! cargo bench -p poolswap-benches --bench read
//! # smoke run
//! cargo bench -p poolswap-benches --bench read -- --test
//! # one strategy
//! cargo bench -p poolswap-benches --bench read -- poolswap
//! # the fallback barrier
//! POOLSWAP_BARRIER=fence cargo bench -p poolswap-benches --bench read -- poolswap
//! # issue 19's groups
//! cargo bench -p poolswap-benches --bench read -- 'drop|update|many-guards'
//! ```

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier, Mutex, RwLock};
use std::thread;
use std::time::{Duration, Instant};

use arc_swap::{ArcSwap, Cache};
use criterion::measurement::WallTime;
use criterion::{
    criterion_group, criterion_main, BenchmarkGroup, BenchmarkId, Criterion, Throughput,
};
use left_right::{Absorb, ReadHandle, ReadHandleFactory, WriteHandle};
use poolswap::{Container, Guard, Pool};

/// Hazard slots per thread, as `Container::acquire`'s docs state it.
const HAZARD_SLOTS: usize = 128;

#[path = "../tests/support/counting_alloc.rs"]
mod counting_alloc;
mod support;

use counting_alloc::Snapshot;
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
    let fence = !poolswap::internals::membarrier();
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

/// The suffix of poolswap's row names in the barrier mode the process chose (when it made
/// its first container).
fn mode_suffix() -> &'static str {
    if poolswap::internals::membarrier() {
        ""
    } else {
        "-fence"
    }
}

/// A writer's update: `get_new`, fill with `v`, `update`.
fn publish(container: &Container<Small>, v: u64) {
    let mut new = container.get_new();
    *new = [v; 8];
    container.update(new);
}

/// Times updates of `container` as `group/function/parameter` and records their
/// allocations.
fn bench_update(
    g: &mut BenchmarkGroup<'_, WallTime>,
    group: &str,
    function: &str,
    parameter: &str,
    container: &Container<Small>,
) {
    let mut tally = Tally::default();
    g.bench_function(BenchmarkId::new(function, parameter), |b| {
        let mut v = 0;
        b.iter_custom(|ops| {
            support::serial(ops, &mut tally, || {
                v += 1;
                publish(container, v);
            })
        });
    });
    support::record("read", group, function, parameter, &tally, None);
}

/// Runs `f` while `others` threads are parked, each registered as a reader of `container`
/// (it has read once) and holding guards on `held` different old versions: built in
/// `held` rounds of [every thread acquires a guard; this thread updates], or, if
/// `distinct`, in `held * others` turns of [one thread acquires a guard; this thread
/// updates], so that no two threads hold the same version.
fn with_parked<R>(
    container: &Container<Small>,
    others: usize,
    held: usize,
    distinct: bool,
    f: impl FnOnce() -> R,
) -> R {
    let step = Barrier::new(others + 1);
    let turns = if distinct { held * others } else { held };
    thread::scope(|s| {
        for me in 0..others {
            let step = &step;
            s.spawn(move || {
                drop(black_box(container.acquire()));
                let mut guards = Vec::with_capacity(held);
                for turn in 0..turns {
                    step.wait(); // a turn begins
                    if !distinct || turn % others == me {
                        guards.push(container.acquire());
                    }
                    step.wait(); // acquired; then the writer updates
                }
                assert!(
                    guards
                        .iter()
                        .take(HAZARD_SLOTS)
                        .all(|g| !poolswap::internals::is_counted(g))
                        && guards.windows(2).all(|w| !Guard::ptr_eq(&w[0], &w[1])),
                    "each guard holds a hazard slot while the thread has one, on a version of its own"
                );
                step.wait(); // parked
                step.wait(); // measured
                drop(guards);
            });
        }
        for turn in 0..turns {
            step.wait();
            step.wait();
            publish(container, turn as u64);
        }
        step.wait();
        let result = f();
        step.wait();
        result
    })
}

/// Updates with 2, 16 and 64 parked reader threads holding nothing (`update`), and
/// (`update-held`) with 64 holding the same 8 old versions, 64 holding 8 of their own, and
/// one holding 4,096.
fn update(c: &mut Criterion) {
    let pool = Pool::new(|| [0; 8], |_: &mut Small| true);
    let container = Container::from_value(&pool, [0; 8]);
    let function = format!("poolswap{}", mode_suffix());
    let mut g = c.benchmark_group("update");
    for others in [2, 16, 64] {
        with_parked(&container, others, 0, false, || {
            bench_update(
                &mut g,
                "update",
                &function,
                &format!("t{others}"),
                &container,
            );
        });
    }
    g.finish();

    let mut g = c.benchmark_group("update-held");
    with_parked(&container, 64, 8, false, || {
        bench_update(&mut g, "update-held", &function, "t64", &container);
    });
    for (others, held) in [(64, 8), (1, 4096)] {
        with_parked(&container, others, held, true, || {
            let parameter = format!("distinct{}", others * held);
            bench_update(&mut g, "update-held", &function, &parameter, &container);
        });
    }
    g.finish();
}

/// Updates while one reader thread spins `acquire`, read, drop on the same container.
fn update_active(c: &mut Criterion) {
    let pool = Pool::new(|| [0; 8], |_: &mut Small| true);
    let container = Container::from_value(&pool, [0; 8]);
    let function = format!("poolswap{}", mode_suffix());
    let stop = AtomicBool::new(false);
    let reading = Barrier::new(2);
    let mut g = c.benchmark_group("update-active");
    thread::scope(|s| {
        s.spawn(|| {
            drop(black_box(container.acquire()));
            reading.wait();
            let mut i = 0;
            while !stop.load(Ordering::Relaxed) {
                black_box(container.acquire()[i % 8]);
                i += 1;
            }
        });
        reading.wait();
        bench_update(&mut g, "update-active", &function, "t1", &container);
        stop.store(true, Ordering::Relaxed);
    });
    g.finish();
}

/// A batch size that tells [`update_two`]'s second thread to exit.
const QUIT: u64 = u64::MAX;

/// Updates of one container on one thread against updates of two containers, each with
/// its own pool, on two threads at once; prints the ratio of their updates per second.
fn update_two(c: &mut Criterion) {
    let pools = [(); 2].map(|()| Pool::new(|| [0; 8], |_: &mut Small| true));
    let [first, second] = [0, 1].map(|i| Container::from_value(&pools[i], [0; 8]));
    let function = format!("poolswap{}", mode_suffix());
    let mut g = c.benchmark_group("update-two");

    g.throughput(Throughput::Elements(1));
    let mut one = Tally::default();
    g.bench_function(BenchmarkId::new(&function, "one"), |b| {
        let mut v = 0;
        b.iter_custom(|ops| {
            support::serial(ops, &mut one, || {
                v += 1;
                publish(&first, v);
            })
        });
    });

    // An iteration is one update of each container: 2 updates.
    g.throughput(Throughput::Elements(2));
    let mut two = Tally::default();
    let batch = AtomicU64::new(0);
    let (start, end) = (Barrier::new(2), Barrier::new(2));
    thread::scope(|s| {
        s.spawn(|| {
            let mut v = 0;
            loop {
                start.wait();
                // Relaxed: the barrier orders the store before this load.
                let ops = batch.load(Ordering::Relaxed);
                if ops == QUIT {
                    break;
                }
                for _ in 0..ops {
                    v += 1;
                    publish(&second, v);
                }
                end.wait();
            }
        });
        g.bench_function(BenchmarkId::new(&function, "two"), |b| {
            let mut v = 0;
            b.iter_custom(|ops| {
                batch.store(ops, Ordering::Relaxed);
                start.wait();
                let before = Snapshot::now();
                let t0 = Instant::now();
                for _ in 0..ops {
                    v += 1;
                    publish(&first, v);
                }
                end.wait();
                let elapsed = t0.elapsed();
                two.add(ops, elapsed, Snapshot::since(before));
                elapsed
            });
        });
        batch.store(QUIT, Ordering::Relaxed);
        start.wait();
    });
    g.finish();
    support::record("read", "update-two", &function, "one", &one, None);
    support::record("read", "update-two", &function, "two", &two, None);
    if one.ops == 0 || two.ops == 0 || support::test_mode() {
        return;
    }
    let per_s = |t: &Tally, updates: f64| t.ops as f64 * updates / t.elapsed.as_secs_f64();
    let (one_rate, two_rate) = (per_s(&one, 1.0), per_s(&two, 2.0));
    let ratio = two_rate / one_rate;
    eprintln!(
        "update-two/{function}: one {one_rate:.0} updates/s, two {two_rate:.0} updates/s, ratio {ratio:.2}"
    );
    support::append(
        "update-two.tsv",
        "function\tone_updates_per_s\ttwo_updates_per_s\tratio",
        &format!("{function}\t{one_rate:.0}\t{two_rate:.0}\t{ratio:.3}\n"),
    );
}

/// The value of the `drop` group: 1,000 words behind one allocation, so that the last
/// `Arc` of it frees 8 KB.
type Heavy = Vec<u64>;

/// Words in a [`Heavy`].
const HEAVY_LEN: usize = 1_000;

/// Drops timed one by one for the `drop` group's percentiles.
fn latency_drops() -> usize {
    if support::test_mode() {
        1_000
    } else {
        100_000
    }
}

/// Sets up `ops` values with `make` (untimed) and drops them, at most
/// [`HAZARD_SLOTS`] at a time, timing only the drops; `before` runs, untimed,
/// before each batch is set up.
fn time_drops<V>(ops: u64, mut make: impl FnMut() -> V, mut before: impl FnMut()) -> Duration {
    let mut held = Vec::with_capacity(HAZARD_SLOTS);
    let mut total = Duration::ZERO;
    let mut done = 0;
    while done < ops {
        before();
        let n = (ops - done).min(HAZARD_SLOTS as u64);
        held.extend((0..n).map(|_| make()));
        let t0 = Instant::now();
        held.clear();
        total += t0.elapsed();
        done += n;
    }
    total
}

/// Sets up `n` values with `make` and times each one's drop with `Instant`; `before(i)`
/// runs, untimed, before the `i`th is set up. Returns the nanoseconds, sorted.
fn drop_latencies<V>(
    n: usize,
    mut make: impl FnMut() -> V,
    mut before: impl FnMut(usize),
) -> Vec<u64> {
    let mut ns = Vec::with_capacity(n);
    for i in 0..n {
        before(i);
        let value = make();
        let t0 = Instant::now();
        drop(value);
        ns.push(u64::try_from(t0.elapsed().as_nanos()).unwrap_or(u64::MAX));
    }
    ns.sort_unstable();
    ns
}

/// Prints the p50, p99 and maximum of `sorted` and appends them to
/// `bench-alloc/drop-latency.tsv` (not under `--test`).
fn report_latencies(row: &str, sorted: &[u64]) {
    let Some(&max) = sorted.last() else { return };
    let at = |q: f64| sorted[((sorted.len() - 1) as f64 * q).round() as usize];
    let (p50, p99) = (at(0.50), at(0.99));
    let mean = sorted.iter().sum::<u64>() as f64 / sorted.len() as f64;
    let n = sorted.len();
    eprintln!(
        "drop/{row}: {n} drops timed one by one: p50 {p50} ns, p99 {p99} ns, max {max} ns, mean {mean:.1} ns"
    );
    if !support::test_mode() {
        support::append(
            "drop-latency.tsv",
            "row\tdrops\tp50_ns\tp99_ns\tmax_ns\tmean_ns",
            &format!("{row}\t{n}\t{p50}\t{p99}\t{max}\t{mean:.1}\n"),
        );
    }
}

/// Dropping the last guard on a retired version against dropping the last `Arc` of a
/// value; per-drop percentiles on each row's first call.
fn drop_last(c: &mut Criterion) {
    let pool = Pool::new(Heavy::new, Heavy::clear);
    let container = Container::from_value(&pool, vec![0; HEAVY_LEN]);
    let suffix = mode_suffix();
    let mut v = 0;
    // A guard on the current version, which an update then retires: its last protection.
    let mut retired_guard = || {
        v += 1;
        let guard = container.acquire();
        let mut new = container.get_new();
        new.resize(HEAVY_LEN, v);
        container.update(new);
        assert!(
            !poolswap::internals::is_counted(&guard),
            "the guard holds a hazard slot"
        );
        guard
    };
    let mut g = c.benchmark_group("drop");
    let mut first = true;
    g.bench_function(format!("poolswap{suffix}"), |b| {
        if std::mem::take(&mut first) {
            let n = latency_drops();
            report_latencies(&format!("timer{suffix}"), &drop_latencies(n, || (), |_| ()));
            let reclaim = |i: usize| {
                if i.is_multiple_of(HAZARD_SLOTS) {
                    poolswap::reclaim();
                }
            };
            let sorted = drop_latencies(n, &mut retired_guard, reclaim);
            report_latencies(&format!("poolswap{suffix}"), &sorted);
        }
        b.iter_custom(|ops| {
            time_drops(ops, &mut retired_guard, || {
                poolswap::reclaim();
            })
        });
    });

    let swap = ArcSwap::from_pointee(vec![0; HEAVY_LEN]);
    let mut v = 0;
    // The loaded `Arc`, which the store leaves the last.
    let mut last_arc = || {
        v += 1;
        let arc = swap.load_full();
        swap.store(Arc::new(vec![v; HEAVY_LEN]));
        assert_eq!(Arc::strong_count(&arc), 1, "the loaded Arc is the last");
        arc
    };
    let name = if poolswap::internals::membarrier() {
        "arc-swap"
    } else {
        "arc-swap-fence-run"
    };
    let mut first = true;
    g.bench_function(name, |b| {
        if std::mem::take(&mut first) {
            let sorted = drop_latencies(latency_drops(), &mut last_arc, |_| ());
            report_latencies(name, &sorted);
        }
        b.iter_custom(|ops| time_drops(ops, &mut last_arc, || ()));
    });
    g.finish();
}

/// `acquire` + drop on one container while the thread holds guards on 1 or 64 others.
fn many_guards(c: &mut Criterion) {
    let pool = Pool::new(|| [0; 8], |_: &mut Small| true);
    let containers: Vec<_> = (0..=64)
        .map(|i| Container::from_value(&pool, [i; 8]))
        .collect();
    let (target, others) = containers.split_last().expect("65 containers");
    let function = format!("poolswap{}", mode_suffix());
    let mut g = c.benchmark_group("many-guards");
    for held in [1, 64] {
        let guards: Vec<_> = others[..held].iter().map(Container::acquire).collect();
        let counted = guards
            .iter()
            .filter(|g| poolswap::internals::is_counted(g))
            .count();
        assert_eq!(counted, held.saturating_sub(HAZARD_SLOTS));
        g.bench_function(BenchmarkId::new(&function, format!("held{held}")), |b| {
            b.iter(|| target.acquire()[0]);
        });
        drop(guards);
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = support::criterion();
    targets = read, update, update_active, update_two, drop_last, many_guards
}
criterion_main!(benches);
