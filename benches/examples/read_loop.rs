//! The read path alone: `acquire`, read one field, drop, in a loop on one thread, with no
//! writer. Prints the time per read; under callgrind, the instruction count per read is
//! the difference between two runs' totals divided by the difference in reads (start-up
//! cancels out):
//!
//! ```text
//! cargo build --release -p poolswap-benches --example read_loop
//! target/release/examples/read_loop 200000000
//! valgrind --tool=callgrind --callgrind-out-file=/dev/null target/release/examples/read_loop 1000000
//! valgrind --tool=callgrind --callgrind-out-file=/dev/null target/release/examples/read_loop 2000000
//! ```
//!
//! Outside criterion, so the figure moves with code layout less than `benches/read.rs`'s
//! harness makes it move, and callgrind's count does not move at all.

use std::hint::black_box;
use std::time::Instant;

use poolswap::{Container, Pool};

/// The loop, out of line so that its code is the same in every build of `main`.
#[inline(never)]
fn reads(c: &Container<[u64; 8]>, n: usize) -> u64 {
    let mut sum = 0;
    for i in 0..n {
        sum += black_box(c.acquire()[i % 8]);
    }
    sum
}

fn main() {
    let n: usize = match std::env::args().nth(1) {
        Some(arg) => arg
            .parse()
            .unwrap_or_else(|_| panic!("reads: a number, not {arg:?}")),
        None => 10_000_000,
    };
    let pool = Pool::new(|| [0u64; 8], |_: &mut [u64; 8]| true);
    let container = Container::from_value(&pool, [1; 8]);
    let start = Instant::now();
    let sum = reads(&container, n);
    let ns = start.elapsed().as_secs_f64() * 1e9 / n.max(1) as f64;
    assert_eq!(sum, n as u64, "every read sees the one version");
    println!(
        "{n} reads: {ns:.3} ns per acquire + read + drop ({} barrier mode)",
        barrier_mode()
    );
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
