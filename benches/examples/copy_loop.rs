//! `Recycled::copy_from` alone: two versions of a 100,000-entry
//! `HashMap<String, Vec<String>>` (keys like `key-0000123`, 3 strings of ~30 bytes per
//! value), each brought up to the other in turn after 10 overwrites and, with `churn`, 5
//! removals and 5 inserts of new keys: the copy an `rcu` makes into a version one update
//! behind. Prints the time per copy (p50, min) and the allocations of the copies after the
//! fourth; under callgrind, restricted to the copy, the instruction count per copy is the
//! difference between two runs' totals divided by the difference in copies:
//!
//! ```text
//! cargo build --release -p poolswap-benches --example copy_loop
//! target/release/examples/copy_loop same 20      # or: churn 20
//! valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//!     --toggle-collect='copy_loop::copy' target/release/examples/copy_loop churn 0  # then 9
//! ```

use std::collections::HashMap;
use std::time::Instant;

use poolswap::Recycled;

#[path = "../../tests/support/counting_alloc.rs"]
mod counting_alloc;

#[global_allocator]
static ALLOC: counting_alloc::Counting = counting_alloc::Counting;

type Map = HashMap<String, Vec<String>>;

/// Entries in the map.
const N: usize = 100_000;
/// Values overwritten per version (and, with `churn`, half as many keys replaced).
const CHANGED: usize = 10;

fn value(i: usize, version: usize) -> Vec<String> {
    (0..3)
        .map(|j| format!("backend-{j}-{version:08}-{i:010}.example"))
        .collect()
}

/// Out of line, for callgrind's `--toggle-collect`.
#[inline(never)]
fn copy(dst: &mut Recycled<Map>, src: &Map) {
    Recycled::copy_from(dst, src);
}

fn main() {
    let mut args = std::env::args().skip(1);
    let churn = match args.next().as_deref() {
        Some("churn") => true,
        Some("same") | None => false,
        Some(other) => panic!("mode: `same` or `churn`, not {other:?}"),
    };
    let copies: usize = args
        .next()
        .map_or(20, |a| a.parse().expect("copies: a number"));
    let mut newer = Recycled::new(
        (0..N)
            .map(|i| (format!("key-{i:07}"), value(i, 0)))
            .collect(),
    );
    let mut older = Recycled::<Map>::default();
    copy(&mut older, &newer);
    let (mut oldest, mut next_key) = (0, N);
    let mut ms = Vec::with_capacity(copies);
    let mut allocs = 0;
    for round in 0..copies {
        for j in 0..CHANGED {
            let i = (round * 7919 + j * 104_729) % N;
            if let Some(v) = newer.get_mut(&format!("key-{i:07}")) {
                v[0].clear();
                v[0].push_str(&format!("backend-0-{round:08}-{i:010}.example"));
            }
        }
        if churn {
            for _ in 0..CHANGED / 2 {
                newer.remove(&format!("key-{oldest:07}"));
                newer.insert(format!("key-{next_key:07}"), value(next_key, round));
                oldest += 1;
                next_key += 1;
            }
        }
        let before = counting_alloc::thread_allocs();
        let start = Instant::now();
        copy(&mut older, &newer);
        ms.push(start.elapsed().as_secs_f64() * 1e3);
        if round >= 4 {
            allocs += counting_alloc::thread_allocs() - before;
        }
        assert_eq!(*older, *newer, "the copy equals its source");
        std::mem::swap(&mut older, &mut newer);
    }
    ms.sort_by(f64::total_cmp);
    if let (Some(p50), Some(min)) = (ms.get(copies / 2), ms.first()) {
        println!(
            "{} keys, {copies} copies: p50 {p50:.2} ms, min {min:.2} ms; \
             allocations in copies after the fourth: {allocs}",
            if churn { "churned" } else { "same" }
        );
    }
}
