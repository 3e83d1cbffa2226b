//! The pool's producer -> consumer pipeline alone (`pool-pipeline-spin` in
//! `benches/pool.rs`, without criterion): a producer thread gets 4 KiB buffers 64 at a time
//! and hands each batch through a spinning queue of 4 batches to a consumer thread that
//! drops them.
//!
//! Each round runs `n` buffers through the pipeline once per system, the systems one after
//! the other: poolswap, opool, and two floors that pass plain 16- and 32-byte tokens with
//! no pool at all (what a pool that cost nothing would take: `Pooled` is 16 bytes, opool's
//! guard 32). On a shared VM the time of a round moves by 2-5x from one moment to the next
//! (with the two vCPUs' placement on the host, it seems), so systems compare within the
//! same round: the output gives each one's minimum and median over the rounds, and the
//! median of its per-round ratio to opool.
//!
//! ```text
//! cargo build --release -p poolswap-benches --example pipeline_loop
//! target/release/examples/pipeline_loop 1000000 15   # buffers per round, rounds
//! ```

use std::hint::black_box;
use std::thread;
use std::time::Instant;

use crossbeam_queue::ArrayQueue;
use opool::PoolAllocator;
use poolswap::Pool;

/// Buffers per batch.
const BATCH: usize = 64;
/// Buffers each pool may need at once: the queue's 4 batches, the one being filled and
/// the one being dropped, and a batch of slack (opool's capacity is fixed up front).
const OUT_AT_MOST: usize = 7 * BATCH;

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

/// One round of one system: `n` objects from `get` through the pipeline to `put`;
/// returns ns per object.
fn round<G: Send>(n: usize, get: impl Fn() -> G + Sync, put: impl Fn(G) + Sync) -> f64 {
    let queue = ArrayQueue::<Vec<G>>::new(4);
    let start = Instant::now();
    thread::scope(|s| {
        s.spawn(|| {
            let mut left = n;
            while left > 0 {
                let k = left.min(BATCH);
                let mut batch = Vec::with_capacity(BATCH);
                batch.extend((0..k).map(|_| get()));
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
                        batch.into_iter().for_each(&put);
                    }
                    None => spin(&mut spins),
                }
            }
        });
    });
    start.elapsed().as_secs_f64() * 1e9 / n.max(1) as f64
}

/// Makes opool's buffers.
struct Buffers;

impl PoolAllocator<Vec<u8>> for Buffers {
    fn allocate(&self) -> Vec<u8> {
        Vec::with_capacity(4096)
    }

    fn reset(&self, v: &mut Vec<u8>) {
        v.clear();
    }
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn main() {
    let mut args = std::env::args().skip(1).map(|a| {
        a.parse::<usize>()
            .unwrap_or_else(|_| panic!("a number, not {a:?}"))
    });
    let n = args.next().unwrap_or(1_000_000);
    let rounds = args.next().unwrap_or(15).max(1);
    let pool = Pool::new(|| Vec::with_capacity(4096), |v: &mut Vec<u8>| v.clear());
    let opool = opool::Pool::new(OUT_AT_MOST, Buffers);
    let names = ["poolswap", "opool", "floor-16B", "floor-32B"];
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); names.len()];
    for _ in 0..rounds {
        times[0].push(round(n, || pool.get(), drop));
        times[1].push(round(n, || opool.get(), drop));
        times[2].push(round(n, || black_box([0usize; 2]), drop));
        times[3].push(round(n, || black_box([0usize; 4]), drop));
    }
    println!("{n} buffers per round, {rounds} rounds; ns per buffer");
    println!("system       min    median  median of ratio to opool  rounds");
    for (name, t) in names.iter().zip(&times) {
        let min = t.iter().copied().fold(f64::INFINITY, f64::min);
        let ratio = median(t.iter().zip(&times[1]).map(|(a, o)| a / o).collect());
        println!(
            "{name:<11} {min:6.1} {:8.1}  {ratio:24.2}  {t:.1?}",
            median(t.clone())
        );
    }
    println!(
        "poolswap factory calls per get: {:.6}",
        pool.stats().created as f64 / (n * rounds) as f64
    );
}
