//! # Object pools: get + drop of a 4 KiB buffer
//!
//! The object is a `Vec<u8>` with 4 KiB capacity; one op takes it from the pool, writes
//! one byte, and gives it back (drop, or the pool's own return call). Two groups:
//!
//! - `pool-local`: one thread gets and drops (the hit path of a warm pool);
//! - `pool-dead`: poolswap alone, one thread cycling through three pools (get + drop on
//!   each: three gets per iteration), on a fresh thread (`3-live`), then three new pools
//!   after 10,000 other pools were used on the same thread and dropped
//!   (`3-live-10k-dead`): a thread's state for dead pools must neither stay behind nor slow
//!   the lookup of live ones;
//! - `pool-handoff`: one thread gets and sends the buffer through a bounded channel
//!   (`std::sync::mpsc::sync_channel(64)`, which does not allocate per message); another
//!   thread receives and drops it. This is the hot-swap pattern: the last reader, on any
//!   thread, returns what the writer's thread takes. Time per op is wall time / buffers
//!   handed off; the channel's cost is in every figure, `fresh-vec` included.
//! - `pool-pipeline`: a long-lived producer thread gets buffers in batches of 64 (a `Vec`
//!   per batch) and sends each batch through a channel bounded at 4 batches to a long-lived
//!   consumer thread that drops them: a reader thread that fills buffers and a worker that
//!   consumes them. Up to ~400 buffers are out at once, more than the default idle bound's floor (256), so a
//!   pool must keep what its working set needs (opool is given room for it: its capacity
//!   is fixed at construction). The batch's own `Vec` is 1/64 = 0.0156 allocations per op.
//! - `pool-pipeline-spin`: the same pipeline with a spinning queue
//!   (`crossbeam_queue::ArrayQueue`) instead of the channel, whose futex waits and wake-ups
//!   take most of `pool-pipeline`'s time in every row: what is left is the pools' own cost.
//!
//! Peers (criterion function names): `poolswap` (`Pool::get`, drop), `fresh-vec`
//! (`Vec::with_capacity`, free), `object-pool` (`pull`, drop), `lockfree-object-pool`
//! (`LinearObjectPool::pull`/`pull_owned`, drop), `opool` (`get`, drop), `sharded-slab`
//! (`Pool::create`, drop, `clear(key)`). Every pool resets a buffer by `clear()`, which
//! keeps its capacity. The pipeline groups also run `floor-8B`, `floor-16B` and
//! `floor-32B`: the same pipeline passing plain tokens of that size, with no pool, what
//! a pool that cost nothing would take (a guard's size sets how many of the batch's lines
//! each object fills: `Pooled` is 16 bytes, opool's and object-pool's guards 32).
//!
//! Besides time, each benchmark reports allocations and bytes per op, and factory calls
//! per op (a counter in each pool's factory; for sharded-slab, whose slots are made by
//! `Default`, the times a slot had to reserve its 4 KiB): a pool that cannot hand a
//! buffer dropped on one thread to the getter on another makes ~1 call per op. All of it
//! goes to `target/bench-alloc/pool.tsv`.
//!
//! ```text
//! cargo bench -p poolswap-benches --bench pool
//! # smoke run
//! cargo bench -p poolswap-benches --bench pool -- --test
//! # one group
//! cargo bench -p poolswap-benches --bench pool -- pool-handoff
//! # the producer/consumer pipeline
//! cargo bench -p poolswap-benches --bench pool -- pool-pipeline
//! # 8 producers, 8 consumers
//! PIPE_PAIRS=8 cargo bench -p poolswap-benches --bench pool -- pool-pipeline
//! ```

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::mpsc::sync_channel;
use std::sync::{Arc, Barrier, Mutex};
use std::thread;

use criterion::{criterion_group, criterion_main, Criterion};
use crossbeam_queue::ArrayQueue;
use lockfree_object_pool::LinearObjectPool;
use opool::PoolAllocator;

#[path = "../tests/support/counting_alloc.rs"]
mod counting_alloc;
mod support;

use support::Tally;

#[global_allocator]
static ALLOC: counting_alloc::Counting = counting_alloc::Counting;

/// Capacity of every buffer.
const CAP: usize = 4096;
/// Buffers in flight between the two threads of the handoff at most.
const IN_FLIGHT: usize = 64;

/// A factory that counts its calls.
#[derive(Clone, Default)]
struct Factory(Arc<AtomicU64>);

impl Factory {
    fn make(&self) -> Vec<u8> {
        self.0.fetch_add(1, Relaxed);
        Vec::with_capacity(CAP)
    }
    fn calls(&self) -> u64 {
        self.0.load(Relaxed)
    }
}

impl PoolAllocator<Vec<u8>> for Factory {
    fn allocate(&self) -> Vec<u8> {
        self.make()
    }
    fn reset(&self, v: &mut Vec<u8>) {
        v.clear();
    }
}

/// The pool's reset for poolswap: clear, keep.
fn clear(v: &mut Vec<u8>) -> bool {
    v.clear();
    true
}

/// Gives a sharded-slab slot (made empty by `Default`) its capacity, counting that as a
/// factory call.
fn ensure_capacity(v: &mut Vec<u8>, factory: &Factory) {
    if v.capacity() < CAP {
        factory.0.fetch_add(1, Relaxed);
        v.reserve(CAP);
    }
}

/// Writes one byte, so the buffer is used.
fn touch(v: &mut Vec<u8>) {
    v.push(1);
    black_box(v);
}

/// Runs one single-threaded benchmark: `op` gets, touches and drops one buffer.
fn local(c: &mut Criterion, name: &str, factory: &Factory, mut op: impl FnMut()) {
    let mut tally = Tally::default();
    c.benchmark_group("pool-local").bench_function(name, |b| {
        b.iter_custom(|ops| support::serial(ops, &mut tally, &mut op))
    });
    tally.extra = factory.calls();
    support::record("pool", "pool-local", name, "", &tally, Some("factory"));
}

/// Runs one handoff benchmark: thread 0 calls `get` and sends, thread 1 receives and
/// calls `put`.
fn handoff<G: Send>(
    c: &mut Criterion,
    name: &str,
    factory: &Factory,
    get: impl Fn() -> G + Sync,
    put: impl Fn(G) + Sync,
) {
    let mut tally = Tally::default();
    c.benchmark_group("pool-handoff").bench_function(name, |b| {
        b.iter_custom(|ops| {
            let (tx, rx) = sync_channel::<G>(IN_FLIGHT);
            let rx = Mutex::new(rx);
            let worker = |t: usize, _: u64, start: &Barrier| {
                if t == 0 {
                    start.wait();
                    for _ in 0..ops {
                        tx.send(get()).expect("receiver alive");
                    }
                } else {
                    let rx = rx.lock().unwrap();
                    start.wait();
                    for _ in 0..ops {
                        put(rx.recv().expect("sender alive"));
                    }
                }
            };
            support::parallel(ops, 2, &mut tally, worker, support::idle)
        });
    });
    tally.extra = factory.calls();
    support::record("pool", "pool-handoff", name, "", &tally, Some("factory"));
}

/// Batches the pipeline's producer sends at most ahead of its consumer (the channel's
/// bound): with the batch being filled and the one being dropped, up to
/// `(PIPELINE_DEPTH + 2) * BATCH` buffers are out at once, more than the default idle bound's floor (256).
const PIPELINE_DEPTH: usize = 4;
/// Buffers per batch in the pipeline.
const BATCH: usize = 64;

/// How a pipeline's batches go from the producer to the consumer.
#[derive(Clone, Copy)]
enum Hand {
    /// `std::sync::mpsc::sync_channel(PIPELINE_DEPTH)`: a thread that finds it full or
    /// empty parks (a futex wait), and the other wakes it (a futex wake).
    Channel,
    /// `crossbeam_queue::ArrayQueue` of `PIPELINE_DEPTH` batches, and a thread that finds
    /// it full or empty spins (`spin_loop`, then `yield_now`): on two cores for two
    /// threads, the hand-over costs a few cache-line transfers and leaves the pools' own
    /// costs visible.
    Spin,
}

/// Producer/consumer pairs in the pipeline groups: `PIPE_PAIRS` (default 1). With P > 1 the
/// groups are named `pool-pipeline-PxP` and `pool-pipeline-spin-PxP`: P producers and P
/// consumers, each pair with its own channel or queue, all on one pool (a 16-core device
/// runs `PIPE_PAIRS=8`).
fn pipe_pairs() -> usize {
    std::env::var("PIPE_PAIRS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&p| p > 0)
        .unwrap_or(1)
}

/// Runs one pipeline benchmark: each producer (even threads) gets `BATCH` buffers into a
/// `Vec` (one allocation per batch: 1/64 = 0.0156 allocations per buffer) and hands the
/// batch over (`hand`) to its consumer (the next odd thread), at most `PIPELINE_DEPTH`
/// batches ahead; the consumer takes each batch and calls `put` on every buffer. All
/// threads live for the whole batch of criterion iterations, as a service's reader and
/// worker threads do. Time per op is wall time / buffers (of all pairs).
fn pipeline<G: Send>(
    c: &mut Criterion,
    group: &str,
    hand: Hand,
    name: &str,
    factory: &Factory,
    get: impl Fn() -> G + Sync,
    put: impl Fn(G) + Sync,
) {
    let pairs = pipe_pairs();
    let group = if pairs > 1 {
        format!("{group}-{pairs}x{pairs}")
    } else {
        group.to_owned()
    };
    let mut tally = Tally::default();
    c.benchmark_group(&group).bench_function(name, |b| {
        b.iter_custom(|ops| {
            let channels: Vec<_> = (0..pairs)
                .map(|_| {
                    let (tx, rx) = sync_channel::<Vec<G>>(PIPELINE_DEPTH);
                    (tx, Mutex::new(rx))
                })
                .collect();
            let queues: Vec<_> = (0..pairs)
                .map(|_| ArrayQueue::<Vec<G>>::new(PIPELINE_DEPTH))
                .collect();
            let worker = |t: usize, _: u64, start: &Barrier| {
                let pair = t / 2;
                let (tx, rx) = &channels[pair];
                let queue = &queues[pair];
                let mut left = support::share(ops, pairs, pair) as usize;
                if t.is_multiple_of(2) {
                    start.wait();
                    while left > 0 {
                        let n = left.min(BATCH);
                        let mut batch = Vec::with_capacity(BATCH);
                        batch.extend((0..n).map(|_| get()));
                        match hand {
                            Hand::Channel => tx.send(batch).expect("receiver alive"),
                            Hand::Spin => {
                                let mut spins = 0u32;
                                while let Err(back) = queue.push(batch) {
                                    batch = back;
                                    spin(&mut spins);
                                }
                            }
                        }
                        left -= n;
                    }
                } else {
                    let rx = rx.lock().unwrap();
                    start.wait();
                    while left > 0 {
                        let batch = match hand {
                            Hand::Channel => rx.recv().expect("sender alive"),
                            Hand::Spin => {
                                let mut spins = 0u32;
                                loop {
                                    match queue.pop() {
                                        Some(batch) => break batch,
                                        None => spin(&mut spins),
                                    }
                                }
                            }
                        };
                        left -= batch.len();
                        batch.into_iter().for_each(&put);
                    }
                }
            };
            support::parallel(ops, 2 * pairs, &mut tally, worker, support::idle)
        });
    });
    tally.extra = factory.calls();
    support::record("pool", &group, name, "", &tally, Some("factory"));
}

/// A spinning wait's next step: `spin_loop` 64 times, then `yield_now` (the other thread
/// may be sharing this CPU).
fn spin(spins: &mut u32) {
    *spins += 1;
    if *spins < 64 {
        std::hint::spin_loop();
    } else {
        thread::yield_now();
    }
}

fn pool_local(c: &mut Criterion) {
    let f = Factory::default();
    let g = f.clone();
    let pool = poolswap::Pool::new(move || g.make(), clear);
    local(c, "poolswap", &f, || touch(&mut pool.get()));

    let f = Factory::default();
    local(c, "fresh-vec", &f, || touch(&mut f.make()));

    let f = Factory::default();
    let pool = object_pool::Pool::new(0, Vec::new);
    local(c, "object-pool", &f, || {
        let mut v = pool.pull(|| f.make());
        v.clear();
        touch(&mut v);
    });

    let f = Factory::default();
    let g = f.clone();
    let pool = LinearObjectPool::new(move || g.make(), Vec::clear);
    local(c, "lockfree-object-pool", &f, || touch(&mut pool.pull()));

    let f = Factory::default();
    let pool = opool::Pool::new(IN_FLIGHT, f.clone());
    local(c, "opool", &f, || touch(&mut pool.get()));

    let f = Factory::default();
    let pool = sharded_slab::Pool::<Vec<u8>>::new();
    local(c, "sharded-slab", &f, || {
        let mut v = pool.create().expect("slab has room");
        ensure_capacity(&mut v, &f);
        touch(&mut v);
        let key = v.key();
        drop(v);
        pool.clear(key);
    });
}

fn pool_dead(c: &mut Criterion) {
    for (name, dead) in [("3-live", 0), ("3-live-10k-dead", 10_000)] {
        // The dead pools first, then the live ones: a thread's per-pool state is looked up
        // among everything the thread has registered since it started.
        for _ in 0..dead {
            let pool = poolswap::Pool::new(Vec::<u8>::new, clear);
            drop(pool.get());
        }
        let f = Factory::default();
        let pools: Vec<_> = (0..3)
            .map(|_| {
                let g = f.clone();
                poolswap::Pool::new(move || g.make(), clear)
            })
            .collect();
        let mut cycle = || pools.iter().for_each(|p| touch(&mut p.get()));
        let mut tally = Tally::default();
        c.benchmark_group("pool-dead").bench_function(name, |b| {
            b.iter_custom(|ops| support::serial(ops, &mut tally, &mut cycle))
        });
        tally.extra = f.calls();
        support::record("pool", "pool-dead", name, "", &tally, Some("factory"));
    }
}

/// Runs `$run(c, name, &factory, get, put)` for poolswap and every peer, each with its own
/// counting factory; `$opool_cap` is opool's fixed capacity (it must hold every buffer in
/// flight).
macro_rules! every_peer {
    ($c:expr, $run:ident $(($($arg:expr),*))?, $opool_cap:expr) => {{
        let c = $c;
        let f = Factory::default();
        let g = f.clone();
        let pool = poolswap::Pool::new(move || g.make(), clear);
        $run(c, $($($arg,)*)? "poolswap", &f, || pool.get(), drop);

        let f = Factory::default();
        $run(c, $($($arg,)*)? "fresh-vec", &f, || f.make(), drop);

        let f = Factory::default();
        let pool = object_pool::Pool::new(0, Vec::new);
        let get = || {
            let mut v = pool.pull(|| f.make());
            v.clear();
            v
        };
        $run(c, $($($arg,)*)? "object-pool", &f, get, drop);

        let f = Factory::default();
        let g = f.clone();
        let pool = Arc::new(LinearObjectPool::new(move || g.make(), Vec::clear));
        $run(c, $($($arg,)*)? "lockfree-object-pool", &f, || pool.pull_owned(), drop);

        let f = Factory::default();
        let pool = opool::Pool::new($opool_cap, f.clone());
        $run(c, $($($arg,)*)? "opool", &f, || pool.get(), drop);

        let f = Factory::default();
        let pool = Arc::new(sharded_slab::Pool::<Vec<u8>>::new());
        let get = || {
            let mut v = Arc::clone(&pool).create_owned().expect("slab has room");
            ensure_capacity(&mut v, &f);
            v
        };
        let put = |v: sharded_slab::pool::OwnedRefMut<Vec<u8>>| {
            let key = v.key();
            drop(v);
            pool.clear(key);
        };
        $run(c, $($($arg,)*)? "sharded-slab", &f, get, put);
    }};
}

fn pool_handoff(c: &mut Criterion) {
    every_peer!(c, handoff, IN_FLIGHT);
}

fn pool_pipeline(c: &mut Criterion) {
    let cap = (PIPELINE_DEPTH + 3) * BATCH * pipe_pairs();
    every_peer!(&mut *c, pipeline("pool-pipeline", Hand::Channel), cap);
    pipeline_floors(c, "pool-pipeline", Hand::Channel);
    every_peer!(&mut *c, pipeline("pool-pipeline-spin", Hand::Spin), cap);
    pipeline_floors(c, "pool-pipeline-spin", Hand::Spin);
}

/// The pipeline with no pool at all: the producer "gets" a token of 8, 16 or 32 bytes (a
/// `[usize; N]`, no allocation, no shared state) and the consumer drops it. What is left
/// is the harness: the batch's `Vec` (allocated on one thread, freed on the other, its
/// lines written on one and read on the other) and the queue or channel. A pool row's time
/// less the floor of its guard's size is what that pool adds: `Pooled` is 16 bytes (node
/// and pool pointers), opool's and object-pool's guards 32 (a pool reference and the
/// 24-byte `Vec` itself).
fn pipeline_floors(c: &mut Criterion, group: &str, hand: Hand) {
    let f = Factory::default();
    pipeline(
        c,
        group,
        hand,
        "floor-8B",
        &f,
        || black_box([0usize; 1]),
        drop,
    );
    pipeline(
        c,
        group,
        hand,
        "floor-16B",
        &f,
        || black_box([0usize; 2]),
        drop,
    );
    pipeline(
        c,
        group,
        hand,
        "floor-32B",
        &f,
        || black_box([0usize; 4]),
        drop,
    );
}

criterion_group! {
    name = benches;
    config = support::criterion();
    targets = pool_local, pool_dead, pool_handoff, pool_pipeline
}
criterion_main!(benches);
