//! Zero allocations at steady state, across threads.
//!
//! One writer updates the container while reader threads acquire, read and drop guards, so
//! the last guard on an old version is often dropped on a reader's thread (a store), and
//! the writer's reclamations (at the threshold, or when `get_new` finds nothing idle) return
//! the object to the depot of the thread that published it. A counting global allocator
//! proves that, once the pool holds enough objects, neither `get_new`, `update` (and the
//! reclamations they run), `acquire` nor a guard's drop calls the allocator, and that the
//! factory is never called again.
//!
//! This file holds a single test: the allocator's counters are process-wide, and a second
//! test running beside it would allocate into them.

#[path = "support/counting_alloc.rs"]
mod counting_alloc;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed, Ordering::SeqCst};
use std::sync::Arc;
use std::thread;

use counting_alloc::{warm_parking_lot, Snapshot};
use poolswap::{Container, Guard, Pool};

/// Hazard slots per thread, as `Container::acquire`'s docs state it.
const HAZARD_SLOTS: usize = 128;

#[global_allocator]
static ALLOC: counting_alloc::Counting = counting_alloc::Counting;

const READERS: usize = 2;

#[test]
fn steady_state_updates_and_reads_allocate_nothing() {
    // Under Miri (1,000 + 200 updates took 114 s beside two spinning readers) fewer of
    // both: the working set is prefilled below, so the warm-up need not be long.
    let (warm_up, updates): (u64, usize) = if cfg!(miri) {
        (100, 100)
    } else {
        (1000, 100_000)
    };
    let made = Arc::new(AtomicUsize::new(0));
    let pool = {
        let made = made.clone();
        Pool::new(
            move || {
                made.fetch_add(1, Relaxed);
                Vec::<u64>::with_capacity(256)
            },
            |v| {
                v.clear();
                true
            },
        )
    };
    // At most this many objects are ever in use at once: the current version, the one the
    // writer is filling, and the retired ones: a `get_new` that finds nothing idle
    // reclaims only once the list holds twice the versions its last pass found held (one
    // per reader at most), so fewer than twice READERS. Prefill that many, so the test
    // does not depend on when (or whether) the readers first reach their worst case.
    let working_set = 1 + 2 * READERS + 1;
    pool.prefill(working_set);
    let mut version0 = pool.get();
    version0.push(0); // version 0, well formed: 1 + 0 % 8 copies of 0
    let c = Container::new(&pool, version0);

    let stop = AtomicBool::new(false);
    let reads = AtomicUsize::new(0);
    // Readers that have read once: each thread's first read registers its hazard slots
    // (a one-time allocation), which must fall before the measurement.
    let registered = AtomicUsize::new(0);
    let (allocated, warm) = thread::scope(|s| {
        for _ in 0..READERS {
            s.spawn(|| {
                warm_parking_lot();
                let mut last = 0;
                let mut n = 0usize;
                drop(c.acquire());
                registered.fetch_add(1, SeqCst);
                while !stop.load(Relaxed) {
                    let g = c.acquire();
                    // Versions only move forward: a reader never sees a recycled object
                    // (reset clears it) nor an older version after a newer one.
                    let v = *g.first().expect("a published version is never empty");
                    assert!(v >= last, "saw version {v} after {last}");
                    assert_eq!(g.len() as u64, 1 + v % 8, "version {v} is not whole");
                    last = v;
                    // Now and then hold two guards, so objects stay out across updates.
                    if n % 16 == 0 {
                        let again = Guard::clone(&g);
                        drop(g);
                        std::hint::black_box(&*again);
                    }
                    n += 1;
                }
                reads.fetch_add(n, Relaxed);
            });
        }

        let write = |v: u64| {
            let mut next = c.get_new();
            assert!(
                next.is_empty(),
                "get_new handed out an object that was not reset"
            );
            next.extend((0..=v % 8).map(|_| v)); // 1..=8 copies of v: no growth
            c.update(next);
        };
        // Warm-up: first use of the pool and of the lock library by this thread.
        warm_parking_lot();
        for v in 1..=warm_up {
            write(v);
        }
        while registered.load(SeqCst) < READERS {
            thread::yield_now();
        }
        // A reclamation copies the protected addresses into a buffer that it keeps, and
        // grows to the most it has seen at once (one-time growth, like a `Vec`'s): make
        // one pass see more than the readers can ever hold, this thread's every slot.
        {
            let held: Vec<_> = (0..HAZARD_SLOTS).map(|_| c.acquire()).collect();
            write(warm_up + 1);
            poolswap::reclaim();
            drop(held);
        }
        let warm = made.load(SeqCst);
        let before = Snapshot::now();
        for v in warm_up + 2..=(warm_up + 1 + updates as u64) {
            write(v);
        }
        let allocated = Snapshot::since(before);
        stop.store(true, Relaxed);
        (allocated, warm)
    });

    assert!(reads.load(Relaxed) > 0, "the readers never ran");
    assert_eq!(
        allocated,
        Snapshot::default(),
        "{updates} updates with concurrent readers allocated"
    );
    assert_eq!(made.load(SeqCst), warm, "the factory ran after warm-up");
    assert!(
        warm <= working_set + 1,
        "factory ran {warm} times for a working set of {working_set} (+1 initial)"
    );
}
