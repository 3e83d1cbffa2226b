//! # Read-copy-update of one key in a large owned map
//!
//! A `HashMap<String, Vec<String>>` of 100,000 routes (one backend each); each op is one
//! read-copy-update that makes the next version a copy of the current one and changes the
//! backend of one route. One thread, no readers: the cost measured is the copy.
//!
//! | name                | op                                                                   |
//! |---------------------|----------------------------------------------------------------------|
//! | `poolswap-recycled` | `Container::rcu` on `Recycled<HashMap<..>>` with `Recycled::copy_from`; the pool's reset keeps the contents, so the copy updates an older version in place |
//! | `poolswap-recycled-churn` | the same, but each op also removes the oldest route and inserts a new one (the size stays put): the copy finds the keys the older version lacks or has too many, recycling the removed entry's buffers |
//! | `arc-swap`          | `ArcSwap::rcu`: clone the map (every `String` and `Vec` anew), change one key |
//!
//! Time per op from criterion; allocations and bytes per op from the counting global
//! allocator, to `target/bench-alloc/rcu.tsv` (warm-up included), and, printed, those of
//! ten more ops at the end (the steady state).
//!
//! ```text
//! cargo bench -p poolswap-benches --bench rcu
//! cargo bench -p poolswap-benches --bench rcu -- --test  # smoke run
//! ```

use std::collections::HashMap;
use std::hint::black_box;
use std::sync::Arc;

use arc_swap::ArcSwap;
use criterion::{criterion_group, criterion_main, Criterion};
use poolswap::{Container, Pool, Recycled};

#[path = "../tests/support/counting_alloc.rs"]
mod counting_alloc;
mod support;

use support::Tally;

#[global_allocator]
static ALLOC: counting_alloc::Counting = counting_alloc::Counting;

type Routes = HashMap<String, Vec<String>>;

/// Routes in the map.
const ROUTES: usize = 100_000;
/// The route whose backend every op changes.
const CHANGED: &str = "/route/000007";

fn routes() -> Routes {
    (0..ROUTES)
        .map(|i| {
            let backend = format!("10.0.{}.{}:80", i / 256 % 256, i % 256);
            (format!("/route/{i:06}"), vec![backend])
        })
        .collect()
}

/// Writes backend `v` (one of ten, same length) into `backend` without allocating.
fn set_backend(backend: &mut String, v: u64) {
    use std::fmt::Write;
    backend.clear();
    write!(backend, "10.9.9.{}:80", v % 10).expect("a String takes any write");
}

/// Removes route `oldest` and inserts route `oldest + ROUTES`, recycling the removed
/// entry's buffers into the version's free lists and taking the new one's from it.
/// `probe` is a buffer for the removed key, so that the op allocates nothing of its own.
fn replace_route(routes: &mut Recycled<Routes>, oldest: usize, probe: &mut String) {
    use std::fmt::Write;
    let (map, free) = Recycled::parts_mut(routes);
    probe.clear();
    write!(probe, "/route/{oldest:06}").expect("a String takes any write");
    let (key, backends) = map
        .remove_entry(probe.as_str())
        .expect("the oldest route is present");
    free.recycle(key);
    free.recycle(backends);
    let mut key: String = free.take();
    write!(key, "/route/{:06}", oldest + ROUTES).expect("a String takes any write");
    let mut backends: Vec<String> = free.take();
    backends.push(free.string_from("10.9.9.9:80"));
    map.insert(key, backends);
}

/// Ops counted after criterion's run, when every version has been built: the steady state
/// (criterion's allocation figures include its warm-up, here the first copy of 100,000
/// routes into an empty map).
const STEADY_OPS: u64 = 10;

/// Prints the allocations of [`STEADY_OPS`] more calls of `op` (none in a smoke run).
fn steady(name: &str, mut op: impl FnMut()) {
    if support::test_mode() {
        return;
    }
    let before = counting_alloc::Snapshot::now();
    for _ in 0..STEADY_OPS {
        op();
    }
    let after = counting_alloc::Snapshot::since(before);
    eprintln!(
        "rcu/{name}: steady state, {STEADY_OPS} ops: {} allocations, {} bytes",
        after.allocs, after.bytes
    );
}

fn rcu(c: &mut Criterion) {
    let mut g = c.benchmark_group("rcu");
    g.sample_size(10);

    let pool = Pool::new(Recycled::<Routes>::default, |_| true);
    let container = Container::new(&pool, pool.adopt(Recycled::new(routes())));
    let mut tally = Tally::default();
    let mut v = 0u64;
    g.bench_function("poolswap-recycled", |b| {
        b.iter_custom(|ops| {
            support::serial(ops, &mut tally, || {
                v += 1;
                container.rcu(|current, next| {
                    Recycled::copy_from(next, current);
                    let backends = next.get_mut(CHANGED).expect("present");
                    set_backend(&mut backends[0], v);
                });
            })
        });
    });
    support::record("rcu", "rcu", "poolswap-recycled", "", &tally, None);
    steady("poolswap-recycled", || {
        v += 1;
        container.rcu(|current, next| {
            Recycled::copy_from(next, current);
            set_backend(&mut next.get_mut(CHANGED).expect("present")[0], v);
        });
    });
    drop(black_box(container.acquire()));

    // Routes `oldest..oldest + ROUTES` are in the map; each op shifts the window by one.
    let pool = Pool::new(Recycled::<Routes>::default, |_| true);
    let container = Container::new(&pool, pool.adopt(Recycled::new(routes())));
    let mut tally = Tally::default();
    let mut oldest = 0;
    let mut probe = String::new();
    let mut churn = |current: &Recycled<Routes>, next: &mut Recycled<Routes>| {
        Recycled::copy_from(next, current);
        replace_route(next, oldest, &mut probe);
        oldest += 1;
    };
    g.bench_function("poolswap-recycled-churn", |b| {
        b.iter_custom(|ops| support::serial(ops, &mut tally, || container.rcu(&mut churn)));
    });
    support::record("rcu", "rcu", "poolswap-recycled-churn", "", &tally, None);
    steady("poolswap-recycled-churn", || container.rcu(&mut churn));
    drop(black_box(container.acquire()));

    let swap = ArcSwap::from_pointee(routes());
    let mut tally = Tally::default();
    let mut v = 0u64;
    g.bench_function("arc-swap", |b| {
        b.iter_custom(|ops| {
            support::serial(ops, &mut tally, || {
                v += 1;
                swap.rcu(|current| {
                    let mut next = Routes::clone(current);
                    let backends = next.get_mut(CHANGED).expect("present");
                    set_backend(&mut backends[0], v);
                    Arc::new(next)
                });
            })
        });
    });
    support::record("rcu", "rcu", "arc-swap", "", &tally, None);
    steady("arc-swap", || {
        v += 1;
        swap.rcu(|current| {
            let mut next = Routes::clone(current);
            set_backend(&mut next.get_mut(CHANGED).expect("present")[0], v);
            Arc::new(next)
        });
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = support::criterion();
    targets = rcu
}
criterion_main!(benches);
