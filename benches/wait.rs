//! # Wake-up latency at the live bound on tokio (issue 20, item 5)
//!
//! A pool allows one object to exist. A waiter task awaits it while a returner task holds
//! it; the returner stamps the object with the time and gives it back; the waiter reads the
//! stamp as soon as its get completes. The figure is that interval: from the return to the
//! waiter running, including the return itself, the wake-up, the executor's scheduling of
//! the waiter and its look (and reset). Reported as p50 / p90 / p99 / p99.9 / max over the
//! samples, in microseconds, per system, in the same run:
//!
//! | system | the wait | the return |
//! |---|---|---|
//! | poolswap `get_async` | `Pool::get_async` at `max_live(1)`, into an `OwnedPooled` | the `OwnedPooled`'s drop |
//! | deadpool unmanaged | `deadpool::unmanaged::Pool::get` at `max_size` 1 | the `Object`'s drop |
//! | poolswap blocking `get` | `Pool::get_owned` on a plain thread (condition variable) | the `OwnedPooled`'s drop, on another thread |
//!
//! The returner runs either as a task on a worker ("in a task": the wake-up is the worker's
//! local scheduling, plus an unpark of the other worker if it sleeps) or on the thread that
//! calls `block_on`, outside the workers ("in block_on": every wake-up goes through the
//! runtime's injection queue and unparks a sleeping worker, a futex wake). In a task, the
//! waiter often shares the returner's worker and has not yet registered when the object
//! comes back (tokio runs a task woken by a worker in that worker's LIFO slot, after the
//! current one): those samples are left out, hence the larger "left out" count.
//!
//! event-listener wakes a waiter while it holds its list's lock, and a woken waiter takes
//! that lock once (to take its notification and leave the list): poolswap defers the task's
//! wake-up until the notifier has released it (`WakerCell` in src/pool/wait_async.rs), as
//! tokio's semaphore (deadpool's) does. Without that, a waiter on another worker blocked on
//! the lock for the notifier's futex wake: p50 9-12 µs here, against 3-4 µs.
//!
//! Only true wake-ups count: a sample whose get completed at its first poll (the object
//! already back: the waiter had not yet registered) is left out, and the count left out is
//! reported. To make that rare, the returner, once told the waiter is about to wait, spins
//! for [`HEAD_START`] before it returns the object. The object travels back from the
//! waiter to the returner through a channel, outside the timed interval. The runtime has
//! two worker threads (this machine's cores); systems alternate in rounds so that drifts of
//! the machine spread over all of them.
//!
//! Allocations come from the counting global allocator (`tests/support/counting_alloc.rs`),
//! process-wide over the rounds, per round: a round includes the two channel messages and
//! the runtime's work, so the figure is an upper bound on what the wait itself allocates
//! (tests/alloc_async.rs proves poolswap's wait allocates nothing).
//!
//! ```text
//! # 20,000 wake-ups per system
//! cargo bench -p poolswap-benches --features async --bench wait
//! # smoke run: 200, figures meaningless
//! cargo bench -p poolswap-benches --features async --bench wait -- --test
//! ```

#[path = "../tests/support/counting_alloc.rs"]
mod counting_alloc;

use std::future::{poll_fn, Future};
use std::pin::pin;
use std::sync::mpsc as std_mpsc;
use std::thread;
use std::time::{Duration, Instant};

use counting_alloc::Snapshot;
use poolswap::{Pool, Pooled};
use tokio::sync::mpsc;

#[global_allocator]
static ALLOC: counting_alloc::Counting = counting_alloc::Counting;

/// How long the returner waits, once told the waiter is about to wait, before it returns
/// the object: enough for the waiter to register (a few microseconds) on an idle machine.
const HEAD_START: Duration = Duration::from_micros(30);

/// The pooled object: the time it was returned at.
struct Stamped {
    returned_at: Instant,
}

impl Stamped {
    fn new() -> Stamped {
        Stamped {
            returned_at: Instant::now(),
        }
    }
}

/// Awaits `future` and counts its polls, without allocating (pinned on the caller's
/// stack): a true wake-up takes two.
async fn count_polls<F: Future>(future: F) -> (F::Output, u32) {
    let mut future = pin!(future);
    let mut polls = 0;
    let out = poll_fn(|cx| {
        polls += 1;
        future.as_mut().poll(cx)
    })
    .await;
    (out, polls)
}

fn spin(d: Duration) {
    let start = Instant::now();
    while start.elapsed() < d {
        std::hint::spin_loop();
    }
}

/// One round's samples (nanoseconds), the samples left out, and the allocations.
#[derive(Default)]
struct Samples {
    ns: Vec<u64>,
    skipped: u64,
    rounds: u64,
    allocs: u64,
}

impl Samples {
    fn add(&mut self, other: Samples) {
        self.ns.extend(other.ns);
        self.skipped += other.skipped;
        self.rounds += other.rounds;
        self.allocs += other.allocs;
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// Runs the returner's side: as a task on a worker (`in_task`), or on the thread that
/// calls `block_on` (outside the workers: every wake-up crosses threads).
fn run<F>(rt: &tokio::runtime::Runtime, in_task: bool, returner: F) -> Samples
where
    F: Future<Output = Samples> + Send + 'static,
{
    if in_task {
        rt.block_on(rt.spawn(returner)).unwrap()
    } else {
        rt.block_on(returner)
    }
}

fn poolswap_async(rt: &tokio::runtime::Runtime, in_task: bool, n: usize) -> Samples {
    let pool = Pool::builder(Stamped::new, |_: &mut Stamped| ())
        .max_live(1)
        .build();
    run(rt, in_task, async move {
        let (go_tx, mut go_rx) = mpsc::channel::<()>(1);
        let (back_tx, mut back_rx) = mpsc::channel(1);
        let waiter = tokio::spawn({
            let pool = pool.clone();
            async move {
                let mut out = Samples::default();
                while go_rx.recv().await.is_some() {
                    let (obj, polls) =
                        count_polls(async { Pooled::into_owned(pool.get_async().await) }).await;
                    let ns = obj.returned_at.elapsed().as_nanos() as u64;
                    if polls > 1 {
                        out.ns.push(ns);
                    } else {
                        out.skipped += 1;
                    }
                    back_tx.send(obj).await.unwrap();
                }
                out
            }
        });
        let mut obj = Pooled::into_owned(pool.get_async().await);
        let start = Snapshot::now();
        for _ in 0..n {
            go_tx.send(()).await.unwrap();
            spin(HEAD_START);
            obj.returned_at = Instant::now();
            drop(obj);
            obj = back_rx.recv().await.unwrap();
        }
        let allocs = Snapshot::since(start).allocs;
        drop(go_tx);
        let mut out = waiter.await.unwrap();
        out.rounds = n as u64;
        out.allocs = allocs;
        out
    })
}

fn deadpool_unmanaged(rt: &tokio::runtime::Runtime, in_task: bool, n: usize) -> Samples {
    let pool = deadpool::unmanaged::Pool::<Stamped>::new(1);
    run(rt, in_task, async move {
        pool.add(Stamped::new()).await.map_err(|_| ()).unwrap();
        let (go_tx, mut go_rx) = mpsc::channel::<()>(1);
        let (back_tx, mut back_rx) = mpsc::channel(1);
        let waiter = tokio::spawn({
            let pool = pool.clone();
            async move {
                let mut out = Samples::default();
                while go_rx.recv().await.is_some() {
                    let (obj, polls) = count_polls(pool.get()).await;
                    let obj = obj.unwrap();
                    let ns = obj.returned_at.elapsed().as_nanos() as u64;
                    if polls > 1 {
                        out.ns.push(ns);
                    } else {
                        out.skipped += 1;
                    }
                    back_tx.send(obj).await.unwrap();
                }
                out
            }
        });
        let mut obj = pool.get().await.unwrap();
        let start = Snapshot::now();
        for _ in 0..n {
            go_tx.send(()).await.unwrap();
            spin(HEAD_START);
            obj.returned_at = Instant::now();
            drop(obj);
            obj = back_rx.recv().await.unwrap();
        }
        let allocs = Snapshot::since(start).allocs;
        drop(go_tx);
        let mut out = waiter.await.unwrap();
        out.rounds = n as u64;
        out.allocs = allocs;
        out
    })
}

/// The blocking `get` on two plain threads, for scale: the condition variable's wake-up.
/// Whether the waiter slept cannot be seen from outside; the head start makes it likely.
fn poolswap_blocking(n: usize) -> Samples {
    let pool = Pool::builder(Stamped::new, |_: &mut Stamped| ())
        .max_live(1)
        .build();
    let (go_tx, go_rx) = std_mpsc::channel::<()>();
    let (back_tx, back_rx) = std_mpsc::channel();
    thread::scope(|s| {
        let pool = &pool;
        let waiter = s.spawn(move || {
            let mut out = Samples::default();
            while go_rx.recv().is_ok() {
                let obj = pool.get_owned();
                out.ns.push(obj.returned_at.elapsed().as_nanos() as u64);
                back_tx.send(obj).unwrap();
            }
            out
        });
        let mut obj = pool.get_owned();
        let start = Snapshot::now();
        for _ in 0..n {
            go_tx.send(()).unwrap();
            spin(HEAD_START);
            obj.returned_at = Instant::now();
            drop(obj);
            obj = back_rx.recv().unwrap();
        }
        let allocs = Snapshot::since(start).allocs;
        drop(go_tx);
        let mut out = waiter.join().unwrap();
        out.rounds = n as u64;
        out.allocs = allocs;
        out
    })
}

fn percentile(sorted: &[u64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i] as f64 / 1000.0
}

fn main() {
    let smoke = std::env::args().any(|a| a == "--test");
    let per_system = if smoke { 200 } else { 20_000 };
    let rounds = if smoke { 1 } else { 10 };
    let rt = runtime();
    let names = [
        "poolswap get_async, returner in a task",
        "deadpool unmanaged get, returner in a task",
        "poolswap get_async, returner in block_on",
        "deadpool unmanaged get, returner in block_on",
        "poolswap blocking get (threads)",
    ];
    let mut all: Vec<Samples> = names.iter().map(|_| Samples::default()).collect();
    // Warm-up: the pool's waiter list, the runtime's threads, the reclaiming thread.
    poolswap_async(&rt, true, 100);
    deadpool_unmanaged(&rt, true, 100);
    poolswap_blocking(100);
    for _ in 0..rounds {
        let n = per_system / rounds;
        all[0].add(poolswap_async(&rt, true, n));
        all[1].add(deadpool_unmanaged(&rt, true, n));
        all[2].add(poolswap_async(&rt, false, n));
        all[3].add(deadpool_unmanaged(&rt, false, n));
        all[4].add(poolswap_blocking(n));
    }
    if smoke {
        println!("SMOKE RUN (`--test`): {per_system} wake-ups per system, figures meaningless");
    }
    println!(
        "Wake-up latency at the live bound, from the return to the waiter running (µs); \
         tokio multi-thread runtime, 2 workers; head start {HEAD_START:?}"
    );
    println!();
    println!("| system | p50 | p90 | p99 | p99.9 | max | samples | left out | allocs/round |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for (name, s) in names.iter().zip(&mut all) {
        s.ns.sort_unstable();
        let v = &s.ns;
        println!(
            "| {name} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {} | {} | {:.2} |",
            percentile(v, 0.50),
            percentile(v, 0.90),
            percentile(v, 0.99),
            percentile(v, 0.999),
            v.last().map_or(f64::NAN, |&m| m as f64 / 1000.0),
            v.len(),
            s.skipped,
            s.allocs as f64 / s.rounds.max(1) as f64,
        );
    }
}
