//! Updates of independent containers (each with its own pool) on one thread each: prints,
//! for 1 and then 2 writer threads, the wall time and the CPU time per update of each
//! thread (Linux's `/proc/thread-self/schedstat`: time on a CPU, not time waiting for one).
//!
//! ```text
//! cargo build --release -p poolswap-benches --example update_two
//! target/release/examples/update_two 2000000
//! target/release/examples/update_two 200000 --parked 64
//! target/release/examples/update_two 200000 --parked 64 --held-distinct 8
//! ```
//!
//! With `--parked K`, one writer instead, beside `K` other threads that have read its
//! container once and then wait, holding nothing: each reclamation pass scans their hazard
//! blocks (issue 19's `update/poolswap/t{2,64}` rows, outside criterion). With
//! `--held-distinct N` besides, each of them waits holding guards on `N` old versions that
//! no other thread holds (`K * N` distinct retired versions, all held; past a thread's
//! hazard slots its guards are counted): the `update-held/poolswap/distinct*` rows. Under
//! callgrind, the difference between the instruction counts of two runs over the
//! difference of their counts of updates is the instructions per update:
//!
//! ```text
//! valgrind --tool=callgrind --callgrind-out-file=a.out \
//!     target/release/examples/update_two 16384 --parked 1 --held-distinct 4096
//! valgrind --tool=callgrind --callgrind-out-file=b.out \
//!     target/release/examples/update_two 32768 --parked 1 --held-distinct 4096
//! # (total of b.out - total of a.out) / 16384, totals from `callgrind_annotate`
//! ```
//!
//! A pass finds those versions held and waits for as many retirements before the next
//! (`reclaim/retired.rs`), so a difference of counts spanning several passes (a multiple
//! of `K * N`) gives the amortised figure.
//!
//! On a machine whose cores other processes keep busy, `benches/read.rs`'s `update-two`
//! ratio measures the machine (two threads get no two free cores); the CPU time per update
//! does not: two writers that shared a line or a lock would each pay more per update than
//! one alone (a cache line moving between cores, a yield while the other's pass ends).

use std::hint::black_box;
use std::sync::{mpsc, Barrier};
use std::thread;
use std::time::Instant;

use poolswap::{Container, Pool};

/// This thread's time on a CPU so far, in ns; `None` off Linux.
fn cpu_ns() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    stat.split_whitespace().next()?.parse().ok()
}

/// `n` updates of `c`, out of line so that its code is the same in every build.
#[inline(never)]
fn updates(c: &Container<[u64; 8]>, n: u64) {
    for v in 0..n {
        let mut next = c.get_new();
        *next = [black_box(v); 8];
        c.update(next);
    }
}

/// `n` updates of `c`, timed: wall and CPU ns per update (CPU `NaN` off Linux).
fn timed_updates(c: &Container<[u64; 8]>, n: u64) -> (f64, f64) {
    let (cpu0, t0) = (cpu_ns(), Instant::now());
    updates(c, n);
    let wall = t0.elapsed().as_secs_f64() * 1e9 / n as f64;
    let cpu = match (cpu0, cpu_ns()) {
        (Some(a), Some(b)) => (b - a) as f64 / n as f64,
        _ => f64::NAN,
    };
    (wall, cpu)
}

/// Runs `threads` writers of `n` updates each, started together; prints their figures.
fn run(threads: usize, n: u64) {
    let pools: Vec<_> = (0..threads)
        .map(|_| Pool::new(|| [0u64; 8], |_: &mut [u64; 8]| true))
        .collect();
    let containers: Vec<_> = pools
        .iter()
        .map(|p| Container::from_value(p, [0; 8]))
        .collect();
    // A warm-up round, then the timed one.
    for c in &containers {
        updates(c, 10_000);
    }
    let start = Barrier::new(threads);
    let per_thread: Vec<(f64, f64)> = thread::scope(|s| {
        let handles: Vec<_> = containers
            .iter()
            .map(|c| {
                let start = &start;
                s.spawn(move || {
                    start.wait();
                    timed_updates(c, n)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for (i, (wall, cpu)) in per_thread.iter().enumerate() {
        println!(
            "{threads} writer(s), thread {i}: {wall:.1} ns wall, {cpu:.1} ns CPU per update ({} barrier mode)",
            barrier_mode()
        );
    }
}

/// One writer of `n` updates while `parked` other threads, registered as readers of its
/// container, wait holding guards on `held` old versions each, distinct (none if `held` is
/// 0); prints its figures. The versions are retired one at a time: each thread in turn
/// acquires one guard, then the writer updates.
fn run_parked(parked: usize, held: usize, n: u64) {
    let pool = Pool::new(|| [0u64; 8], |_: &mut [u64; 8]| true);
    let container = Container::from_value(&pool, [0; 8]);
    let step = Barrier::new(parked + 1);
    // Each thread's turn to acquire: the writer sends one message per guard.
    let (turns, turn_rx): (Vec<_>, Vec<_>) = (0..parked).map(|_| mpsc::channel()).unzip();
    let (acquired, acquired_rx) = mpsc::channel();
    thread::scope(|s| {
        for turn in turn_rx {
            let (container, step, acquired) = (&container, &step, acquired.clone());
            s.spawn(move || {
                drop(black_box(container.acquire()));
                let guards: Vec<_> = turn
                    .iter()
                    .take(held)
                    .map(|()| {
                        let guard = container.acquire();
                        acquired.send(()).unwrap();
                        guard
                    })
                    .collect();
                step.wait(); // registered, holding its guards
                step.wait(); // measured
                drop(guards);
            });
        }
        for round in 0..held * parked {
            turns[round % parked].send(()).unwrap();
            acquired_rx.recv().unwrap();
            updates(&container, 1);
        }
        step.wait();
        updates(&container, 10_000);
        let (wall, cpu) = timed_updates(&container, n);
        step.wait();
        println!(
            "1 writer, {parked} parked readers holding {held} distinct versions each: {wall:.1} ns wall, {cpu:.1} ns CPU per update ({} barrier mode)",
            barrier_mode()
        );
    });
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let number = |arg: &str| -> u64 {
        arg.parse()
            .unwrap_or_else(|_| panic!("expected a number, not {arg:?}"))
    };
    let n = args.first().map_or(1_000_000, |a| number(a));
    match args.get(1..) {
        Some([flag, k]) if flag == "--parked" => run_parked(number(k) as usize, 0, n),
        Some([flag, k, held, h]) if flag == "--parked" && held == "--held-distinct" => {
            run_parked(number(k) as usize, number(h) as usize, n)
        }
        Some([]) | None => {
            run(1, n);
            run(2, n);
        }
        Some(rest) => {
            panic!("usage: update_two [UPDATES] [--parked K [--held-distinct N]], not {rest:?}")
        }
    }
}

/// The barrier mode the process chose, for the printed figures (a crate-internal
/// diagnostic, not public API).
fn barrier_mode() -> &'static str {
    if poolswap::internals::membarrier() {
        "membarrier"
    } else {
        "fence"
    }
}
