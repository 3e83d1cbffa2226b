//! The pool's producer -> consumer pipeline alone (`pool-pipeline-spin` in
//! `benches/pool.rs`, without criterion): a producer thread gets 4 KiB buffers 64 at a time
//! and hands each batch through a spinning queue of 4 batches to a consumer thread that
//! drops them. Prints the time per buffer of each of `rounds` rounds of `n` buffers, and
//! their minimum: on a shared VM the minimum of many short rounds moves less than one long
//! timing, so two builds compare best run alternately, each a few times:
//!
//! ```text
//! cargo build --release --example pipeline_loop
//! target/release/examples/pipeline_loop 2000000 5
//! ```

use std::thread;
use std::time::Instant;

use crossbeam_queue::ArrayQueue;
use poolswap::{Pool, Pooled};

/// Buffers per batch.
const BATCH: usize = 64;

/// A spinning wait's next step: `spin_loop` 64 times, then `yield_now` (the other thread
/// may share this CPU), as the bench's.
fn spin(spins: &mut u32) {
    *spins += 1;
    if *spins < 64 {
        std::hint::spin_loop();
    } else {
        thread::yield_now();
    }
}

/// One round: `n` buffers through the pipeline; returns ns per buffer.
fn round(pool: &Pool<Vec<u8>>, n: usize) -> f64 {
    let queue = ArrayQueue::<Vec<Pooled<'_, Vec<u8>>>>::new(4);
    let start = Instant::now();
    thread::scope(|s| {
        s.spawn(|| {
            let mut left = n;
            while left > 0 {
                let k = left.min(BATCH);
                let mut batch = Vec::with_capacity(BATCH);
                batch.extend((0..k).map(|_| pool.get()));
                let mut spins = 0;
                while let Err(back) = queue.push(batch) {
                    batch = back;
                    spin(&mut spins);
                }
                left -= k;
            }
        });
        s.spawn(|| {
            let mut left = n;
            let mut spins = 0;
            while left > 0 {
                match queue.pop() {
                    Some(batch) => {
                        left -= batch.len();
                        spins = 0;
                    }
                    None => spin(&mut spins),
                }
            }
        });
    });
    start.elapsed().as_secs_f64() * 1e9 / n.max(1) as f64
}

fn main() {
    let mut args = std::env::args().skip(1).map(|a| {
        a.parse::<usize>()
            .unwrap_or_else(|_| panic!("a number, not {a:?}"))
    });
    let n = args.next().unwrap_or(2_000_000);
    let rounds = args.next().unwrap_or(5);
    let pool = Pool::new(|| Vec::with_capacity(4096), |v: &mut Vec<u8>| v.clear());
    let times: Vec<f64> = (0..rounds).map(|_| round(&pool, n)).collect();
    let min = times.iter().copied().fold(f64::INFINITY, f64::min);
    let stats = pool.stats();
    println!(
        "min {min:.1} ns/buffer; rounds {times:.1?}; factory calls per get {:.6}",
        stats.created as f64 / (n * rounds) as f64
    );
}
