//! The floor under any cross-thread handoff on this machine: what it costs to move cache
//! lines between two threads, with no pool at all. Prints ns per object for three
//! patterns, so that a pool's `pool-pipeline-spin` figure (`benches/pool.rs`) can be read
//! as "so many lines moved per object":
//!
//! - `ping`: one line bounced between two threads, each waiting for the other's write:
//!   the latency of one transfer (half a round trip), nothing overlapped;
//! - `stream-1`: a producer writes one 64-byte line per object into a ring of 512 lines and
//!   a consumer reads each (its progress goes back once per 64 objects): one line moved
//!   per object, one way, as many in flight as the hardware allows;
//! - `stream-2`: the same ring, but the consumer also writes each line back (a ring line freed
//!   per object, as an `ArrayQueue` cell is): each line moves there and back.
//!
//! ```text
//! cargo run --release -p poolswap-benches --example line_floor   # 20M objects per pattern
//! cargo run --release -p poolswap-benches --example line_floor -- 2000000
//! ```
//!
//! Both threads spin (`spin_loop`, then `yield_now` after 64 tries), as `pool-pipeline-spin`
//! does. On a loaded machine the figures include preemptions: compare them only with
//! figures taken in the same minute.

use std::hint::spin_loop;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread;
use std::time::Instant;

/// Lines in the ring of the stream patterns.
const RING: usize = 512;
/// Objects per progress report of `stream-1`'s consumer.
const REPORT: u64 = 64;

/// One cache line: a sequence word and a payload.
#[repr(align(64))]
struct Line {
    seq: AtomicU64,
    payload: [AtomicU64; 7],
}

impl Line {
    fn new() -> Line {
        Line {
            seq: AtomicU64::new(0),
            payload: std::array::from_fn(|_| AtomicU64::new(0)),
        }
    }
}

/// A counter on a line of its own.
#[repr(align(128))]
struct Padded(AtomicU64);

/// Spins until `ready` returns true.
fn wait(mut ready: impl FnMut() -> bool) {
    let mut spins = 0u32;
    while !ready() {
        spins += 1;
        if spins < 64 {
            spin_loop();
        } else {
            thread::yield_now();
        }
    }
}

/// Half a round trip of one line, in ns.
fn ping(n: u64) -> f64 {
    let line = Padded(AtomicU64::new(0));
    let start = Instant::now();
    thread::scope(|s| {
        s.spawn(|| {
            for i in 0..n {
                // Acquire/Release: each side reads what the other wrote before its store.
                wait(|| line.0.load(Ordering::Acquire) == 2 * i + 1);
                line.0.store(2 * i + 2, Ordering::Release);
            }
        });
        for i in 0..n {
            line.0.store(2 * i + 1, Ordering::Release);
            wait(|| line.0.load(Ordering::Acquire) == 2 * i + 2);
        }
    });
    start.elapsed().as_nanos() as f64 / (2 * n) as f64
}

/// One line per object through a ring, in ns per object; `write_back`: the consumer frees
/// each line by writing it (`stream-2`) instead of reporting progress once per
/// `REPORT` objects (`stream-1`).
fn stream(n: u64, write_back: bool) -> f64 {
    let ring: Vec<Line> = (0..RING).map(|_| Line::new()).collect();
    let consumed = Padded(AtomicU64::new(0));
    let start = Instant::now();
    thread::scope(|s| {
        s.spawn(|| {
            let mut sum = 0u64;
            for i in 0..n {
                let line = &ring[i as usize % RING];
                // Acquire: the payload written before the producer's Release.
                wait(|| line.seq.load(Ordering::Acquire) == 2 * i + 1);
                sum = sum.wrapping_add(line.payload[0].load(Ordering::Relaxed));
                if write_back {
                    // Release: the producer may reuse the line once it reads this.
                    line.seq.store(2 * i + 2, Ordering::Release);
                } else if (i + 1) % REPORT == 0 {
                    // Release: as above, for the last `REPORT` lines.
                    consumed.0.store(i + 1, Ordering::Release);
                }
            }
            std::hint::black_box(sum);
        });
        for i in 0..n {
            let line = &ring[i as usize % RING];
            if i >= RING as u64 {
                let before = i - RING as u64;
                if write_back {
                    // Acquire: the consumer is done with the line.
                    wait(|| line.seq.load(Ordering::Acquire) == 2 * before + 2);
                } else {
                    // Acquire: as above.
                    wait(|| consumed.0.load(Ordering::Acquire) > before);
                }
            }
            for word in &line.payload {
                word.store(i, Ordering::Relaxed);
            }
            // Release: publishes the payload.
            line.seq.store(2 * i + 1, Ordering::Release);
        }
    });
    start.elapsed().as_nanos() as f64 / n as f64
}

fn main() {
    let n: u64 = match std::env::args().nth(1) {
        Some(arg) => arg
            .parse()
            .unwrap_or_else(|_| panic!("objects: a number, not {arg:?}")),
        None => 20_000_000,
    };
    println!("ping      {:6.1} ns per transfer", ping(n / 10));
    println!("stream-1  {:6.1} ns per object", stream(n, false));
    println!("stream-2  {:6.1} ns per object", stream(n, true));
}
