//! The fixed cost of a publish: a [`LogWriter`] over a 100,000-entry
//! `HashMap<String, Vec<String>>`, one overwrite per batch (k = 1), on one thread, with no
//! reader. Prints the time per append + publish (p50, p99); under callgrind, restricted to
//! the two calls, the instruction count per publish is the difference between two runs'
//! totals divided by the difference in publishes (building the map cancels out):
//!
//! ```text
//! cargo build --release --example publish_loop
//! POOLSWAP_BARRIER=fence target/release/examples/publish_loop 20000
//! POOLSWAP_BARRIER=fence valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//!     --toggle-collect='publish_loop::append' --toggle-collect='publish_loop::publish' \
//!     target/release/examples/publish_loop 0     # then 2000
//! ```
//!
//! The operations are made before the loop, so the count holds what the log does with them
//! (two applications each: each publish reclaims the version the last one retired and
//! writes it again; the third version stays idle), not their allocation.

use std::collections::HashMap;
use std::time::Instant;

use poolswap::log::{LogWriter, MapOp};

type Map = HashMap<String, Vec<String>>;
type Op = MapOp<String, Vec<String>>;

/// Entries in the map.
const N: usize = 100_000;
/// Publishes before the measured ones, so that every version exists and lags as it will.
const WARM_UP: usize = 100;

/// Out of line, for callgrind's `--toggle-collect`.
#[inline(never)]
fn append(w: &mut LogWriter<Map, Op>, op: Op) {
    w.append(op);
}

/// Out of line, for callgrind's `--toggle-collect`.
#[inline(never)]
fn publish(w: &mut LogWriter<Map, Op>) -> u64 {
    w.publish()
}

/// Three strings of about 30 bytes, as in `benches/delta.rs`.
fn value(i: usize, version: usize) -> Vec<String> {
    (0..3)
        .map(|j| format!("backend-{j}-{version:08}-{i:010}"))
        .collect()
}

fn main() {
    let rounds: usize = match std::env::args().nth(1) {
        Some(arg) => arg
            .parse()
            .unwrap_or_else(|_| panic!("publishes: a number, not {arg:?}")),
        None => 20_000,
    };
    let init: Map = (0..N)
        .map(|i| (format!("key-{i:07}"), value(i, 0)))
        .collect();
    let mut w = LogWriter::builder(init).versions(3).build();
    // Popped from the end: the overwrite of round r is at index `len - 1 - r`.
    let mut ops: Vec<Op> = (0..WARM_UP + rounds)
        .rev()
        .map(|r| {
            let i = r * 7919 % N;
            MapOp::Insert(format!("key-{i:07}"), value(i, r + 1))
        })
        .collect();
    for _ in 0..WARM_UP {
        append(&mut w, ops.pop().expect("made above"));
        publish(&mut w);
    }
    let mut ns = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let op = ops.pop().expect("made above");
        let start = Instant::now();
        append(&mut w, op);
        publish(&mut w);
        ns.push(start.elapsed().as_nanos());
    }
    ns.sort_unstable();
    if let (Some(p50), Some(p99)) = (ns.get(rounds / 2), ns.get(rounds * 99 / 100)) {
        println!("{rounds} publishes of 1 op into {N} entries: p50 {p50} ns, p99 {p99} ns");
    }
    let stats = w.stats();
    println!(
        "applied per op {:.2}, full copies {}",
        stats.applied as f64 / stats.appended.max(1) as f64,
        stats.full_syncs
    );
}
