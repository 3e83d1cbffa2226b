//! The pool's same-thread hit path alone: `get`, touch the object, drop, in a loop on one
//! thread. Prints the time per get + drop; under callgrind, the instruction count per
//! get + drop is the difference between two runs' totals divided by the difference in
//! iterations (start-up cancels out):
//!
//! ```text
//! cargo build --release -p poolswap-benches --example pool_loop
//! target/release/examples/pool_loop 200000000
//! valgrind --tool=callgrind --callgrind-out-file=/dev/null target/release/examples/pool_loop 1000000
//! valgrind --tool=callgrind --callgrind-out-file=/dev/null target/release/examples/pool_loop 2000000
//! ```
//!
//! Outside criterion, as `read_loop` is, so that callgrind's count does not include the
//! harness.

use std::hint::black_box;
use std::time::Instant;

use poolswap::Pool;

/// The loop, out of line so that its code is the same in every build of `main`.
#[inline(never)]
fn cycles(pool: &Pool<Vec<u8>>, n: usize) -> usize {
    let mut sum = 0;
    for _ in 0..n {
        let buf = pool.get();
        sum += black_box(&*buf).capacity();
    }
    sum
}

fn main() {
    let n: usize = match std::env::args().nth(1) {
        Some(arg) => arg
            .parse()
            .unwrap_or_else(|_| panic!("iterations: a number, not {arg:?}")),
        None => 10_000_000,
    };
    let pool = Pool::new(|| Vec::with_capacity(64), |v: &mut Vec<u8>| v.clear());
    drop(pool.get()); // the thread's first get registers it
    let start = Instant::now();
    let sum = cycles(&pool, n);
    let ns = start.elapsed().as_secs_f64() * 1e9 / n.max(1) as f64;
    assert_eq!(sum, 64 * n, "every get hands out the one buffer");
    println!(
        "{n} get + drop: {ns:.3} ns each ({} barrier mode, {} made)",
        barrier_mode(),
        pool.stats().created
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
