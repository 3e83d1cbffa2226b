//! # One write of the heavy-object benchmark, alone: clear a 100,000-entry map, refill it
//!
//! The heavy benchmark (`benches/heavy.rs`) spends nearly all of a write refilling a
//! `HashMap<&str, &str>` of 100,000 entries, and the Go original runs that workload faster
//! than this port. This bench asks how much of that is the map's hasher: Rust's `HashMap`
//! hashes with SipHash-1-3 by default (keyed, DoS-resistant), Go's map with an AES-based
//! hash where the CPU has AES instructions. One op clears a map pre-sized for 100,000
//! entries and inserts the same 100,000 keys as the heavy bench, with:
//!
//! - `std-siphash`: `std`'s default `RandomState`, as the heavy bench uses;
//! - `foldhash`: `foldhash::fast::RandomState`, a fast non-cryptographic hasher.
//!
//! The Go side of the same op is `compare/fill` (`go test -run '^$' -bench . -count 5` there).
//!
//! ```text
//! cargo bench -p poolswap-benches --bench fill
//! cargo bench -p poolswap-benches --bench fill -- --test  # smoke run
//! ```

use std::collections::HashMap;
use std::hash::BuildHasher;
use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};

#[path = "../tests/support/counting_alloc.rs"]
mod counting_alloc;
mod support;

use support::{entries, ENTRIES};

/// Times one clear + refill of a map built with hasher `S`.
fn refill<S: BuildHasher + Default>(c: &mut Criterion, name: &str) {
    let mut map: HashMap<&str, &str, S> = HashMap::with_capacity_and_hasher(ENTRIES, S::default());
    let entries = entries();
    c.benchmark_group("fill").bench_function(name, |b| {
        b.iter(|| {
            map.clear();
            for &(k, v) in entries {
                map.insert(k, v);
            }
            black_box(map.len())
        })
    });
}

fn fill(c: &mut Criterion) {
    refill::<std::hash::RandomState>(c, "std-siphash");
    refill::<foldhash::fast::RandomState>(c, "foldhash");
}

criterion_group! {
    name = benches;
    config = support::criterion();
    targets = fill
}
criterion_main!(benches);
