//! # Change notification against `tokio::sync::watch` (issue 36)
//!
//! `TASKS` tasks on a two-worker tokio runtime each hold a subscription and loop: wait for a
//! change, read the version (a timestamp), record how long ago it was published. A driver
//! on a plain thread publishes one version per round, once every task has recorded the
//! previous one and [`SETTLE`] has passed (so that each task is asleep again). Per system,
//! in the same run, rounds of the two systems alternating:
//!
//! | system | the wait | the publication |
//! |---|---|---|
//! | poolswap | `Subscriber::changed`, then `Subscriber::acquire` | `Container::update` of a pooled `u64` |
//! | watch | `Receiver::changed`, then `Receiver::borrow_and_update` | `Sender::send` |
//!
//! Reported, in microseconds:
//!
//! - *notify*: the publishing call's own duration (the update, the send), with every task
//!   asleep: the cost of one publication's notification of `TASKS` waiters (each waker's
//!   `wake`, the runtime's injection queue, the unpark of a sleeping worker), p50 and p99
//!   over the rounds;
//! - *wake-up*: from just before the publishing call to each task reading the version, p50
//!   and p99 over every task and round.
//!
//! Then, single-threaded, the cost of an `update` (a `get_new`, the fill, the `update`) on a
//! container nobody subscribed to, on one with a subscriber that is not waiting, and, as the
//! floor, the same `get_new` and fill with no publication, in ns per update, best of
//! [`UPDATE_REPEATS`] batches.
//!
//! ```text
//! # 1,000 tasks, 200 rounds per system
//! cargo bench -p poolswap-benches --features async --bench notify
//! # smoke run: figures meaningless
//! cargo bench -p poolswap-benches --features async --bench notify -- --test
//! NOTIFY_TASKS=100 NOTIFY_ROUNDS=50 cargo bench -p poolswap-benches --features async --bench notify
//! ```

use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use poolswap::{Container, Pool};
use tokio::sync::watch;

/// How long the driver waits after every task recorded a round before it publishes the next:
/// the tasks go back to sleep in a few microseconds.
const SETTLE: Duration = Duration::from_millis(2);

/// Batches of the single-threaded update rows; the best is reported.
const UPDATE_REPEATS: usize = 7;

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Nanoseconds since `base`.
fn since(base: Instant) -> u64 {
    u64::try_from(base.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

/// What the tasks of one system report.
struct Counters {
    /// Tasks that have recorded their reading of the current round.
    recorded: AtomicU64,
}

/// One round's figures.
#[derive(Default)]
struct Samples {
    notify_ns: Vec<u64>,
    wake_ns: Vec<u64>,
}

fn pct(sorted: &[u64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i] as f64 / 1_000.0
}

/// The driver's wait for every task's record of round `round`, then the settle.
fn await_round(counters: &Counters, tasks: usize, round: u64) {
    let target = tasks as u64 * round;
    while counters.recorded.load(SeqCst) < target {
        thread::yield_now();
    }
    thread::sleep(SETTLE);
}

struct PoolswapSystem {
    pool: Pool<u64>,
    container: Option<Arc<Container<u64>>>,
    counters: Arc<Counters>,
    tasks: Vec<tokio::task::JoinHandle<Vec<u64>>>,
}

impl PoolswapSystem {
    fn start(rt: &tokio::runtime::Runtime, tasks: usize, base: Instant) -> Self {
        let pool = Pool::new(|| 0u64, |n: &mut u64| *n = 0);
        let container = Arc::new(Container::from_value(&pool, 0));
        let counters = Arc::new(Counters {
            recorded: AtomicU64::new(0),
        });
        let handles = (0..tasks)
            .map(|_| {
                let mut sub = container.subscribe_owned();
                let counters = Arc::clone(&counters);
                rt.spawn(async move {
                    let mut wake = Vec::new();
                    while sub.changed().await.is_ok() {
                        let Ok(version) = sub.acquire() else { break };
                        wake.push(since(base).saturating_sub(*version));
                        drop(version);
                        counters.recorded.fetch_add(1, SeqCst);
                    }
                    wake
                })
            })
            .collect();
        PoolswapSystem {
            pool,
            container: Some(container),
            counters,
            tasks: handles,
        }
    }

    fn round(&self, round: u64, tasks: usize, base: Instant, out: &mut Samples) {
        let container = self.container.as_ref().unwrap();
        let mut next = container.get_new();
        let start = Instant::now();
        *next = since(base);
        container.update(next);
        out.notify_ns.push(start.elapsed().as_nanos() as u64);
        await_round(&self.counters, tasks, round);
    }

    fn finish(mut self, rt: &tokio::runtime::Runtime, out: &mut Samples) {
        drop(self.container.take()); // closes: every task's wait returns `Closed`
        for h in self.tasks {
            out.wake_ns.extend(rt.block_on(h).unwrap());
        }
        drop(self.pool);
    }
}

struct WatchSystem {
    tx: Option<watch::Sender<u64>>,
    counters: Arc<Counters>,
    tasks: Vec<tokio::task::JoinHandle<Vec<u64>>>,
}

impl WatchSystem {
    fn start(rt: &tokio::runtime::Runtime, tasks: usize, base: Instant) -> Self {
        let (tx, rx) = watch::channel(0u64);
        let counters = Arc::new(Counters {
            recorded: AtomicU64::new(0),
        });
        let handles = (0..tasks)
            .map(|_| {
                let mut rx = rx.clone();
                let counters = Arc::clone(&counters);
                rt.spawn(async move {
                    let mut wake = Vec::new();
                    while rx.changed().await.is_ok() {
                        let sent = *rx.borrow_and_update();
                        wake.push(since(base).saturating_sub(sent));
                        counters.recorded.fetch_add(1, SeqCst);
                    }
                    wake
                })
            })
            .collect();
        WatchSystem {
            tx: Some(tx),
            counters,
            tasks: handles,
        }
    }

    fn round(&self, round: u64, tasks: usize, base: Instant, out: &mut Samples) {
        let tx = self.tx.as_ref().unwrap();
        let start = Instant::now();
        tx.send(since(base)).unwrap();
        out.notify_ns.push(start.elapsed().as_nanos() as u64);
        await_round(&self.counters, tasks, round);
    }

    fn finish(mut self, rt: &tokio::runtime::Runtime, out: &mut Samples) {
        drop(self.tx.take());
        for h in self.tasks {
            out.wake_ns.extend(rt.block_on(h).unwrap());
        }
    }
}

/// ns per update of `updates` updates on `c` (a `get_new`, a store, an `update`; or, with
/// `publish` false, the `get_new` and store only), best of [`UPDATE_REPEATS`].
fn update_ns(c: &Container<u64>, updates: u64, publish: bool) -> f64 {
    (0..UPDATE_REPEATS)
        .map(|_| {
            let start = Instant::now();
            for i in 0..updates {
                let mut next = c.get_new();
                *next = std::hint::black_box(i);
                if publish {
                    c.update(next);
                } else {
                    drop(std::hint::black_box(next));
                }
            }
            start.elapsed().as_nanos() as f64 / updates as f64
        })
        .fold(f64::INFINITY, f64::min)
}

fn main() {
    let smoke = std::env::args().any(|a| a == "--test");
    let tasks = env("NOTIFY_TASKS", if smoke { 20 } else { 1_000 });
    let rounds = env("NOTIFY_ROUNDS", if smoke { 3 } else { 200 });
    let updates = env("NOTIFY_UPDATES", if smoke { 1_000 } else { 1_000_000 }) as u64;

    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .unwrap();
    let base = Instant::now();
    let poolswap = PoolswapSystem::start(&rt, tasks, base);
    let watch = WatchSystem::start(&rt, tasks, base);
    // Every task asleep before the first round.
    thread::sleep(SETTLE * 10);
    let (mut ps, mut wa) = (Samples::default(), Samples::default());
    for round in 1..=rounds as u64 {
        poolswap.round(round, tasks, base, &mut ps);
        watch.round(round, tasks, base, &mut wa);
    }
    poolswap.finish(&rt, &mut ps);
    watch.finish(&rt, &mut wa);
    drop(rt);

    println!("{tasks} tasks, {rounds} rounds per system, 2 tokio workers");
    println!(
        "| system | notify p50 µs | notify p99 µs | wake-up p50 µs | wake-up p99 µs | samples |"
    );
    println!("|---|---|---|---|---|---|");
    for (name, s) in [("poolswap Subscriber", &mut ps), ("tokio watch", &mut wa)] {
        s.notify_ns.sort_unstable();
        s.wake_ns.sort_unstable();
        assert_eq!(
            s.wake_ns.len(),
            tasks * rounds,
            "{name}: a wake-up was lost"
        );
        println!(
            "| {name} | {:.1} | {:.1} | {:.1} | {:.1} | {} |",
            pct(&s.notify_ns, 0.5),
            pct(&s.notify_ns, 0.99),
            pct(&s.wake_ns, 0.5),
            pct(&s.wake_ns, 0.99),
            s.wake_ns.len()
        );
    }

    // The update rows, single-threaded.
    let pool = Pool::new(|| 0u64, |n: &mut u64| *n = 0);
    let plain = Arc::new(Container::from_value(&pool, 0));
    let subscribed = Arc::new(Container::from_value(&pool, 0));
    let _sub = subscribed.subscribe();
    let mut rows = [
        ("get_new + fill, no update (floor)", &plain, false, f64::NAN),
        ("update, nobody subscribed", &plain, true, f64::NAN),
        (
            "update, one subscriber not waiting",
            &subscribed,
            true,
            f64::NAN,
        ),
    ];
    // Interleaved, so that a drift of the machine spreads over all rows.
    for _ in 0..3 {
        for row in &mut rows {
            let ns = update_ns(row.1, updates / 3 + 1, row.2);
            row.3 = row.3.min(ns); // `min` ignores the NaN of the first batch
        }
    }
    println!();
    println!("| update ({updates} per row, best batch) | ns per update |");
    println!("|---|---|");
    for (name, _, _, ns) in rows {
        println!("| {name} | {ns:.1} |");
    }
}
